import { changesNothing } from "../../changes/engine.js";
import { type AccessBlockParams, accessBlockKind } from "../../changes/kinds/access-block.js";
import { usage } from "../../errors.js";
import { BLOCK_EXAMPLE, ENTRY_TYPE_WORDS, parseAccessEntry } from "../../services/access-entries.js";
import { edgeopsListName, listTurnedOff, readEntryState } from "../../services/access-lists.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { confirmChangeMessage } from "../blocks/approvals.js";
import { joinMrkdwn, mention, mrkdwn } from "../blocks/mrkdwn.js";
import { sentenceReply } from "../blocks/reply.js";
import { newChangeRequest } from "../request-ids.js";
import { noMoreArgs, parseTemporary, parseZoneRef, pickerBeforeWord, zoneFirst } from "./parse.js";
import type { CommandContext, Subcommand } from "./types.js";

const DOMAIN_EXAMPLE = "/edge block shop.example.com 203.0.113.7";
const UNBLOCK_EXAMPLE = "/edge unblock 1234 203.0.113.7";
const UNBLOCK_DOMAIN_EXAMPLE = "/edge unblock shop.example.com 203.0.113.7";

/** Parse `<zone> <entry> [challenge]`, read where the entry is now, and ask to confirm the change. */
async function askAccessChange(ctx: CommandContext, unblock: boolean) {
  const example = unblock ? UNBLOCK_EXAMPLE : BLOCK_EXAMPLE;
  const { args, temporaryMs } = parseTemporary(zoneFirst(ctx.args, isAccessEntry), example);
  const zone = parseZoneRef(args[0], example, unblock ? UNBLOCK_DOMAIN_EXAMPLE : DOMAIN_EXAMPLE);
  const entry = parseAccessEntry(args[1], unblock ? "unblock" : "block");
  let state: AccessBlockParams["state"] = unblock ? "none" : "block";
  if (!unblock && args[2] !== undefined) {
    const word = args[2].toLowerCase();
    if (word !== "challenge" && word !== "block")
      throw usage(
        `After what to block, only "challenge" may follow (a challenge instead of a block). For example: ${BLOCK_EXAMPLE} challenge for 30m`,
      );
    state = word;
  }
  noMoreArgs(args, unblock ? 2 : 3, example);
  const shieldZoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, example);
  const client = await edgeClientFor(ctx.env.deps, ctx.teamId);
  const current = await readEntryState(client, shieldZoneId, entry);
  const p: AccessBlockParams = { shieldZoneId, ...entry, state };
  const action = state === "none" ? undefined : state;
  const scope = { teamId: ctx.teamId, channelId: ctx.channelId, userId: ctx.userId };
  const nothing = await changesNothing(ctx.env.deps, accessBlockKind, scope, p, current);
  if (nothing && !action) {
    const what = `${ENTRY_TYPE_WORDS[entry.type].one} ${entry.value}`;
    const none = mrkdwn`Nothing to unblock: ${what} is in none of edgeops' block or challenge lists on shield zone ${shieldZoneId}.`;
    // But a block of it may be waiting for approval, which is what the person wants stopped.
    const waiting = await pendingAccessChanges(ctx, p);
    if (waiting.length === 0)
      return sentenceReply(
        mrkdwn`${none} edgeops lifts only what its own lists hold; a block made in the bunny.net dashboard is lifted there.`,
        ":information_source:",
      );
    const one = waiting.length === 1;
    const verbs = [...new Set(waiting.map((r) => r.params.state))].join(" or ");
    // Named only when asked in this channel: a request elsewhere (perhaps private) is only said to exist.
    const here = waiting.filter((r) => r.channelId === ctx.channelId);
    const elsewhere = waiting.length - here.length;
    const askers = joinMrkdwn(
      [
        ...[...new Set(here.map((r) => r.requesterId))].map(mention),
        ...(elsewhere > 0
          ? [mrkdwn`${elsewhere === 1 ? "someone" : `${elsewhere} requests`} in another channel`]
          : []),
      ],
      ", ",
    );
    return sentenceReply(
      mrkdwn`${none} ${one ? "A request" : `${waiting.length} requests`} to ${verbs} ${entry.value} on this zone ${one ? "is" : "are"} waiting for approval (asked by ${askers}): an approver can Reject ${one ? "it" : "them"} on the card, or the requester withdraw with Reject.`,
      ":information_source:",
    );
  }
  const off = action && (await listTurnedOff(client, shieldZoneId, entry.type, action));
  const all = off?.entryCount == null ? "every entry in it" : `all ${off.entryCount} entries in it`;
  const warning =
    action && off
      ? `edgeops' list "${edgeopsListName(entry.type, action)}" on this zone is ${off.isEnabled ? `no longer set to ${action}` : "turned off"} (someone changed it in the dashboard). Confirming turns it back on, and ${all} ${action === "block" ? "are blocked" : "are challenged"} again, not only ${entry.value}.`
      : undefined;
  return confirmChangeMessage(newChangeRequest(accessBlockKind, p, temporaryMs), current, warning, nothing);
}

/** Pending requests to block or challenge this very entry on this zone. */
async function pendingAccessChanges(ctx: CommandContext, p: AccessBlockParams) {
  const pending = await ctx.env.deps.store.changeRequests.listPending(ctx.teamId, {
    kind: accessBlockKind.name,
  });
  return pending.flatMap((r) => {
    const params = accessBlockKind.params.safeParse(r.params);
    return params.success &&
      params.data.shieldZoneId === p.shieldZoneId &&
      params.data.type === p.type &&
      params.data.value === p.value &&
      params.data.state !== "none"
      ? [{ requesterId: r.requesterId, channelId: r.channelId, params: params.data }]
      : [];
  });
}

/** What to block where the zone goes (`/edge block 203.0.113.7`); a number is always a zone id. */
function isAccessEntry(w: string): boolean {
  if (/^#?\d+$/.test(w)) return false;
  try {
    parseAccessEntry(w);
    return true;
  } catch {
    return false;
  }
}

const accessPicker = pickerBeforeWord("shield", isAccessEntry);

export const blockCommand: Subcommand = {
  name: "block",
  usage: "block <shieldZoneId|domain> <ip|cidr|AS123|country code|ja4> [challenge] [for 30m]",
  summary:
    "Ask to block (or challenge) an IP, IP range, ASN, country or JA4 fingerprint on a shield zone, through edgeops' own access lists (approval may be required).",
  examples: [
    BLOCK_EXAMPLE,
    "/edge block 1234 203.0.113.0/24 for 30m",
    "/edge block 1234 AS4134 challenge",
    "/edge block 1234 CN challenge for 2h",
    "/edge block 1234 t13d1516h2_8daaf6152771_b186095e22b6",
    DOMAIN_EXAMPLE,
  ],
  shareable: () => false,
  picker: accessPicker,
  run: (ctx) => askAccessChange(ctx, false),
};

export const unblockCommand: Subcommand = {
  name: "unblock",
  usage: "unblock <shieldZoneId|domain> <ip|cidr|AS123|country code|ja4> [for 30m]",
  summary:
    "Ask to take an IP, IP range, ASN, country or JA4 fingerprint out of edgeops' access lists (blocked or challenged).",
  examples: [UNBLOCK_EXAMPLE, "/edge unblock 1234 AS4134", UNBLOCK_DOMAIN_EXAMPLE],
  shareable: () => false,
  picker: accessPicker,
  run: (ctx) => askAccessChange(ctx, true),
};
