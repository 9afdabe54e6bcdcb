import { z } from "zod";
import { toUserSentence, UserError } from "../../../errors.js";
import {
  gatherIncident,
  INCIDENT_LIST_SECTIONS,
  INCIDENT_WINDOWS,
  listIncidentSection,
} from "../../../services/incident.js";
import { incidentCard, incidentListMessage } from "../../blocks/incident.js";
import type { Reply } from "../../blocks/reply.js";
import { withShareButton } from "../../edge-commands/run.js";
import type { SlackEnv, Subcommand } from "../../edge-commands/types.js";
import { cardChartInput, deleteChartFile, postIncidentChart } from "../../incident-chart.js";
import { newRequestId } from "../../request-ids.js";
import { rerunCommand, sendReply } from "../commands/edge.js";
import { answerPrivately, onButton, replacedMessage, replaceMessage, staleButton } from "./context.js";

const zoneId = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const refreshValue = z.object({
  z: zoneId,
  w: z.enum(INCIDENT_WINDOWS),
  p: z.boolean().optional(),
  /** The chart file the card shows (a Slack file id). */
  f: z
    .string()
    .regex(/^F[A-Z0-9]{1,30}$/)
    .optional(),
});
export const incidentListValue = z.object({
  z: zoneId,
  w: z.enum(INCIDENT_WINDOWS),
  t: z.number().int().min(0),
  s: z.enum(INCIDENT_LIST_SECTIONS),
  pg: z.number().int().min(1).max(1_000_000),
  /** A page of a list shared in the channel: it pages in place, with no Share. */
  p: z.boolean().optional(),
});
type IncidentListValue = z.output<typeof incidentListValue>;
const wafValue = z.object({ z: zoneId, r: z.string().regex(/^[\w.:-]{1,100}$/) });

const STALE = staleButton("incident");

/**
 * Refresh: gather the picture again and replace the card with it. A new chart replaces the old one (the card
 * shows one picture); the old file is deleted once the card no longer shows it.
 */
export function incidentRefresh(env: SlackEnv) {
  return onButton(env, refreshValue, STALE, async (args, ctx, value) => {
    const replaced = await replacedMessage(args, ctx.logger, async () => {
      const picture = await gatherIncident(env.deps, ctx.teamId, value.z, value.w, ctx.channelId);
      const marks = await cardChartInput(
        env.deps,
        args.client,
        ctx.teamId,
        picture,
        ctx.channelId,
        ctx.logger,
      );
      const chart = await postIncidentChart(env.deps, args.client, picture, ctx.logger, marks);
      const card = incidentCard(picture, {
        isPublic: value.p === true,
        newRequestId,
        chart: "posted" in chart ? chart.posted : null,
      });
      return value.p ? card : withShareButton(card, `incident ${value.z} ${value.w}`);
    });
    if (replaced && value.f) await deleteChartFile(args.client, value.f, ctx.logger);
  });
}

/** One page of a card section's list; a private page offers to share itself. */
export async function incidentListPage(
  env: SlackEnv,
  teamId: string,
  value: IncidentListValue,
  channelId: string,
): Promise<Reply> {
  const page = await listIncidentSection(
    env.deps,
    teamId,
    { zoneId: value.z, window: value.w, to: value.t, section: value.s, page: value.pg },
    channelId,
  );
  const reply = incidentListMessage(value.z, page, value.s, value.p === true, newRequestId);
  return value.p ? reply : withShareButton(reply, { incidentList: { ...value, p: true } });
}

/**
 * "See all" on the card posts the section's first page privately (the card stays); Previous / Next on
 * that list replace it with another page.
 */
export function incidentList(env: SlackEnv, from: "card" | "list") {
  return onButton(env, incidentListValue, STALE, async (args, ctx, value) => {
    const build = () => incidentListPage(env, ctx.teamId, value, ctx.channelId);
    if (from === "list") return replaceMessage(args, ctx.logger, build);
    let reply: Reply;
    try {
      reply = await build();
    } catch (err) {
      if (!(err instanceof UserError)) ctx.logger.warn({ err }, "incident list failed");
      return answerPrivately(args, toUserSentence(err), ctx.logger);
    }
    await sendReply(args.respond, reply, false, undefined, ctx.logger);
  });
}

/** A triggered rule's AI recommendation: the `/edge waf` answer, privately, beside the card. */
export function incidentWafRecommendation(env: SlackEnv, subcommands: ReadonlyMap<string, Subcommand>) {
  return onButton(env, wafValue, STALE, async (args, ctx, value) => {
    const text = `waf ${value.z} ${value.r}`;
    const result = await rerunCommand(env, subcommands, { ...ctx, client: args.client }, text);
    if (!result.reply) return;
    await sendReply(args.respond, result.reply, false, result.shareable ? text : undefined, ctx.logger);
  });
}
