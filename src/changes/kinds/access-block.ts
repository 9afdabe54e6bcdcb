import { z } from "zod";
import {
  ACCESS_ENTRY_TYPES,
  accessEntryOf,
  ENTRY_TYPE_WORDS,
  nonInternetAddress,
} from "../../services/access-entries.js";
import { type EntryState, readEntryState, setEntryState } from "../../services/access-lists.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { moved } from "../details.js";
import type { ChangeKind } from "../kind.js";

export const ENTRY_STATES = ["block", "challenge", "none"] as const;

export const accessBlockParams = z
  .object({
    shieldZoneId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    type: z.enum(ACCESS_ENTRY_TYPES),
    /** The entry in its canonical spelling (services/access-entries.ts). */
    value: z.string().max(100),
    /** Where the entry should be: blocked, challenged, or in none of edgeops' lists (unblock). */
    state: z.enum(ENTRY_STATES),
  })
  .refine((p) => accessEntryOf(p.value, p.type)?.value === p.value, {
    message: "not a canonical entry of its type",
  });
export type AccessBlockParams = z.output<typeof accessBlockParams>;

const STATE_WORDS: Record<EntryState, string> = {
  block: "blocked",
  challenge: "challenged",
  none: "not listed by edgeops",
};
const VERBS: Record<EntryState, string> = { block: "Block", challenge: "Challenge", none: "Unblock" };

const stateWord = (s: EntryState | null) => (s === null ? "unknown" : STATE_WORDS[s]);
const isState = (v: unknown): v is EntryState => (ENTRY_STATES as readonly unknown[]).includes(v);

/**
 * Block or challenge an IP, IP range, ASN, country or JA4 fingerprint on a shield zone, or lift that
 * (unblock), through edgeops' own custom access lists (services/access-lists.ts).
 */
export const accessBlockKind: ChangeKind<AccessBlockParams, EntryState> = {
  name: "access_block",
  params: accessBlockParams,
  approvers: "policy",
  policyName: "block",
  risk: "high",
  describe: (p) =>
    `${VERBS[p.state]} ${ENTRY_TYPE_WORDS[p.type].one} ${p.value} on shield zone ${p.shieldZoneId}`,
  target: (p) => `shield zone ${p.shieldZoneId} / ${p.type} ${p.value}`,
  details: (p, observed) => [
    { label: "Shield zone", value: String(p.shieldZoneId) },
    {
      label: ENTRY_TYPE_WORDS[p.type].one === "IP" ? "IP" : capitalise(ENTRY_TYPE_WORDS[p.type].one),
      value: p.value,
    },
    { label: "Now", value: moved(stateWord(observed), stateWord(p.state)) },
    ...cautionRows(p),
  ],
  askAgain: (p) => `/edge ${p.state === "none" ? "unblock" : "block"} ${p.shieldZoneId} ${p.value}`,
  async readCurrent(deps, scope, p) {
    const client = await edgeClientFor(deps, scope.teamId);
    return readEntryState(client, p.shieldZoneId, p);
  },
  targetKey: (p, scope) => `${scope.teamId}/shield zone ${p.shieldZoneId}/access ${p.type} ${p.value}`,
  valueLabel: stateWord,
  inForce: (p, current) => (current ?? "none") === p.state,
  // Every edgeops list of the entry's type (block and challenge): a move reads and writes both.
  lockKey: (p) => `shield-zone:${p.shieldZoneId}:access-lists:${p.type}`,
  async apply(deps, scope, p) {
    const client = await edgeClientFor(deps, scope.teamId);
    await setEntryState(client, p.shieldZoneId, p, p.state);
  },
  undo: (p, observed) => (isState(observed) ? { ...p, state: observed } : undefined),
};

/**
 * Blocking an address no internet client has changes nothing for visitors: what arrives from it is most
 * likely a proxy or load balancer in front of the zone (blocking it may cut everyone off), or the entry
 * is a mistake. Said on the confirmation and on the approval card, where the approver decides.
 */
function cautionRows(p: AccessBlockParams) {
  if (p.state === "none") return [];
  const found = nonInternetAddress(p);
  if (found === undefined) return [];
  const is =
    p.type === "cidr"
      ? `${p.value} covers ${found.what} addresses (${found.range})`
      : `${p.value} is a ${found.what} address (${found.range})`;
  return [
    {
      label: "Caution",
      value: `${is}, which no internet client has: what comes from it is most likely a proxy or load balancer in front of the zone, or this is a mistake.`,
    },
  ];
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
