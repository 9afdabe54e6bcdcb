import { requestChange } from "../../changes/engine.js";
import { policyWords } from "../../changes/index.js";
import { type PolicyParams, policyAfter, policyKind, policyLoosening } from "../../changes/kinds/policy.js";
import { durationMs } from "../../duration.js";
import { UserError, usage } from "../../errors.js";
import {
  type Approvers,
  type ChangeRequest,
  EVERY_CHANGE,
  MAX_APPROVALS_NEEDED,
  type PolicyPatch,
} from "../../store/index.js";
import { possibleApprovers } from "../approvers.js";
import { context, fields, section } from "../blocks/block-kit.js";
import { detailField } from "../blocks/change-details.js";
import { channel, mention, mrkdwn } from "../blocks/mrkdwn.js";
import { policyMessage } from "../blocks/policy.js";
import { type Reply, sentenceReply } from "../blocks/reply.js";
import { askerOf, postApprovalCard } from "../change-requests.js";
import { newRequestId } from "../request-ids.js";
import { echo } from "./parse.js";
import type { CommandContext, Subcommand } from "./types.js";

const EXAMPLES = [
  "/edge policy",
  "/edge policy approvals off here",
  "/edge policy approvals 2",
  "/edge policy approvals required for purge,restart",
  "/edge policy approvers @oncall-leads @alice",
  "/edge policy expiry 30m",
];
export const NOT_ADMIN_POLICY =
  "Only workspace admins can change the approval policy: ask an admin or owner.";

/** `<@U123>`, `<@U123|alice>`, `<!subteam^S123>`, `<!subteam^S123|@leads>` (Slack escapes mentions in command text). */
export function parseApprovers(words: readonly string[]): Approvers {
  if (words.length === 1 && words[0]?.toLowerCase() === "admins") return { kind: "admins" };
  if (words.some((w) => w.toLowerCase() === "admins"))
    throw usage(
      "Approvers are either the workspace admins or a list of people and groups, not both: /edge policy approvers admins, or /edge policy approvers @oncall-leads @alice",
    );
  const users: string[] = [];
  const usergroups: string[] = [];
  for (const w of words) {
    const user = /^<@([UW][A-Z0-9]+)(\|[^>]*)?>$/.exec(w);
    const group = /^<!subteam\^([A-Z0-9]+)(\|[^>]*)?>$/.exec(w);
    if (user?.[1]) users.push(user[1]);
    else if (group?.[1]) usergroups.push(group[1]);
    else
      throw usage(
        `"${echo(w)}" is not a person or a user group. Mention them so Slack links them, or say admins: /edge policy approvers @oncall-leads @alice`,
      );
  }
  if (users.length + usergroups.length === 0)
    throw usage(
      "Say who approves: /edge policy approvers admins, or /edge policy approvers @oncall-leads @alice",
    );
  return { kind: "list", users: [...new Set(users)], usergroups: [...new Set(usergroups)] };
}

/**
 * `for purge,restart` (change names or risk levels) after `approvals required|<n>`; nothing means every
 * change.
 */
function parseApprovalsFor(words: readonly string[]): string[] {
  if (words.length === 0) return [EVERY_CHANGE];
  const known = policyWords();
  const list = words[0]?.toLowerCase() === "for" ? words.slice(1).join(",") : "";
  const names = list
    .toLowerCase()
    .split(",")
    .map((w) => w.trim())
    .filter(Boolean);
  const unknown = names.filter((w) => !known.includes(w));
  if (names.length === 0 || unknown.length > 0)
    throw usage(
      `Approvals can apply to some changes only: ${known.join(", ")} (change names or risk levels). For example: /edge policy approvals required for purge,restart`,
    );
  return [...new Set(names)];
}

/** Requests expire no sooner than this: a shorter expiry leaves an approver no time to answer. */
export const MIN_EXPIRY_MINUTES = 5;
const MAX_EXPIRY_MINUTES = 7 * 24 * 60;
const EXPIRY_FORMS = `a duration from ${MIN_EXPIRY_MINUTES}m to 7d, like 30m, 2h, 1d or 1h30m. For example: /edge policy expiry 30m`;

/** How long a request waits for approval: a duration with its unit (a bare number says nothing of one). */
function parseExpiry(words: readonly string[]): number {
  const [word] = words;
  if (word === undefined || words.length > 1) throw usage(`Give the expiry as ${EXPIRY_FORMS}`);
  if (/^\d+$/.test(word))
    throw usage(
      `"${echo(word)}" has no unit: did you mean ${word}m (minutes)? Give the expiry as ${EXPIRY_FORMS}`,
    );
  const ms = durationMs(word, { days: true });
  if (Number.isNaN(ms)) throw usage(`"${echo(word)}" is not a duration. Give the expiry as ${EXPIRY_FORMS}`);
  const minutes = ms / 60_000;
  if (minutes < MIN_EXPIRY_MINUTES)
    throw usage(
      `${echo(word)} is too short for anyone to approve a request in. Give the expiry as ${EXPIRY_FORMS}`,
    );
  if (minutes > MAX_EXPIRY_MINUTES)
    throw usage(`${echo(word)} is longer than a week. Give the expiry as ${EXPIRY_FORMS}`);
  return minutes;
}

function parseChange(args: readonly string[]): { patch: PolicyPatch; here: boolean } | "reset" {
  const here = args[args.length - 1]?.toLowerCase() === "here";
  const words = here ? args.slice(0, -1) : args;
  const [what, ...rest] = words;
  switch (what?.toLowerCase()) {
    case "approvals": {
      const mode = rest[0]?.toLowerCase();
      const approvalsFor = parseApprovalsFor(rest.slice(1));
      if (mode === "off" && rest.length > 1)
        throw usage("Approvals off applies to every change: /edge policy approvals off here");
      if (mode && /^\d+$/.test(mode)) {
        const n = Number(mode);
        if (n < 1 || n > MAX_APPROVALS_NEEDED)
          throw usage(`A request can need 1 to ${MAX_APPROVALS_NEEDED} approvers: /edge policy approvals 2`);
        return { patch: { approvals: "required", approvalsNeeded: n, approvalsFor }, here };
      }
      if (mode !== "required" && mode !== "off")
        throw usage(
          "Approvals are required, off, or a number of approvers: /edge policy approvals off here, /edge policy approvals 2, /edge policy approvals required for purge,restart",
        );
      return { patch: mode === "off" ? { approvals: mode } : { approvals: mode, approvalsFor }, here };
    }
    case "approvers":
      return { patch: { approvers: parseApprovers(rest) }, here };
    case "expiry":
      return { patch: { expiryMinutes: parseExpiry(rest) }, here };
    case "reset":
      if (!here || rest.length > 0)
        throw usage("Reset removes this channel's overrides: /edge policy reset here");
      return "reset";
    default:
      throw usage(`Change approvals, approvers or expiry. For example: ${EXAMPLES.slice(1).join("  ·  ")}`);
  }
}

/**
 * A policy change that applied at once (tightening, or approvals off) is announced in the channel as
 * a loosening's card is: who changed what, and what it was before.
 */
async function announceInChannel(
  ctx: CommandContext,
  request: ChangeRequest,
  scope: string,
): Promise<boolean> {
  const params = policyKind.params.parse(request.params);
  const rows = policyKind.details(params, request.observed as Parameters<typeof policyKind.details>[1]);
  const title = mrkdwn`:scroll: ${mention(ctx.userId)} changed the approval policy for ${scope}.`;
  try {
    await ctx.client.chat.postMessage({
      channel: ctx.channelId,
      text: `The approval policy for ${scope} changed.`,
      blocks: [section(title), fields(rows.map(detailField))],
    });
    return true;
  } catch (err) {
    ctx.logger.warn({ err }, "could not announce a policy change in the channel");
    return false;
  }
}

/** Slack's error code for a failed Web API call, if it answered with one. */
const slackError = (err: unknown) => (err as { data?: { error?: string } }).data?.error;

/**
 * Every approver named must be a person (or group) Slack knows, and a request must be approvable: the
 * people other than the admin asking who could approve (the admins, or the named people and groups; in a
 * private channel, for its own rule, only its members) must be at least the number each request needs.
 */
async function checkApprovers(ctx: CommandContext, params: PolicyParams): Promise<void> {
  const set = params.set ?? {};
  if (
    set.approvers === undefined &&
    set.approvalsNeeded === undefined &&
    set.approvals !== "required" &&
    !params.reset
  )
    return;
  const named = set.approvers?.kind === "list" ? set.approvers : undefined;
  for (const user of named?.users ?? []) {
    const info = await ctx.client.users.info({ user }).catch((err: unknown) => {
      if (slackError(err) === "user_not_found") return undefined;
      throw err;
    });
    if (!info?.user || info.user.deleted)
      throw usage(
        `Slack knows no person ${user} in this workspace, so they could never approve. Mention people so Slack links them: /edge policy approvers @oncall-leads @alice`,
      );
    if (info.user.is_bot)
      throw usage(
        `${user} is a bot, and bots cannot approve. Name people: /edge policy approvers @alice @bob`,
      );
  }
  const after = await policyAfter(ctx.env.deps, ctx.teamId, params);
  if (after.approvals !== "required") return;
  // The workspace's rule holds in every channel, so no one channel's members narrow it.
  const pool = await possibleApprovers(
    ctx.env,
    ctx.client,
    ctx.teamId,
    after.approvers,
    params.channelId ?? undefined,
  );
  const unknownGroup = pool.unknownGroups.find((g) => named?.usergroups.includes(g));
  if (unknownGroup)
    throw usage(
      `Slack knows no user group ${unknownGroup} in this workspace, so its members could never approve. Mention the group so Slack links it: /edge policy approvers @oncall-leads`,
    );
  const others = [...pool.ids].filter((id) => id !== ctx.userId).length;
  const needed = after.approvalsNeeded;
  if (others >= needed) return;
  const each = `Each request would need ${needed} approver${needed === 1 ? "" : "s"}`;
  const who = `${after.approvers.kind === "admins" ? "the workspace admins and owners" : "the approvers named"}${pool.privateChannel ? " who are members of this private channel" : ""}`;
  if (!pool.complete)
    throw usage(
      `${each}, and Slack listed only ${others} ${others === 1 ? "person" : "people"} besides you who could approve (${who}); it did not list everyone, so I can't tell whether ${needed} could. Nothing changed: try again in a moment, or name approvers: /edge policy approvers @oncall-leads @alice`,
    );
  const ways = [
    pool.privateChannel ? "invite more approvers to this channel" : "",
    `name more approvers (/edge policy approvers @oncall-leads @alice${params.channelId ? " here" : ""})`,
    others > 0 ? `ask for fewer: /edge policy approvals ${others}${params.channelId ? " here" : ""}` : "",
  ].filter(Boolean);
  throw usage(
    `${each}, but only ${others} ${others === 1 ? "person" : "people"} besides you could approve (${who}), so no request of yours could ever be approved. Nothing changed. ${ways.join(", or ").replace(/^./, (c) => c.toUpperCase())}.`,
  );
}

/**
 * How many admins besides the asker the workspace has, where the channel's rule needs more than one
 * approval and Slack lists every admin: a policy request then needs no more than they can give, so a rule
 * nobody can meet can still be loosened. Not narrowed to this channel's members: asking in a small private
 * channel must not need fewer approvals than asking where the admins are. Undefined: the rule's own number.
 */
async function policyApproversReachable(ctx: CommandContext): Promise<number | undefined> {
  const current = await ctx.env.deps.store.policies.getEffective(ctx.teamId, ctx.channelId);
  if (current.approvals !== "required" || current.approvalsNeeded <= 1) return undefined;
  const pool = await possibleApprovers(ctx.env, ctx.client, ctx.teamId, { kind: "admins" });
  return pool.complete ? [...pool.ids].filter((id) => id !== ctx.userId).length : undefined;
}

/**
 * A policy change goes through the change state machine: tightening (or any change where approvals
 * are off) applies at once; loosening a policy that requires approvals posts a card for another admin.
 */
async function changePolicy(ctx: CommandContext): Promise<Reply> {
  const change = parseChange(ctx.args);
  if (!(await ctx.env.admins.isAdmin(ctx.client, ctx.teamId, ctx.userId)))
    throw new UserError("not_admin", NOT_ADMIN_POLICY);
  const { deps } = ctx.env;
  const here = change === "reset" || change.here;
  const params: PolicyParams =
    change === "reset"
      ? { channelId: ctx.channelId, reset: true }
      : { channelId: change.here ? ctx.channelId : null, set: change.patch };
  await checkApprovers(ctx, params);
  const approversReachable = await policyApproversReachable(ctx);
  const outcome = await requestChange(deps, policyKind, {
    teamId: ctx.teamId,
    channelId: ctx.channelId,
    userId: ctx.userId,
    params,
    requestId: newRequestId(),
    ...(approversReachable !== undefined ? { approversReachable } : {}),
  });
  const scope = here ? "this channel" : "the workspace";
  // Approvals off in one channel are off for every zone, for whoever can post there.
  const reach =
    change !== "reset" && change.here && change.patch.approvals === "off"
      ? " Approvals off here covers every zone, for anyone who can post in this channel (workflow steps that pick this channel keep the workspace's policy when it is stricter)."
      : "";
  let banner: string;
  switch (outcome.kind) {
    case "pending": {
      const reasons = await policyLoosening(deps, ctx.teamId, params).catch(() => []);
      const failure = await postApprovalCard(
        ctx.env,
        ctx.client,
        outcome.request,
        outcome.policy,
        ctx.logger,
      );
      if (failure) throw new UserError("slack", failure);
      const { approvalsNeeded } = outcome.request;
      const fewer =
        approvalsNeeded < outcome.policy.approvalsNeeded
          ? ` It needs ${approvalsNeeded} approval${approvalsNeeded === 1 ? "" : "s"}, not the policy's ${outcome.policy.approvalsNeeded}: the workspace has only ${approvalsNeeded} admin${approvalsNeeded === 1 ? "" : "s"} besides you.`
          : "";
      return sentenceReply(
        `This change ${reasons.join(" and ") || "loosens the policy"} while approvals are required, so another admin has to approve it: the request is posted in this channel.${fewer} Nothing changed yet.${reach}`,
        ":hourglass_flowing_sand:",
      );
    }
    case "unchanged":
      banner = `:information_source: The policy for ${scope} already says that; nothing changed.`;
      break;
    case "applied":
      banner = `:white_check_mark: Policy updated for ${scope}.${reach}`;
      if (!(await announceInChannel(ctx, outcome.request, scope)))
        banner +=
          " I could not post it in this channel (invite me with /invite @edgeops), so tell the channel yourself.";
      break;
    case "already_pending":
      return sentenceReply(
        mrkdwn`${askerOf(outcome.request, ctx.userId)} already asked for this policy change: it is waiting for another admin's approval in ${channel(outcome.request.channelId)}. Nothing changed yet.`,
        ":hourglass_flowing_sand:",
      );
    case "duplicate":
    case "already_set":
    case "failed":
    case "unknown":
      return sentenceReply(
        outcome.request.lastError?.message ?? "The policy change did not go through; try again.",
      );
  }
  const reply = policyMessage(
    await deps.store.policies.getEffective(ctx.teamId, ctx.channelId),
    ctx.channelId,
  );
  return { ...reply, blocks: [context(banner), ...reply.blocks] };
}

export const policyCommand: Subcommand = {
  name: "policy",
  usage:
    "policy [approvals required|off|<n> [for <changes>] | approvers admins|@group|@user … | expiry <30m|2h|1d>] [here]",
  summary:
    "The approval policy in force in this channel; admins change it for the workspace or, with `here`, this channel.",
  examples: EXAMPLES,
  shareable: (args) => args.length === 0,
  async run(ctx) {
    if (ctx.args.length === 0)
      return policyMessage(
        await ctx.env.deps.store.policies.getEffective(ctx.teamId, ctx.channelId),
        ctx.channelId,
      );
    return changePolicy(ctx);
  },
};
