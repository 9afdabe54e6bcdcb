import type { Button, KnownBlock, ModalView } from "@slack/types";
import { describeRequest, resolveChange } from "../../changes/index.js";
import { retryCanHelp } from "../../changes/retryable.js";
import { botCategoryActionLabel, botCategoryLabel } from "../../edge/schemas/shield.js";
import { impactTargetOf } from "../../services/impact-preview.js";
import type { ChangeRequest, EffectivePolicy, OtherRequest } from "../../store/index.js";
import { ACTIONS, VIEWS } from "../ids.js";
import { actions, button, confirmDialog, context, fields, header, section } from "./block-kit.js";
import { detailField } from "./change-details.js";
import { withImpactPreview } from "./impact-preview.js";
import {
  channel,
  dateToken,
  joinMrkdwn,
  type Mrkdwn,
  type MrkdwnInput,
  mention,
  mrkdwn,
  plainText,
  truncate,
  usergroup,
} from "./mrkdwn.js";
import { CONFIRMING, type Reply, reply } from "./reply.js";

export interface BotChangeValue {
  /** The request id this button creates: the same click delivered twice makes one request. */
  r: string;
  z: number;
  c: number;
  a: number;
}

const _actionWord = (a: number | null) => (a === null ? "unknown" : botCategoryActionLabel(a));

/**
 * Block / Allow / Clear for one category, each with a confirmation naming the zone, category and effect;
 * the one matching the category's current action (a no-op) is left out.
 */
export function categoryButtons(
  zoneId: number,
  category: number,
  newId: () => string,
  currentAction?: number,
): Button[] {
  const name = botCategoryLabel(category);
  const choices: { label: string; actionId: string; action: number; effect: string; style?: "danger" }[] = [
    {
      label: "Block",
      actionId: ACTIONS.botBlock,
      action: 1,
      effect: "their requests will be blocked.",
      style: "danger",
    },
    {
      label: "Allow",
      actionId: ACTIONS.botAllow,
      action: 2,
      effect: "their requests will always be let through.",
    },
    {
      label: "Clear",
      actionId: ACTIONS.botClear,
      action: 0,
      effect: "no category action; the zone's bot detection decides.",
    },
  ];
  return choices
    .filter((c) => c.action !== currentAction)
    .map(({ label, actionId, action, effect, style }) => {
      const value: BotChangeValue = { r: newId(), z: zoneId, c: category, a: action };
      const b = button(label, actionId, JSON.stringify(value), style);
      b.confirm = confirmDialog(
        `${label} ${name}?`,
        mrkdwn`*${label} ${name}* bots on shield zone ${zoneId}: ${effect}`,
        label,
        style === "danger" ? "danger" : "primary",
      );
      return b;
    });
}

/** What the Confirm button of a typed change carries (see listeners/actions/change-confirm.ts). */
export interface ChangeButtonValue {
  /** The request id this button creates: the same click delivered twice makes one request. */
  r: string;
  /** The change's kind and parameters. */
  k: string;
  p: unknown;
  /** Temporary: undone this many ms after it is applied. */
  t?: number;
  /**
   * Set on the Confirm of a button's own confirmation (the one shown where approvals would not follow):
   * confirmed with its impact seen, so it is asked now. `o`: the message whose button opened it (an alert's
   * or a drift post's, answered in its thread); `d`: that drift post's Keep value.
   */
  ok?: 1;
  o?: string;
  d?: string;
}

/**
 * The reply to a typed change command: typed text has no dialog, so ask again with Confirm / Cancel,
 * showing the value in force now where the kind has one. A change that would change nothing (engine's
 * changesNothing) is said as such, with no Confirm.
 */
export function confirmChangeMessage(
  value: ChangeButtonValue,
  current: unknown = null,
  /** What else confirming does, said before anyone confirms. */
  warning?: MrkdwnInput,
  changesNothing = false,
  /** A button's own confirmation: its Confirm carries the button's action id and value (see ChangeButtonValue.ok). */
  confirmButton: { actionId: string; value: string } = {
    actionId: ACTIONS.changeConfirm,
    value: JSON.stringify(value),
  },
): Reply {
  const resolved = resolveChange({ kind: value.k, params: value.p });
  const change = resolved ? resolved.kind.describe(resolved.params) : "This change";
  const details = resolved ? resolved.kind.details(resolved.params, current) : [];
  const temporary = value.t !== undefined ? ` for ${durationWords(value.t)}, then undone` : "";
  if (changesNothing) {
    const line = mrkdwn`:information_source: Nothing to confirm: *${change}* is already in force, so it would change nothing.`;
    const blocks: KnownBlock[] = [section(line)];
    if (details.length > 0) blocks.push(fields(details.map(detailField)));
    if (warning) blocks.push(section(mrkdwn`:warning: ${warning}`));
    return reply(line, blocks);
  }
  const blocks: KnownBlock[] = [section(mrkdwn`:question: *${change}${temporary}?*`)];
  if (details.length > 0) blocks.push(fields(details.map(detailField)));
  if (warning) blocks.push(section(mrkdwn`:warning: ${warning}`));
  blocks.push(
    actions(
      button("Confirm", confirmButton.actionId, confirmButton.value, "primary"),
      button("Cancel", ACTIONS.changeCancel, value.r),
    ),
  );
  const confirm = reply(`${change}${temporary}?`, blocks);
  const confirming = { requestId: value.r, kind: value.k, params: value.p };
  if (!resolved || !impactTargetOf(confirming)) return confirm;
  return { ...withImpactPreview(confirm, { state: "estimating" }), [CONFIRMING]: confirming };
}

const STATE_LINE: Record<ChangeRequest["state"], string> = {
  pending: ":hourglass_flowing_sand: Waiting for approval",
  approved: ":gear: Approved, applying…",
  applied: ":white_check_mark: Applied",
  undoing: ":leftwards_arrow_with_hook: Undoing…",
  undone: ":leftwards_arrow_with_hook: Undone",
  failed: ":x: Failed",
  rejected: ":no_entry_sign: Rejected",
  expired: ":alarm_clock: Expired",
  cancelled: ":heavy_multiplication_x: Cancelled",
};

/** Sent, but the answer was lost: the reconciler will say whether it took effect. */
const isCheckingOutcome = (r: ChangeRequest) => r.state === "approved" && r.lastError?.kind === "unknown";

/** The undo ran but left the setting alone: someone or something changed it since. */
const isUndoSkipped = (r: ChangeRequest) => r.state === "undone" && r.lastError?.kind === "changed_since";

function stateLine(r: ChangeRequest): string {
  if (isUndoSkipped(r)) return ":fast_forward: Undo skipped: left as it was";
  if (r.state === "cancelled" && r.reason?.kind === "withdrawn") return ":heavy_multiplication_x: Withdrawn";
  if (r.state === "cancelled" && r.note?.kind === "already_set") return ":pushpin: Not applied: already set";
  return isCheckingOutcome(r) ? ":mag: Not known yet, checking" : STATE_LINE[r.state];
}

/** "by @bob (the requester) with Undo now", "by edgeops at the end of its period". */
function undoneByWords(r: ChangeRequest): Mrkdwn {
  if (!r.undoneBy) return mrkdwn``;
  if (r.undoneBy === "system") return mrkdwn` by edgeops at the end of its period`;
  const who = r.undoneBy === r.requesterId ? "the requester" : "an approver";
  return mrkdwn` by ${mention(r.undoneBy)} (${who}) with Undo now`;
}

/** 90 minutes → "1 h 30 min". */
export function durationWords(ms: number): string {
  // Under a minute (a short watch interval), "0 min" would say nothing.
  if (ms < 59_500) return `${Math.max(1, Math.round(ms / 1000))} s`;
  const minutes = Math.round(ms / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return [h > 0 ? `${h} h` : "", m > 0 || h === 0 ? `${m} min` : ""].filter(Boolean).join(" ");
}

const askAgain = (r: ChangeRequest) => {
  const c = resolveChange(r);
  return c ? c.kind.askAgain(c.params) : "/edge help";
};

/** One sentence about where a request stands, for clicks on decided cards and repeated buttons. */
export function requestStateSentence(r: ChangeRequest): Mrkdwn {
  const change = describeRequest(r);
  const by = r.decidedBy ? mrkdwn` by ${mention(r.decidedBy)}` : mrkdwn``;
  switch (r.state) {
    case "pending":
      return mrkdwn`${change} is waiting for approval (expires ${new Date(r.expiresAt).toISOString().slice(11, 16)} UTC).`;
    case "approved":
      return isCheckingOutcome(r)
        ? mrkdwn`${change} was sent, but the Edge API did not answer in time: edgeops is checking whether it took effect.`
        : mrkdwn`${change} was approved${r.decidedBy ? by : " by someone"} and is being applied.`;
    case "applied":
      if (r.reason?.kind === "no_approval" && r.undoAt === null)
        return mrkdwn`${change} was already applied, ${withoutApproval(r)}.`;
      return r.undoAt === null
        ? mrkdwn`${change} was already approved${by} and applied.`
        : mrkdwn`${change} is applied until ${new Date(r.undoAt).toISOString().slice(11, 16)} UTC, then undone.`;
    case "undoing":
      return mrkdwn`${change} is being undone.`;
    case "undone":
      return r.lastError
        ? mrkdwn`${change}: ${r.lastError.message}`
        : mrkdwn`${change} was undone${undoneByWords(r)}.`;
    case "failed":
      return mrkdwn`${change} was approved but failed: ${r.lastError?.message ?? "unknown error"}`;
    case "rejected":
      return mrkdwn`${change} was rejected${by}.`;
    case "expired":
      return r.lastError
        ? mrkdwn`${change} failed and can no longer be retried: ${r.lastError.message}`
        : mrkdwn`${change} expired before anyone approved it. Ask again with ${askAgain(r)}.`;
    case "cancelled":
      if (r.reason?.kind === "withdrawn") return mrkdwn`${change} was withdrawn by its requester.`;
      if (r.note?.kind === "already_set") return mrkdwn`${change} was not applied: ${alreadySetWords(r)}`;
      return r.lastError
        ? mrkdwn`${change} was closed: ${r.lastError.message}`
        : mrkdwn`${change} was cancelled.`;
  }
}

/** "without approval (approvals off in #fast)": a change applied at once, nobody approved it. */
function withoutApproval(r: ChangeRequest): Mrkdwn {
  return r.reason?.kind === "no_approval" && r.reason.approvals === "not_covered"
    ? mrkdwn`without approval (${channel(r.channelId)}'s policy asks none for this change)`
    : mrkdwn`without approval (approvals off in ${channel(r.channelId)})`;
}

/** The public line in the channel for a change applied at once without a card: who did what, and why unapproved. */
export function appliedLine(r: ChangeRequest): Reply {
  const change = describeRequest(r);
  return reply(`${change}: applied`, [
    context(mrkdwn`:white_check_mark: ${mention(r.requesterId)} applied *${change}* ${withoutApproval(r)}.`),
  ]);
}

/**
 * What the requester is told in the card's thread once others decided their request: approved and
 * applied, failed, rejected (with the reason), expired, undone early by someone else's Undo now.
 * Undefined for every other move.
 */
export function requesterOutcome(r: ChangeRequest): Reply | undefined {
  const change = describeRequest(r);
  const you = mention(r.requesterId);
  // Undo now pressed by someone else (an approver): the requester did not see it coming, approvals or not.
  const undoer = r.undoneBy;
  if (r.state === "undone" && undoer && undoer !== "system" && undoer !== r.requesterId) {
    const line = r.lastError
      ? mrkdwn`:leftwards_arrow_with_hook: ${you} ${mention(undoer)} pressed Undo now on your change *${change}*. ${r.lastError.message}`
      : mrkdwn`:leftwards_arrow_with_hook: ${you} your change *${change}* was undone early by ${mention(undoer)} (Undo now).`;
    return reply(line, [section(line)]);
  }
  if (r.reason?.kind === "no_approval") return undefined;
  const approvers = r.approvedBy.length > 0 ? r.approvedBy : r.decidedBy ? [r.decidedBy] : [];
  const by = approvers.length > 0 ? mrkdwn` by ${joinMrkdwn(approvers.map(mention), ", ")}` : mrkdwn``;
  let line: Mrkdwn;
  if (r.state === "applied" && !r.undoneBy)
    line = mrkdwn`:white_check_mark: ${you} your request *${change}* was approved${by} and applied.`;
  else if (r.state === "failed")
    line = mrkdwn`:x: ${you} your request *${change}* was approved${by} but failed: ${r.lastError?.message ?? "unknown error"}`;
  else if (r.state === "rejected") {
    const why = r.reason?.kind === "rejected" && r.reason.text ? mrkdwn`: “${r.reason.text}”` : mrkdwn`.`;
    line = mrkdwn`:no_entry_sign: ${you} your request *${change}* was rejected${by}${why}`;
  } else if (r.state === "expired" && !r.lastError)
    line = mrkdwn`:alarm_clock: ${you} your request *${change}* expired before ${r.approvalsNeeded > 1 ? "enough approvers" : "an approver"} approved it. Ask again with ${askAgain(r)}.`;
  else return undefined;
  return reply(line, [section(line)]);
}

/** The longest reason a rejecter may give. */
export const REJECT_REASON_MAX = 500;

/** The rejecter's private answer: rejected, with a button to say why (shown on the card). */
export function rejectedAnswer(r: ChangeRequest): Reply {
  const line = mrkdwn`You rejected *${describeRequest(r)}*. Say why, if you like: the reason is shown on the card and to the requester.`;
  return reply(line, [section(line), actions(button("Add a reason", ACTIONS.rejectReason, r.id))]);
}

/** The modal where a rejecter types the reason. */
export function rejectReasonModal(r: ChangeRequest): ModalView {
  return {
    type: "modal",
    callback_id: VIEWS.rejectReason,
    private_metadata: r.id,
    title: plainText("Reason for rejecting"),
    submit: plainText("Save"),
    close: plainText("Cancel"),
    blocks: [
      section(mrkdwn`*${describeRequest(r)}*`),
      {
        type: "input",
        block_id: VIEWS.rejectReason,
        label: plainText("Why it was rejected"),
        element: {
          type: "plain_text_input",
          action_id: VIEWS.rejectReason,
          multiline: true,
          max_length: REJECT_REASON_MAX,
        },
      },
    ],
  };
}

/** At most this many admins named on a card. */
const MAX_NAMED = 10;

/** At most this many other requests named on a card. */
const MAX_NOTED = 5;

/** "@bob's request (Allow AI scraper on shield zone 1)" */
const otherRequest = (o: OtherRequest) =>
  mrkdwn`${mention(o.userId)}'s request (${o.change}${o.temporaryMs !== undefined ? ` for ${durationWords(o.temporaryMs)}` : ""})`;

/**
 * Another request named on this card only where everyone who reads the card may see it: asked in the same channel.
 * One from elsewhere (perhaps a private channel) is only said to exist, as the Home would.
 */
const sameChannel = (o: OtherRequest, r: ChangeRequest) => o.channelId === r.channelId;
const otherOrElsewhere = (o: OtherRequest, r: ChangeRequest) =>
  sameChannel(o, r) ? otherRequest(o) : mrkdwn`a request in another channel`;

/**
 * "shield zone 5 / DDoS sensitivity is already High, permanently, by @bob's request (…)": the request
 * that set it named only where it was asked in this card's channel.
 */
function alreadySetWords(r: ChangeRequest): Mrkdwn {
  if (r.note?.kind !== "already_set") return mrkdwn``;
  const { setting, value, by } = r.note;
  const who = by
    ? sameChannel(by, r)
      ? mrkdwn`, by ${otherRequest(by)}`
      : mrkdwn`, by another request`
    : mrkdwn` (set outside edgeops)`;
  return mrkdwn`${setting} is already ${value}, permanently${who}. This temporary change would have nothing to set and nothing to undo.`;
}

/** "Conflicts with …": requests waiting for the same target with another value. */
function conflictLine(r: ChangeRequest, others: readonly OtherRequest[]): Mrkdwn[] {
  if (others.length === 0) return [];
  const here = others.filter((o) => sameChannel(o, r));
  const elsewhere = others.length - here.length;
  const named = here.slice(0, MAX_NOTED).map((o) => mrkdwn`${otherRequest(o)}, waiting here`);
  const more = here.length - named.length;
  const parts = [
    ...named,
    ...(more > 0 ? [mrkdwn`${more} more here`] : []),
    ...(elsewhere > 0
      ? [mrkdwn`${elsewhere === 1 ? "a request" : `${elsewhere} requests`} waiting in another channel`]
      : []),
  ];
  return [
    mrkdwn`:warning: Conflicts with ${joinMrkdwn(parts, "; ")}. Whichever is approved first is applied; the other is then refused.`,
  ];
}

/**
 * Requests waiting for the same value on the same target, asked apart (for good and for a while): "A permanent
 * request for the same change waits: @bob's request (…)". Named only where asked in this card's channel.
 */
export function relatedLines(r: ChangeRequest): Mrkdwn[] {
  if (r.note?.kind !== "conflicts") return [];
  const same = [...new Map(r.note.with.filter((o) => o.sameValue).map((o) => [o.id, o])).values()];
  const which = (o: OtherRequest) =>
    o.temporaryMs !== undefined && r.undoAfterMs === null
      ? "A temporary"
      : o.temporaryMs === undefined && r.undoAfterMs !== null
        ? "A permanent"
        : "Another";
  const here = same.filter((o) => sameChannel(o, r));
  const elsewhere = same.length - here.length;
  return [
    ...here
      .slice(0, MAX_NOTED)
      .map((o) => mrkdwn`:link: ${which(o)} request for the same change waits: ${otherRequest(o)}, here.`),
    ...(here.length > MAX_NOTED
      ? [mrkdwn`:link: ${here.length - MAX_NOTED} more for the same change wait here.`]
      : []),
    ...(elsewhere > 0
      ? [
          mrkdwn`:link: ${elsewhere === 1 ? "A request" : `${elsewhere} requests`} for the same change ${elsewhere === 1 ? "waits" : "wait"} in another channel.`,
        ]
      : []),
  ];
}

/** What the card says about other requests for the same target. */
function noteLine(r: ChangeRequest): Mrkdwn | undefined {
  const note = r.note;
  if (!note) return undefined;
  switch (note.kind) {
    case "conflicts": {
      if (r.state !== "pending" || note.with.length === 0) return undefined;
      const unique = [...new Map(note.with.map((o) => [o.id, o])).values()];
      const lines = [
        ...relatedLines(r),
        ...conflictLine(
          r,
          unique.filter((o) => !o.sameValue),
        ),
      ];
      return lines.length > 0 ? joinMrkdwn(lines, "\n") : undefined;
    }
    case "kept":
      return note.until === null
        ? mrkdwn`:pushpin: Kept for good by ${otherOrElsewhere(note.by, r)}: this change will not be undone.`
        : mrkdwn`:pushpin: Kept by ${otherOrElsewhere(note.by, r)} until ${dateToken(note.until)}: this request's undo is cancelled; that request's undo puts back what was there before.`;
    case "already_set":
      return mrkdwn`:pushpin: Not applied: ${alreadySetWords(r)}`;
    case "superseded":
      return r.state === "applied" || r.state === "undone"
        ? mrkdwn`:twisted_rightwards_arrows: Superseded by ${otherOrElsewhere(note.by, r)}: it set this since, so this request's undo does not touch it.`
        : mrkdwn`:twisted_rightwards_arrows: Superseded by ${otherOrElsewhere(note.by, r)}, applied first: this request was not applied.`;
  }
}

/**
 * The one time a card names: the deadline for a decision while waiting, the end of a temporary change in force;
 * once decided, a request's expiry would read as the change's end.
 */
function timeField(r: ChangeRequest): Mrkdwn[] {
  if (r.state === "pending") return [mrkdwn`*Approve by*\n${dateToken(r.expiresAt)}`];
  if (r.state === "applied" && r.undoAt) return [mrkdwn`*Ends at*\n${dateToken(r.undoAt)}`];
  return [];
}

/**
 * The approval card everyone in the channel sees. Pending: Approve and Reject (each decides at the click).
 * Failed: the API's reason and Retry. Decided: who, when and the outcome, no buttons.
 */
/** An agent proposed it: which agent, for whom, and the reason it gave (its own words, escaped). */
function proposedByBlocks(r: ChangeRequest): KnownBlock[] {
  const p = r.proposedBy;
  if (!p) return [];
  return [
    section(
      mrkdwn`:robot_face: Proposed by agent *${p.agent}* for ${mention(r.requesterId)}. The agent's reason: ${truncate(p.reason, 1000)}`,
    ),
  ];
}

export function approvalCard(
  r: ChangeRequest,
  policy?: Pick<EffectivePolicy, "approvers">,
  /** The workspace's admins, named (and so notified) where they are the approvers. */
  admins: readonly string[] = [],
): Reply {
  const change = describeRequest(r);
  const resolved = resolveChange(r);
  const details = resolved ? resolved.kind.details(resolved.params, r.observed) : [];
  const blocks: KnownBlock[] = [
    header(r.state === "pending" ? `Approval needed: ${change}` : change),
    fields([
      mrkdwn`*Requested by*\n${mention(r.requesterId)}`,
      ...details.map(detailField),
      ...(r.undoAfterMs !== null ? [mrkdwn`*For*\n${durationWords(r.undoAfterMs)}, then undone`] : []),
      ...timeField(r),
      mrkdwn`*State*\n${stateLine(r)}`,
    ]),
    ...proposedByBlocks(r),
  ];
  const people = (ids: readonly string[]) => joinMrkdwn(ids.map(mention), ", ");
  const onePress = r.proposedBy?.onePress === true;
  if (r.state === "pending") {
    const named = admins.filter((id) => id !== r.requesterId);
    const adminWords =
      named.length === 0
        ? "workspace admins"
        : mrkdwn`workspace admins, ${people(named.slice(0, MAX_NAMED))}${named.length > MAX_NAMED ? ` and ${named.length - MAX_NAMED} more` : ""}`;
    const who =
      resolved?.kind.approvers === "admins"
        ? adminWords
        : policy
          ? policy.approvers.kind === "admins"
            ? adminWords
            : joinMrkdwn(
                [...policy.approvers.users.map(mention), ...policy.approvers.usergroups.map(usergroup)],
                ", ",
              )
          : undefined;
    if (onePress)
      blocks.push(
        context(
          mrkdwn`Approvals are off here, but an agent proposed this: it applies only once a person presses Confirm (${mention(r.requesterId)}, or an approver). Reject withdraws it.`,
        ),
      );
    else if (who)
      blocks.push(
        context(mrkdwn`Approvers: ${who} (not the requester, who can withdraw the request with Reject).`),
      );
    const noted = noteLine(r);
    if (noted) blocks.push(section(noted));
    if (r.approvalsNeeded > 1) {
      const so = r.approvedBy.length > 0 ? mrkdwn`: ${people(r.approvedBy)}` : "";
      blocks.push(
        context(
          mrkdwn`:busts_in_silhouette: Approved by ${r.approvedBy.length} of ${r.approvalsNeeded}${so} · ${r.approvalsNeeded - r.approvedBy.length} more needed.`,
        ),
      );
    }
    if (r.lastError?.kind === "approvals_dropped")
      blocks.push(context(mrkdwn`:warning: ${r.lastError.message}`));
    // No confirmation dialog: Block Kit would show it to every clicker, so a non-approver would be asked
    // "approve?" before being refused. The card is what an approver confirms; a non-approver's click is
    // refused at once.
    blocks.push(
      actions(
        button(onePress ? "Confirm" : "Approve", ACTIONS.approve, r.id, "primary"),
        button("Reject", ACTIONS.reject, r.id, "danger"),
      ),
    );
  } else {
    const approvers = r.approvedBy.length > 0 ? r.approvedBy : r.decidedBy ? [r.decidedBy] : [];
    const by = approvers.length > 0 ? people(approvers) : "edgeops";
    const when = r.decidedAt ? dateToken(r.decidedAt) : "";
    const verb =
      r.state === "rejected"
        ? "Rejected"
        : r.state === "expired"
          ? "Expired"
          : r.state === "cancelled" && r.note?.kind !== "already_set"
            ? r.reason?.kind === "withdrawn"
              ? "Withdrawn"
              : "Cancelled"
            : "Approved";
    blocks.push(
      context(
        r.reason?.kind === "no_approval" && approvers.length === 0
          ? when
            ? mrkdwn`Applied ${withoutApproval(r)} ${when}`
            : mrkdwn`Applied ${withoutApproval(r)}`
          : r.state === "expired" && !r.lastError
            ? r.approvedBy.length > 0
              ? mrkdwn`Expired ${when} with ${r.approvedBy.length} of ${r.approvalsNeeded} approvals (${people(r.approvedBy)}): not enough approvers in time.`
              : mrkdwn`Expired ${when} without a decision.`
            : when
              ? mrkdwn`${verb} by ${by} ${when}`
              : mrkdwn`${verb} by ${by}`,
      ),
    );
    if (r.state === "rejected" && r.reason?.kind === "rejected" && r.reason.text)
      blocks.push(section(mrkdwn`*Reason:* ${r.reason.text}`));
    if (isCheckingOutcome(r)) blocks.push(section(mrkdwn`:mag: ${r.lastError?.message ?? ""}`));
    if (r.state === "failed") {
      blocks.push(
        section(mrkdwn`:x: *The change did not go through:* ${r.lastError?.message ?? "unknown error"}`),
      );
      if (retryCanHelp(r.lastError)) blocks.push(actions(button("Retry", ACTIONS.retry, r.id)));
      else
        blocks.push(
          context(
            mrkdwn`Retrying would fail the same way: once it is put right, ask again with ${askAgain(r)}.`,
          ),
        );
    }
    if ((r.state === "expired" || r.state === "cancelled") && r.lastError)
      blocks.push(section(mrkdwn`:heavy_multiplication_x: ${r.lastError.message}`));
    if (r.state === "applied") blocks.push(context(mrkdwn`:white_check_mark: ${change} is in effect.`));
    const noted = noteLine(r);
    if (noted) blocks.push(section(noted));
    if (r.lastError && (r.state === "applied" || r.state === "undone"))
      blocks.push(section(mrkdwn`:warning: ${r.lastError.message}`));
    if (r.state === "applied" && r.undoAt !== null) {
      const undo = button("Undo now", ACTIONS.undo, r.id);
      undo.confirm = confirmDialog(
        "Undo this change now?",
        mrkdwn`*${change}* will be undone: the setting goes back to what it was before.`,
        "Undo now",
        "primary",
      );
      blocks.push(
        context(mrkdwn`:hourglass: Temporary: undone automatically ${dateToken(r.undoAt)}.`),
        actions(undo),
      );
    }
    // "no_effect": put back, though the zone ignores it for now (a WAF mode while the WAF is off).
    if (r.state === "undone" && (!r.lastError || r.lastError.kind === "no_effect"))
      blocks.push(
        context(
          mrkdwn`:leftwards_arrow_with_hook: Undone${undoneByWords(r)} ${dateToken(r.updatedAt)}: the previous setting is back.`,
        ),
      );
    if (isUndoSkipped(r))
      blocks.push(context(mrkdwn`:fast_forward: Undo skipped${undoneByWords(r)} ${dateToken(r.updatedAt)}.`));
  }
  const summary = stateLine(r).replace(/^:[a-z_]+: /, "");
  return reply(`${change}: ${summary}`, blocks);
}
