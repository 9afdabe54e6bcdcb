import { z } from "zod";
import { keepDrift } from "../../../alerts/drift.js";
import type { ChangeOutcome } from "../../../changes/engine.js";
import { toUserSentence } from "../../../errors.js";
import { edgeClientFor } from "../../../services/edge-access.js";
import { driftKeptMessage, driftPutBackAskedMessage, driftWatchGoneText } from "../../blocks/drift.js";
import type { SlackEnv } from "../../edge-commands/types.js";
import { ACTIONS } from "../../ids.js";
import { answerPrivately, type ButtonArgs, type ButtonContext, onButton, replaceClicked } from "./context.js";

const settingValue = z.union([
  z.number(),
  z.boolean(),
  z.null(),
  z.object({ enabled: z.boolean(), action: z.number().int() }),
]);
const keepValue = z.object({
  w: z.string().regex(/^[\w-]{1,64}$/),
  s: z.string().min(1).max(200),
  v: settingValue,
  c: z.string().max(300),
  n: z.number().int().min(0),
});

/** A Keep button's value, or undefined. */
function parseKeep(value: string): z.infer<typeof keepValue> | undefined {
  try {
    const parsed = keepValue.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The Keep value on a drift post's blocks (edgeops' own message), or undefined. */
function keepOnPost(blocks: unknown): z.infer<typeof keepValue> | undefined {
  if (!Array.isArray(blocks)) return undefined;
  for (const b of blocks as Array<{ elements?: Array<{ action_id?: string; value?: string }> }>)
    for (const e of b.elements ?? []) {
      if (e.action_id !== ACTIONS.driftKeep || typeof e.value !== "string") continue;
      return parseKeep(e.value);
    }
  return undefined;
}

/**
 * Put it back was pressed on a drift post and a request made: the post loses its buttons and says who asked.
 * Slack refusing is logged (the request and its card stand either way).
 */
export async function driftPutBackAsked(
  env: SlackEnv,
  args: ButtonArgs,
  ctx: ButtonContext,
  outcome: ChangeOutcome["kind"],
  /** Asked from the presser's own confirmation: the drift post (its ts in the channel) and its Keep value. */
  post?: { ts: string; keep: string },
): Promise<void> {
  const keep = post ? parseKeep(post.keep) : keepOnPost(args.body.message?.blocks);
  const watch = keep && (await env.deps.store.watches.get(keep.w));
  if (!keep || !watch) return;
  const asked = driftPutBackAskedMessage(
    watch,
    keep,
    ctx.userId,
    env.deps.clock.now(),
    outcome === "pending" || outcome === "already_pending"
      ? "pending"
      : outcome === "applied"
        ? "applied"
        : "other",
  );
  if (!post) return replaceClicked(args, asked, ctx.logger);
  await args.client.chat
    .update({ channel: ctx.channelId, ts: post.ts, text: asked.text, blocks: asked.blocks })
    .catch((err: unknown) => ctx.logger.warn({ err }, "could not update the drift post"));
}

/** Keep on a drift post: the new value becomes the watch's snapshot; the post says who kept it, without buttons. */
export function driftKeep(env: SlackEnv) {
  return onButton(
    env,
    keepValue,
    "That button is out of date: the watch posts the change again.",
    async (args, ctx, value) => {
      try {
        const kept = await keepDrift(env.deps, await edgeClientFor(env.deps, ctx.teamId), {
          actor: {
            teamId: ctx.teamId,
            userId: ctx.userId,
            isAdmin: () => env.admins.isAdmin(args.client, ctx.teamId, ctx.userId),
          },
          watchId: value.w,
          key: value.s,
          value: value.v,
          noticedAt: value.n,
        });
        if (kept.kind === "gone") return answerPrivately(args, driftWatchGoneText(), ctx.logger);
        if (kept.kind === "stale") return answerPrivately(args, kept.sentence, ctx.logger);
        await replaceClicked(
          args,
          driftKeptMessage(kept.watch, value, ctx.userId, env.deps.clock.now()),
          ctx.logger,
        );
      } catch (err) {
        ctx.logger.warn({ err }, "keeping a drifted setting failed");
        await answerPrivately(args, toUserSentence(err), ctx.logger);
      }
    },
  );
}
