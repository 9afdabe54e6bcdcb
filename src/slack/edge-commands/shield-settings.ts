import { changesNothing } from "../../changes/engine.js";
import type { ChangeKind } from "../../changes/kind.js";
import {
  DDOS_WORDS,
  ddosSensitivityKind,
  LEARNING_PERIOD_MS,
  LEARNING_WORDS,
  learningModeKind,
  type ShieldSettingParams,
  WAF_MODE_WORDS,
  wafModeKind,
} from "../../changes/kinds/shield-zone-setting.js";
import { learningModeEnded, wafExecutionModeLabel } from "../../edge/schemas/shield.js";
import { usage } from "../../errors.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { resolveShieldZoneId } from "../../services/zone-lookup.js";
import { didYouMean } from "../../suggest.js";
import { confirmChangeMessage } from "../blocks/approvals.js";
import { context } from "../blocks/block-kit.js";
import { newChangeRequest } from "../request-ids.js";
import { echo, noMoreArgs, parseTemporary, parseZoneRef, pickerBeforeWord, zoneFirst } from "./parse.js";
import type { CommandContext, Subcommand } from "./types.js";

/** An API date-time as "2026-08-20 12:00 UTC". */
const utc = (iso: string) => {
  const t = Date.parse(iso);
  return Number.isFinite(t) ? `${new Date(t).toISOString().slice(0, 16).replace("T", " ")} UTC` : iso;
};

/** `/edge <word> <zone> <value> [for 30m]` for one shield zone setting kind. */
function shieldSettingCommand<V extends number | boolean>(o: {
  name: string;
  kind: ChangeKind<ShieldSettingParams<V>, V>;
  words: Readonly<Record<string, V>>;
  what: string;
  summary: string;
  example: string;
  domainExample: string;
  /** A sentence to show on the confirmation (or throw, to refuse) once the zone's value is read. */
  note?: (ctx: CommandContext, shieldZoneId: number, value: V, seen: V | null) => Promise<string | undefined>;
}): Subcommand {
  const choices = Object.keys(o.words).join(", ");
  const isValue = (w: string) => Object.hasOwn(o.words, w.toLowerCase());
  return {
    name: o.name,
    usage: `${o.name} <shieldZoneId|domain> <${Object.keys(o.words).join("|")}> [for 30m]`,
    summary: o.summary,
    examples: [o.example, o.domainExample, `${o.example} for 30m`],
    shareable: () => false,
    picker: pickerBeforeWord("shield", isValue),
    async run(ctx) {
      const { args, temporaryMs } = parseTemporary(zoneFirst(ctx.args, isValue), o.example);
      const zone = parseZoneRef(args[0], o.example, o.domainExample);
      const word = args[1]?.toLowerCase();
      if (word === undefined) throw usage(`Which ${o.what}? One of ${choices}. For example: ${o.example}`);
      const value = Object.hasOwn(o.words, word) ? o.words[word] : undefined;
      if (value === undefined)
        throw usage(
          `"${echo(args[1] ?? "")}" is not a ${o.what}.${didYouMean(word, Object.keys(o.words))} Use one of ${choices}. For example: ${o.example}`,
        );
      noMoreArgs(args, 2, o.example);
      const shieldZoneId = await resolveShieldZoneId(ctx.env.deps, ctx.teamId, zone, o.example);
      const scope = { teamId: ctx.teamId, channelId: ctx.channelId, userId: ctx.userId };
      const probe = { shieldZoneId, value, seen: null };
      const seen = await o.kind.readCurrent(ctx.env.deps, scope, probe);
      const note = await o.note?.(ctx, shieldZoneId, value, seen);
      const p = { shieldZoneId, value, seen };
      const confirm = confirmChangeMessage(
        newChangeRequest(o.kind, p, temporaryMs),
        seen,
        undefined,
        await changesNothing(ctx.env.deps, o.kind, scope, p, seen),
      );
      if (note === undefined) return confirm;
      const [title, ...rest] = confirm.blocks;
      return { ...confirm, blocks: [...(title ? [title] : []), context(`:warning: ${note}`), ...rest] };
    },
  };
}

export const ddosCommand = shieldSettingCommand({
  name: "ddos",
  kind: ddosSensitivityKind,
  words: DDOS_WORDS,
  what: "DDoS sensitivity",
  summary:
    "Ask to set a shield zone's DDoS sensitivity (challenge: challenge suspicious visitors); approval may be required.",
  example: "/edge ddos 1234 high",
  domainExample: "/edge ddos shop.example.com challenge",
});

export const wafModeCommand = shieldSettingCommand({
  name: "waf-mode",
  kind: wafModeKind,
  words: WAF_MODE_WORDS,
  what: "WAF execution mode",
  summary: "Ask to set a shield zone's WAF to log only or to block (approval may be required).",
  example: "/edge waf-mode 1234 block",
  domainExample: "/edge waf-mode shop.example.com log",
  // The mode of a WAF that is off changes nothing until the WAF is turned on.
  async note(ctx, shieldZoneId, value, seen) {
    const zone = await (await edgeClientFor(ctx.env.deps, ctx.teamId)).getShieldZone(shieldZoneId);
    if (zone.wafEnabled !== false) return undefined;
    const mode = wafExecutionModeLabel(value);
    const off = `The WAF of shield zone ${shieldZoneId} is off, so it neither blocks nor logs anything`;
    if (seen === value)
      throw usage(
        `${off}; its execution mode is already ${mode}. Turn the WAF on in the bunny.net dashboard (Shield, WAF) for ${mode} to take effect.`,
      );
    return `${off}: ${mode} takes effect only once the WAF is turned on in the bunny.net dashboard.`;
  },
});

export const learningCommand = shieldSettingCommand({
  name: "learning",
  kind: learningModeKind,
  words: LEARNING_WORDS,
  what: "learning mode setting",
  summary: "Ask to turn a shield zone's learning mode on or off (approval may be required).",
  example: "/edge learning 1234 off",
  domainExample: "/edge learning shop.example.com on",
  // Learning mode goes on with an end time (edgeops sends one): say when, and that a past period ended.
  async note(ctx, shieldZoneId, value, seen) {
    if (!value || seen === true) return undefined;
    const now = ctx.env.deps.clock.now();
    const zone = await (await edgeClientFor(ctx.env.deps, ctx.teamId)).getShieldZone(shieldZoneId);
    const ended = learningModeEnded(zone, now);
    const hours = LEARNING_PERIOD_MS / 3_600_000;
    const runs = `Learning mode runs for ${hours} hours from when this is applied, then ends by itself (the WAF only logs meanwhile).`;
    return ended === undefined
      ? runs
      : `The last learning period of shield zone ${shieldZoneId} ended ${utc(ended)}. ${runs}`;
  },
});
