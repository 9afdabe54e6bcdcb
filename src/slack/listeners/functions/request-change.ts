import { z } from "zod";
import type { ChangeKind } from "../../../changes/index.js";
import { type AccessBlockParams, accessBlockKind } from "../../../changes/kinds/access-block.js";
import { type BotCategoryParams, botCategoryKind } from "../../../changes/kinds/bot-category.js";
import type { Deps } from "../../../deps.js";
import { toUserSentence } from "../../../errors.js";
import { parseAccessEntry } from "../../../services/access-entries.js";
import { parseAction, parseCategory } from "../../../services/bot-categories.js";
import { resolveShieldZoneId } from "../../../services/zone-lookup.js";
import { requestWithCard } from "../../change-requests.js";
import { parseZoneRef } from "../../edge-commands/parse.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { completeStep, settleStepsWaitingOn, stepRequestId } from "../../functions/completion.js";
import {
  CHANNEL_ID,
  clientIfMember,
  type FunctionArgs,
  finishNow,
  parseStepInputs,
  stepContext,
  userContext,
} from "./context.js";

/**
 * A step that asks for a change: the request goes through the same flow as a Confirm button (policy,
 * the approval card in the channel, approval by someone else, apply once, audit), and the step
 * completes only when the request settles (completion.ts), with its id and final state.
 */
export interface RequestStep<P> {
  // biome-ignore lint/suspicious/noExplicitAny: any kind's value type
  readonly kind: ChangeKind<P, any>;
  /** The change's parameters from the step's inputs; throws a UserError with a sentence. */
  parse(deps: Deps, teamId: string, inputs: unknown): Promise<P>;
}

const ZONE_EXAMPLE = "1234";
const DOMAIN_EXAMPLE = "shop.example.com";

/** Inputs every request step has: where the approval card goes and who asks. */
const whereAndWho = z.object({
  channel: z.string().regex(CHANNEL_ID),
  // Who ran the workflow: the requester, who can't approve their own request.
  requester: userContext,
  zone: z.string().trim().min(1).max(300),
});
const WHERE_AND_WHO_HELP = {
  channel:
    "Choose the channel where the approval request is posted (edgeops and the person who runs the workflow must be members of it; the stricter of the workspace's and the channel's approval policy applies).",
  requester:
    "The step did not get the person who ran the workflow from Slack: start the workflow from a person's action (a link trigger, a shortcut or a button in a message), then edit the step and publish the workflow again.",
  zone: `Give the step a shield zone: its id (e.g. ${ZONE_EXAMPLE}) or its domain (e.g. ${DOMAIN_EXAMPLE}).`,
};

async function zoneOf(deps: Deps, teamId: string, zone: string): Promise<number> {
  return resolveShieldZoneId(deps, teamId, parseZoneRef(zone, ZONE_EXAMPLE, DOMAIN_EXAMPLE), ZONE_EXAMPLE);
}

export const botCategoryStep: RequestStep<BotCategoryParams> = {
  kind: botCategoryKind,
  async parse(deps, teamId, inputs) {
    const i = parseStepInputs(
      whereAndWho.extend({ category: z.string().trim().min(1).max(40), action: z.string().trim().max(10) }),
      inputs,
      {
        ...WHERE_AND_WHO_HELP,
        category: "Give the bot category: seo, aiscraper, aitool, tool, ads, preview, social (or 1..7).",
        action: "Give the action: block, allow or clear.",
      },
    );
    const category = parseCategory(i.category);
    const action = parseAction(i.action);
    return { shieldZoneId: await zoneOf(deps, teamId, i.zone), category, action };
  },
};

export const accessBlockStep: RequestStep<AccessBlockParams> = {
  kind: accessBlockKind,
  async parse(deps, teamId, inputs) {
    const i = parseStepInputs(
      whereAndWho.extend({
        entry: z.string().trim().min(1).max(100),
        challenge: z.boolean().optional(),
      }),
      inputs,
      {
        ...WHERE_AND_WHO_HELP,
        entry:
          "Give what to block: an IP (203.0.113.7), an IP range (203.0.113.0/24), an ASN (AS4134), a country code (CN) or a JA4 fingerprint.",
        challenge: "Challenge is yes or no (a challenge instead of a block).",
      },
    );
    const entry = parseAccessEntry(i.entry);
    return {
      shieldZoneId: await zoneOf(deps, teamId, i.zone),
      ...entry,
      state: i.challenge ? "challenge" : "block",
    };
  },
};

const NOT_A_MEMBER =
  "The person who ran the workflow is not a member of the channel this step posts its approval request in, so nothing was asked: pick a channel they are in, or have them join it.";

/** The channel and requester, read again after the kind's own parse (which checked them). */
const target = z.object({ channel: z.string(), requester: userContext });

export function requestChangeStep<P>(env: SlackEnv, step: RequestStep<P>) {
  return async (args: FunctionArgs) => {
    const ctx = stepContext(env, args);
    let params: P;
    try {
      params = await step.parse(env.deps, ctx.teamId, args.inputs);
    } catch (err) {
      ctx.logger.info({ err }, "workflow step refused its inputs");
      return finishNow(args, ctx, { error: toUserSentence(err) });
    }
    const { channel, requester } = target.parse(args.inputs);
    // The workflow's author picked the channel: its policy is only for those who can post in it.
    const client = await clientIfMember(env, args, ctx, { channel, userId: requester.id }, NOT_A_MEMBER);
    if (!client) return;
    const requestId = stepRequestId(ctx.executionId);
    try {
      // Stored before the request exists, so that the request settling (at once, where no approval
      // is needed) finds the step waiting on it.
      await env.deps.store.functionExecutions.create({
        id: ctx.executionId,
        teamId: ctx.teamId,
        callbackId: ctx.callbackId,
        requestId,
        token: args.event.bot_access_token,
      });
    } catch (err) {
      ctx.logger.warn({ err }, "could not record the workflow step");
      return finishNow(args, ctx, { error: toUserSentence(err) });
    }
    try {
      const { outcome } = await requestWithCard(env, client, ctx.logger, step.kind, {
        teamId: ctx.teamId,
        channelId: channel,
        userId: requester.id,
        params,
        requestId,
        joinPending: false,
        strictPolicy: true,
      });
      ctx.logger.info({ requestId, outcome: outcome.kind }, "workflow step asked for a change");
      if (outcome.kind === "unchanged") {
        const change = step.kind.describe(params);
        await completeStep(env, ctx.executionId, {
          outputs: {
            final_state: "unchanged",
            summary: `${change}: already in force, nothing changed.`,
          },
        });
      } else if (outcome.kind === "duplicate") {
        // The same execution delivered again: complete it if its request settled meanwhile.
        await settleStepsWaitingOn(env, outcome.request);
      }
      // pending / unknown: completed when the request settles. applied / failed / a cancelled card:
      // already completed by the engine's observer.
    } catch (err) {
      ctx.logger.info({ err, requestId }, "workflow step's change request failed");
      await completeStep(env, ctx.executionId, { error: toUserSentence(err) }, ctx.logger);
    }
  };
}
