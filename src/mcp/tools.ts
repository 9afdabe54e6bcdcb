import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebClient } from "@slack/web-api";
import { z } from "zod";
import { reject } from "../changes/engine.js";
import { resolveChange } from "../changes/index.js";
import { toUserSentence, UserError } from "../errors.js";
import type { Logger } from "../log.js";
import { inSpan, markFailed } from "../ops/tracing.js";
import { listAppsPage, parseAppStatus } from "../services/apps.js";
import { readBotSettings } from "../services/bots-view.js";
import { edgeClientFor } from "../services/edge-access.js";
import { estimateImpact, impactTargetOf } from "../services/impact-preview.js";
import {
  gatherIncident,
  INCIDENT_WINDOWS,
  incidentRange,
  OFFENDER_DIMENSIONS,
  offendersSearch,
} from "../services/incident.js";
import { readZoneRateLimits } from "../services/rate-limits.js";
import { gatherTimeline } from "../services/timeline.js";
import { checkZones, MAX_CHECKED_ZONES } from "../services/unusual-zones.js";
import { resolveShieldZoneId, zoneDirectory } from "../services/zone-lookup.js";
import { requestWithCard } from "../slack/change-requests.js";
import { isChannelMember } from "../slack/channel-members.js";
import type { SlackEnv } from "../slack/edge-commands/types.js";
import { newRequestId } from "../slack/request-ids.js";
import { userChannelIds } from "../slack/user-channels.js";
import type { ChangeRequest } from "../store/index.js";
import { changeSchema, mapChange } from "./changes.js";
import type { AgentGate, AgentIdentity } from "./identity.js";

/**
 * The tools an agent may call. Each acts as the token's owner (checked again on every call) and calls the
 * domain; nothing here approves, rejects or applies a change: a proposal waits for people on its card.
 */
export interface ToolsContext {
  readonly env: SlackEnv;
  /** The token the agent presented (never logged). */
  readonly token: string | undefined;
  readonly gate: AgentGate;
  readonly logger: Logger;
}

const zoneArg = z
  .union([z.number().int().min(1), z.string().min(1).max(253)])
  .describe("The shield zone: its id (1234) or a domain it serves (shop.example.com).");
const windowArg = z
  .enum(INCIDENT_WINDOWS)
  .optional()
  .describe(`How far back to look: ${INCIDENT_WINDOWS.join(", ")} (default 15m; the timeline 24h).`);
const section = z.union([z.object({ ok: z.unknown() }), z.object({ error: z.string() })]);

/** JSON-safe: Maps as objects, Sets as arrays, nothing undefined. */
function plain(value: unknown): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(value, (_k, v: unknown) =>
      v instanceof Map ? Object.fromEntries(v) : v instanceof Set ? [...v] : v,
    ),
  ) as Record<string, unknown>;
}

const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(ms).toISOString());

/** The one way a tool answers: its data as structured content and as text; a refusal as an error result. */
async function answer<T extends Record<string, unknown>>(
  ctx: ToolsContext,
  tool: string,
  call: "read" | "propose",
  work: (who: AgentIdentity, client: WebClient) => Promise<T>,
) {
  // One trace per tool call, like a slash command's: its Edge calls, store transactions and moves inside.
  return inSpan(
    `mcp tool ${tool}`,
    { "mcp.tool": tool },
    async (span) => {
      try {
        const who = await ctx.gate.admit(ctx.token, call);
        span.setAttribute("slack.team.id", who.teamId);
        const client = await ctx.env.clientFor(who.teamId);
        const data = await work(who, client);
        return { content: [{ type: "text" as const, text: JSON.stringify(data) }], structuredContent: data };
      } catch (err) {
        if (!(err instanceof UserError)) ctx.logger.warn({ err, tool }, "an MCP tool failed");
        markFailed(span, err);
        return { isError: true, content: [{ type: "text" as const, text: toUserSentence(err) }] };
      }
    },
    { root: true },
  );
}

const zoneId = (ctx: ToolsContext, who: AgentIdentity, zone: number | string) =>
  resolveShieldZoneId(
    ctx.env.deps,
    who.teamId,
    typeof zone === "number" || /^\d+$/.test(zone)
      ? { kind: "id", id: Number(zone) }
      : { kind: "name", name: zone },
    'get_incident with {"zone": 1234}',
  );

/** A request as an agent reads it. */
function requestView(r: ChangeRequest) {
  const c = resolveChange(r);
  return {
    request_id: r.id,
    kind: r.kind,
    change: c ? c.kind.describe(c.params) : r.kind,
    channel_id: r.channelId,
    requester_id: r.requesterId,
    proposed_by_agent: r.proposedBy?.agent ?? null,
    state: r.state,
    approvals_needed: r.approvalsNeeded,
    approved_by: r.approvedBy,
    decided_by: r.decidedBy,
    decided_at: iso(r.decidedAt),
    expires_at: iso(r.expiresAt),
    created_at: iso(r.createdAt),
    last_error: r.lastError?.message ?? null,
  };
}

const requestShape = {
  request_id: z.string(),
  kind: z.string(),
  change: z.string(),
  channel_id: z.string(),
  requester_id: z.string(),
  proposed_by_agent: z.string().nullable(),
  state: z.string(),
  approvals_needed: z.number(),
  approved_by: z.array(z.string()),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  created_at: z.string().nullable(),
  last_error: z.string().nullable(),
};

/** The request, if the person may read it: theirs, or made in a channel they are a member of. */
async function visibleRequest(
  ctx: ToolsContext,
  who: AgentIdentity,
  client: WebClient,
  id: string,
): Promise<ChangeRequest> {
  const r = await ctx.env.deps.store.changeRequests.get(id);
  const visible =
    r !== undefined &&
    r.teamId === who.teamId &&
    (r.requesterId === who.userId ||
      (await isChannelMember(ctx.env.deps, client, who.teamId, r.channelId, who.userId)));
  if (!visible || !r)
    throw new UserError(
      "not_found",
      `There is no request ${id.slice(0, 40)} that you can see: list_requests shows those of your channels.`,
    );
  return r;
}

export function registerTools(server: McpServer, ctx: ToolsContext): void {
  const { deps } = ctx.env;

  server.registerTool(
    "list_zones",
    {
      title: "Shield zones",
      description:
        "The workspace's shield zones (WAF and DDoS) with their domains, optionally those whose domain or pull zone name contains `search`; the first ten are checked for unusual traffic right now (the same check as /edge zones). Start here to find a zone id.",
      inputSchema: {
        search: z.string().min(1).max(253).optional(),
        limit: z.number().int().min(1).max(100).optional(),
      },
      outputSchema: {
        zones: z.array(
          z.object({
            shield_zone_id: z.number(),
            pull_zone_id: z.number().nullable(),
            pull_zone_name: z.string().nullable(),
            hostnames: z.array(z.string()),
            traffic: z.string().describe("unusual, usual, or unknown (not checked or not readable)"),
          }),
        ),
        total: z.number(),
        complete: z.boolean(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ search, limit }) =>
      answer(ctx, "list_zones", "read", async (who) => {
        const directory = await zoneDirectory(deps, who.teamId);
        const needle = search?.toLowerCase();
        const matches = directory.zones.filter(
          (z) =>
            !needle ||
            z.hostnames.some((h) => h.toLowerCase().includes(needle)) ||
            (z.pullZoneName ?? "").toLowerCase().includes(needle),
        );
        const shown = matches.slice(0, limit ?? 20);
        const checks = await checkZones(
          deps,
          who.teamId,
          shown.slice(0, MAX_CHECKED_ZONES).map((z) => z.zone.shieldZoneId),
        ).catch(() => []);
        const verdict = new Map(checks.map((c) => [c.zoneId, c.state]));
        return {
          zones: shown.map((z) => ({
            shield_zone_id: z.zone.shieldZoneId,
            pull_zone_id: z.zone.pullZoneId ?? null,
            pull_zone_name: z.pullZoneName,
            hostnames: [...z.hostnames],
            traffic: verdict.get(z.zone.shieldZoneId) ?? "unknown",
          })),
          total: matches.length,
          complete: directory.complete,
        };
      }),
  );

  server.registerTool(
    "list_apps",
    {
      title: "Magic Containers applications",
      description:
        "Magic Containers applications with their status (active, deploying, failing, suspended, inactive, unknown), optionally only one status.",
      inputSchema: {
        status: z
          .string()
          .max(20)
          .optional()
          .describe("active, deploying, failing, suspended, inactive or unknown"),
        limit: z.number().int().min(1).max(1000).optional(),
      },
      outputSchema: {
        apps: z.array(z.object({ id: z.string(), name: z.string(), status: z.string() })),
        totals: z.record(z.string(), z.number()),
        total_items: z.number().nullable(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ status, limit }) =>
      answer(ctx, "list_apps", "read", async (who) => {
        const parsed = status === undefined ? undefined : parseAppStatus(status);
        if (status !== undefined && !parsed)
          throw new UserError(
            "usage",
            `"${status}" is not a status: use active, deploying, failing, suspended, inactive or unknown.`,
          );
        const page = await listAppsPage(await edgeClientFor(deps, who.teamId), {
          limit: limit ?? 20,
          ...(parsed ? { statuses: [parsed] } : {}),
        });
        return {
          apps: page.apps.map((a) => ({ id: a.id, name: a.name, status: a.status })),
          totals: plain(page.totals) as Record<string, number>,
          total_items: page.totalItems,
        };
      }),
  );

  server.registerTool(
    "get_incident",
    {
      title: "Incident picture of a zone",
      description:
        "The incident picture of one shield zone as data, the same model the /edge incident card draws: the zone's settings, traffic and threats against the window before, top offending IPs, ASNs, countries and JA4s, triggered WAF rules, rate-limit breaches, troubled apps, and what edgeops already blocks there. Each section is {ok: …} or {error: sentence}.",
      inputSchema: { zone: zoneArg, window: windowArg },
      outputSchema: {
        zone_id: z.number(),
        window: z.string(),
        range: z.record(z.string(), z.unknown()),
        zone: section,
        traffic: section,
        offenders: section,
        waf: section,
        rate_limits: section,
        apps: section,
        already_mitigated: z.record(z.string(), z.string()),
      },
      annotations: { readOnlyHint: true },
    },
    ({ zone, window }) =>
      answer(ctx, "get_incident", "read", async (who) => {
        const id = await zoneId(ctx, who, zone);
        const w = window ?? "15m";
        // No channel reads it as a card: requests waiting anywhere are not marked on it.
        const p = await gatherIncident(deps, who.teamId, id, w, null);
        const j = plain(p);
        return {
          zone_id: id,
          window: w,
          range: j.range as Record<string, unknown>,
          zone: j.zone as z.infer<typeof section>,
          traffic: j.traffic as z.infer<typeof section>,
          offenders: j.offenders as z.infer<typeof section>,
          waf: j.waf as z.infer<typeof section>,
          rate_limits: j.rateLimits as z.infer<typeof section>,
          apps: j.apps as z.infer<typeof section>,
          already_mitigated: j.mitigated as Record<string, string>,
        };
      }),
  );

  server.registerTool(
    "get_top_offenders",
    {
      title: "Top offenders",
      description:
        "The busiest sources in a zone's security event log for one dimension (ip, asn, country or ja4) over the window, with blocked / challenged / logged counts: what to consider blocking.",
      inputSchema: { zone: zoneArg, dimension: z.enum(OFFENDER_DIMENSIONS), window: windowArg },
      outputSchema: {
        zone_id: z.number(),
        dimension: z.string(),
        total: z.number().nullable(),
        offenders: z.array(z.record(z.string(), z.unknown())),
      },
      annotations: { readOnlyHint: true },
    },
    ({ zone, dimension, window }) =>
      answer(ctx, "get_top_offenders", "read", async (who) => {
        const id = await zoneId(ctx, who, zone);
        const range = incidentRange(window ?? "15m", deps.clock.now());
        const top = await offendersSearch(await edgeClientFor(deps, who.teamId), id, range, dimension);
        return {
          zone_id: id,
          dimension,
          total: top.total ?? null,
          offenders: top.offenders.map((o) => plain(o)),
        };
      }),
  );

  server.registerTool(
    "get_rate_limits",
    {
      title: "Rate limits of a zone",
      description:
        "A zone's rate-limit rules by name with their breaches over 28 days (null: unknown), busiest first.",
      inputSchema: { zone: zoneArg },
      outputSchema: {
        zone_id: z.number(),
        domain: z.string().nullable(),
        rules: z.array(
          z.object({ id: z.number(), name: z.string().nullable(), breaches: z.number().nullable() }),
        ),
        complete: z.boolean(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ zone }) =>
      answer(ctx, "get_rate_limits", "read", async (who) => {
        const r = await readZoneRateLimits(deps, who.teamId, await zoneId(ctx, who, zone));
        return { zone_id: r.zoneId, domain: r.domain, rules: r.rules, complete: r.complete };
      }),
  );

  server.registerTool(
    "get_bot_detection",
    {
      title: "Bot detection of a zone",
      description:
        "A zone's bot detection settings and each bot category's action (what bot_category proposals change).",
      inputSchema: { zone: zoneArg },
      outputSchema: {
        zone_id: z.number(),
        detection: z.record(z.string(), z.unknown()),
        categories: z.array(z.record(z.string(), z.unknown())),
      },
      annotations: { readOnlyHint: true },
    },
    ({ zone }) =>
      answer(ctx, "get_bot_detection", "read", async (who) => {
        const id = await zoneId(ctx, who, zone);
        const r = await readBotSettings(deps, who.teamId, id);
        return { zone_id: id, detection: plain(r.detection), categories: r.categories.map((c) => plain(c)) };
      }),
  );

  server.registerTool(
    "get_timeline",
    {
      title: "Timeline of a zone",
      description:
        "The story of an incident on one zone, oldest first: alerts, every change asked, approved, applied, undone or expired (who and when), what is still in force, and the peak per signal. Only changes of channels you are a member of are included.",
      inputSchema: { zone: zoneArg, window: windowArg },
      outputSchema: {
        zone_id: z.number(),
        window: z.string(),
        timeline: z.record(z.string(), z.unknown()),
        peaks: z.unknown(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ zone, window }) =>
      answer(ctx, "get_timeline", "read", async (who, client) => {
        const id = await zoneId(ctx, who, zone);
        const w = window ?? "24h";
        const channelIds = await userChannelIds(client, who.userId);
        const story = await gatherTimeline(deps, {
          teamId: who.teamId,
          zoneId: id,
          window: w,
          audience: { kind: "channels", channelIds },
        });
        return {
          zone_id: id,
          window: w,
          timeline: plain(story.timeline),
          peaks: plain({ p: story.peaks }).p ?? null,
        };
      }),
  );

  server.registerTool(
    "preview_impact",
    {
      title: "Impact preview of a change",
      description:
        "What a proposed block, challenge, DDoS sensitivity, WAF mode or bot category change would have touched in the zone's event log over the last hour (the preview the approval card shows). Read it before propose_change.",
      inputSchema: { change: changeSchema },
      outputSchema: { change: z.string(), preview: z.record(z.string(), z.unknown()) },
      annotations: { readOnlyHint: true },
    },
    ({ change }) =>
      answer(ctx, "preview_impact", "read", async (who) => {
        const mapped = await mapChange(deps, who.teamId, { channelId: "", userId: who.userId }, change);
        const target = impactTargetOf({ kind: mapped.kind.name, params: mapped.params });
        const describe = mapped.kind.describe(mapped.params) as string;
        if (!target)
          return {
            change: describe,
            preview: { state: "none", reason: "This kind of change has no impact preview." },
          };
        return { change: describe, preview: plain(await estimateImpact(deps, who.teamId, target)) };
      }),
  );

  server.registerTool(
    "list_requests",
    {
      title: "Change requests of your channels",
      description:
        "Change requests waiting for approval in the channels you are a member of (newest first), and the latest audit entries of those channels.",
      inputSchema: { limit: z.number().int().min(1).max(100).optional() },
      outputSchema: {
        pending: z.array(z.object(requestShape)),
        recent: z.array(
          z.object({
            at: z.string(),
            user_id: z.string(),
            action: z.string(),
            target: z.string(),
            outcome: z.string(),
          }),
        ),
      },
      annotations: { readOnlyHint: true },
    },
    ({ limit }) =>
      answer(ctx, "list_requests", "read", async (who, client) => {
        const channelIds = [...(await userChannelIds(client, who.userId))];
        const n = limit ?? 20;
        const [pending, recent] = await Promise.all([
          deps.store.changeRequests.listPending(who.teamId, { channelIds, limit: n, newestFirst: true }),
          deps.store.audit.list(who.teamId, n, { channelIds }),
        ]);
        return {
          pending: pending.map(requestView),
          recent: recent.map((a) => ({
            at: new Date(a.at).toISOString(),
            user_id: a.userId,
            action: a.action,
            target: a.target,
            outcome: a.outcome,
          })),
        };
      }),
  );

  server.registerTool(
    "propose_change",
    {
      title: "Propose a change for people to approve",
      description:
        "Propose a change (block / challenge / unblock an IP, range, ASN, country or JA4; DDoS sensitivity; WAF mode; bot category; learning mode; purge; restart) in a Slack channel you are a member of. It posts the usual approval card there, marked as proposed by this agent for you, with the impact preview and your reason, and returns the request id. Nothing changes until a person approves on the card: another person where approvals are required (you never approve your own), or one press where the channel's approvals are off. Follow it with get_change.",
      inputSchema: {
        change: changeSchema,
        channel: z
          .string()
          .regex(/^[CG][A-Z0-9]{2,30}$/, "a Slack channel id like C0123ABCD")
          .describe("The Slack channel id where the card is posted."),
        reason: z.string().min(3).max(1000).describe("Why: shown on the card to the people who decide."),
        duration_minutes: z
          .number()
          .int()
          .min(1)
          .max(24 * 60)
          .optional()
          .describe("A temporary change: undone this many minutes after it is applied (1 to 1440)."),
      },
      outputSchema: {
        outcome: z.string().describe("pending, already_pending or unchanged"),
        request_id: z.string().nullable(),
        message: z.string(),
      },
    },
    ({ change, channel, reason, duration_minutes }) =>
      answer(ctx, "propose_change", "propose", async (who, client) => {
        if (!(await isChannelMember(deps, client, who.teamId, channel, who.userId)))
          throw new UserError(
            "not_found",
            "You (this token's owner) are not a member of that channel, or edgeops can't see it: propose in a channel you are in.",
          );
        const mapped = await mapChange(deps, who.teamId, { channelId: channel, userId: who.userId }, change);
        const { outcome, failure } = await requestWithCard(
          ctx.env,
          client,
          ctx.logger,
          mapped.kind,
          {
            teamId: who.teamId,
            channelId: channel,
            userId: who.userId,
            params: mapped.params,
            requestId: newRequestId(),
            ...(duration_minutes !== undefined ? { temporaryMs: duration_minutes * 60_000 } : {}),
            proposedBy: { agent: who.name, agentId: who.tokenId, reason },
          },
          true,
        );
        if (failure) throw new UserError("slack", failure);
        const described = mapped.kind.describe(mapped.params) as string;
        switch (outcome.kind) {
          case "pending":
            return {
              outcome: "pending",
              request_id: outcome.request.id,
              message: `${described}: the card is posted and waits for a person's decision until ${iso(outcome.request.expiresAt)}.`,
            };
          case "already_pending": {
            const sees =
              outcome.request.requesterId === who.userId ||
              (await isChannelMember(deps, client, who.teamId, outcome.request.channelId, who.userId));
            return {
              outcome: "already_pending",
              request_id: sees ? outcome.request.id : null,
              message: `${described} is already waiting for approval${sees ? "" : " in a channel you are not in"}; no second request was made.`,
            };
          }
          case "unchanged":
            return {
              outcome: "unchanged",
              request_id: null,
              message: `${described} is already in force; nothing was asked.`,
            };
          default:
            return { outcome: outcome.kind, request_id: outcome.request.id, message: described };
        }
      }),
  );

  server.registerTool(
    "get_change",
    {
      title: "A change request's state",
      description:
        "A change request you can see: its state (pending, approved, applied, failed, rejected, expired, cancelled, undone …), who approved, and for an applied change what a fresh read of its target shows now (the read-back). Poll it after propose_change.",
      inputSchema: { request_id: z.string().min(10).max(40) },
      outputSchema: {
        ...requestShape,
        read_back: z
          .object({ value: z.string(), in_force: z.boolean() })
          .nullable()
          .describe(
            "Applied changes with a lasting target: the value read right now, and whether the change is in force.",
          ),
      },
      annotations: { readOnlyHint: true },
    },
    ({ request_id }) =>
      answer(ctx, "get_change", "read", async (who, client) => {
        const r = await visibleRequest(ctx, who, client, request_id);
        const c = resolveChange(r);
        let readBack: { value: string; in_force: boolean } | null = null;
        if (c?.kind.targetKey && r.state === "applied") {
          const scope = { teamId: r.teamId, channelId: r.channelId, userId: r.requesterId };
          const now = await c.kind.readCurrent(deps, scope, c.params);
          readBack = {
            value: c.kind.valueLabel ? c.kind.valueLabel(now) : JSON.stringify(now ?? null),
            in_force: c.kind.inForce(c.params, now),
          };
        }
        return { ...requestView(r), read_back: readBack };
      }),
  );

  server.registerTool(
    "withdraw_change",
    {
      title: "Withdraw your proposal",
      description:
        "Withdraw a request you (this token's owner) made, while it still waits for approval. It cannot approve, reject or apply anything.",
      inputSchema: { request_id: z.string().min(10).max(40) },
      outputSchema: requestShape,
      annotations: { destructiveHint: false },
    },
    ({ request_id }) =>
      answer(ctx, "withdraw_change", "read", async (who, client) => {
        const r = await visibleRequest(ctx, who, client, request_id);
        if (r.requesterId !== who.userId)
          throw new UserError(
            "usage",
            "Only the person who asked can withdraw a request; this one is someone else's.",
          );
        // As its requester, reject withdraws it; nobody is an approver here.
        const outcome = await reject(deps, {
          requestId: r.id,
          teamId: who.teamId,
          userId: who.userId,
          isApprover: async () => false,
        });
        if (outcome.kind !== "withdrawn")
          throw new UserError(
            "usage",
            `It is no longer waiting (${"request" in outcome ? outcome.request.state : "not found"}), so there is nothing to withdraw.`,
          );
        return requestView(outcome.request);
      }),
  );
}
