import { z } from "zod";
import type { ChangeKind } from "../changes/index.js";
import {
  accessBlockKind,
  botCategoryKind,
  ddosSensitivityKind,
  learningModeKind,
  purgeKind,
  restartAppKind,
  wafModeKind,
} from "../changes/index.js";
import { purgeParams } from "../changes/kinds/purge.js";
import {
  DDOS_WORDS,
  LEARNING_WORDS,
  type ShieldSettingParams,
  WAF_MODE_WORDS,
} from "../changes/kinds/shield-zone-setting.js";
import type { Deps } from "../deps.js";
import { UserError } from "../errors.js";
import { parseAccessEntry } from "../services/access-entries.js";
import { findApp } from "../services/apps.js";
import { parseAction, parseCategory } from "../services/bot-categories.js";
import { edgeClientFor } from "../services/edge-access.js";
import { resolveShieldZoneId, type ZoneRef } from "../services/zone-lookup.js";

/**
 * The changes an agent may propose, as MCP input, each mapped onto an existing change kind
 * (src/changes/kinds): the same parameters `/edge block`, `/edge ddos` … would make, checked the same way.
 */

const zone = z
  .union([z.number().int().min(1), z.string().min(1).max(253)])
  .describe("The shield zone: its id (1234) or a domain it serves (shop.example.com).");

export const changeSchema = z.discriminatedUnion("action", [
  z.object({
    action: z.enum(["block", "challenge", "unblock"]),
    zone,
    target: z
      .string()
      .min(1)
      .max(100)
      .describe(
        "What to block, challenge or unblock: an IP (203.0.113.7), an IP range (203.0.113.0/24), an ASN (AS4134), a two-letter country code (CN) or a JA4 fingerprint.",
      ),
  }),
  z.object({
    action: z.literal("ddos_sensitivity"),
    zone,
    level: z.enum(Object.keys(DDOS_WORDS) as [string, ...string[]]).describe("The DDoS sensitivity to set."),
  }),
  z.object({
    action: z.literal("waf_mode"),
    zone,
    mode: z
      .enum(Object.keys(WAF_MODE_WORDS) as [string, ...string[]])
      .describe("log: log only; block: block."),
  }),
  z.object({
    action: z.literal("bot_category"),
    zone,
    category: z
      .string()
      .min(1)
      .max(20)
      .describe("seo, aiscraper, aitool, tool, ads, preview, social, or 1..7."),
    bot_action: z.enum(["block", "allow", "clear"]).describe("What to do with that category of bots."),
  }),
  z.object({
    action: z.literal("learning_mode"),
    zone,
    mode: z.enum(Object.keys(LEARNING_WORDS) as [string, ...string[]]).describe("on or off."),
  }),
  z.object({
    action: z.literal("purge"),
    pull_zone_id: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Purge this pull zone's cache (all, or one tag)."),
    cache_tag: z.string().min(1).max(200).optional().describe("Only this cache tag of the pull zone."),
    url: z.string().min(1).max(1500).optional().describe("Or purge this one URL (https://…)."),
  }),
  z.object({
    action: z.literal("restart"),
    app: z.string().min(1).max(200).describe("The Magic Containers application's id or name."),
  }),
]);
export type ChangeInput = z.output<typeof changeSchema>;

export interface MappedChange {
  // biome-ignore lint/suspicious/noExplicitAny: any kind's parameter and value types
  kind: ChangeKind<any, any>;
  params: unknown;
}

const zoneRef = (z: number | string): ZoneRef =>
  typeof z === "number" || /^\d+$/.test(z) ? { kind: "id", id: Number(z) } : { kind: "name", name: z };

const EXAMPLE = 'propose_change with change {"action": "block", "zone": 1234, "target": "203.0.113.7"}';

/** The change kind and its checked parameters; a UserError says what is wrong with the input. */
export async function mapChange(
  deps: Deps,
  teamId: string,
  scope: { channelId: string; userId: string },
  c: ChangeInput,
): Promise<MappedChange> {
  const shieldZone = (z: number | string) => resolveShieldZoneId(deps, teamId, zoneRef(z), EXAMPLE);
  const setting = async <V extends number | boolean>(
    // biome-ignore lint/suspicious/noExplicitAny: the kind's target read
    kind: ChangeKind<ShieldSettingParams<V>, V, any>,
    zoneArg: number | string,
    value: V | undefined,
  ): Promise<MappedChange> => {
    // The input schema lists only known words.
    if (value === undefined) throw new UserError("usage", "That value is not one edgeops knows.");
    const shieldZoneId = await shieldZone(zoneArg);
    const seen = await kind.readCurrent(deps, { teamId, ...scope }, { shieldZoneId, value, seen: null });
    return { kind, params: { shieldZoneId, value, seen } };
  };
  switch (c.action) {
    case "block":
    case "challenge":
    case "unblock": {
      const entry = parseAccessEntry(c.target);
      const state = c.action === "unblock" ? "none" : c.action;
      return { kind: accessBlockKind, params: { shieldZoneId: await shieldZone(c.zone), ...entry, state } };
    }
    case "ddos_sensitivity":
      return setting(ddosSensitivityKind, c.zone, DDOS_WORDS[c.level]);
    case "waf_mode":
      return setting(wafModeKind, c.zone, WAF_MODE_WORDS[c.mode]);
    case "learning_mode":
      return setting(learningModeKind, c.zone, LEARNING_WORDS[c.mode]);
    case "bot_category": {
      const params = {
        shieldZoneId: await shieldZone(c.zone),
        category: parseCategory(c.category),
        action: parseAction(c.bot_action),
      };
      return { kind: botCategoryKind, params };
    }
    case "purge": {
      const byUrl = c.url !== undefined;
      if (byUrl === (c.pull_zone_id !== undefined) || (byUrl && c.cache_tag !== undefined))
        throw new UserError(
          "usage",
          "A purge names either pull_zone_id (and, if you like, cache_tag) or url, not both and not neither.",
        );
      const raw = byUrl
        ? { url: c.url }
        : { pullZoneId: c.pull_zone_id, ...(c.cache_tag !== undefined ? { cacheTag: c.cache_tag } : {}) };
      const checked = purgeParams.safeParse(raw);
      if (!checked.success || (byUrl && !/^https?:\/\//i.test(c.url ?? "")))
        throw new UserError(
          "usage",
          "That is not something edgeops can purge: a cache tag is up to 200 letters, digits and . : / - _, and a URL starts with https:// or http:// (up to 1500 characters).",
        );
      return { kind: purgeKind, params: checked.data };
    }
    case "restart": {
      const app = await findApp(await edgeClientFor(deps, teamId), c.app, EXAMPLE);
      return { kind: restartAppKind, params: { appId: app.id, appName: app.name.slice(0, 200) } };
    }
  }
}
