/**
 * What a shield zone's configuration was at each minute, so that a change written through the simulator's API
 * (a setting, an access list's entries or action) shapes the traffic model from the minute it was written and
 * never rewrites the minutes before it. Only the configurations that were replaced are kept (`ZoneEpoch`): the
 * minutes from the last recorded change on read the zone's live state, so a zone nobody wrote to behaves as if
 * this module did not exist.
 */
import { BlockList, isIP } from "node:net";
import type { SimulatorState } from "./seed.js";
import type { Action } from "./traffic-model.js";

const MINUTE_MS = 60_000;

/** What an access list matches: the dimensions of an event's source that the list types name. */
export interface SourceIdentity {
  ip: string;
  asn: string;
  country: string;
  ja4: string;
}

/** Enabled custom lists whose action the model applies, compiled for matching. */
interface AccessRules {
  /** Strongest first: Block, then Challenge, then Log. */
  byAction: Array<{
    action: Action;
    addresses: BlockList;
    asns: Set<string>;
    countries: Set<string>;
    ja4s: Set<string>;
  }>;
}

/** Everything the traffic model reads from a zone's configuration. */
export interface ZoneConfig {
  /** Equal keys, equal configurations (the day cache and the change detection compare these). */
  key: string;
  /** A short stand-in for `key` in this process (per-minute cache keys). */
  id: number;
  wafEnabled: boolean;
  /** 0 Log, 1 Block. */
  wafExecutionMode: number;
  /** 0 Off, 1 Low, 2 Medium, 3 High, 4 Challenge. */
  dDoSShieldSensitivity: number;
  /** 0 Log, 1 Block. */
  dDoSExecutionMode: number;
  /** Bot detection: 0 LogOnly, 1 Challenge. */
  botExecutionMode: number;
  access: AccessRules | null;
  /** Per source: the action of the access list that takes its events, or null (a source object is reused). */
  matches: WeakMap<SourceIdentity, Action | null>;
}

/** A configuration that was in force for every minute before `untilMinute` (and after the previous epoch's). */
export interface ZoneEpoch {
  untilMinute: number;
  config: ZoneConfig;
}

/** AccessListAction → what the model does with a matching source's events (Allow, Bypass and None: nothing). */
const MODELLED_ACTIONS: Readonly<Record<number, Action>> = { 2: "block", 3: "challenge", 4: "log" };
const ACTION_ORDER: readonly Action[] = ["block", "challenge", "log"];

const entriesOf = (content: string) =>
  content
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

const asnDigits = (s: string) => s.replace(/^AS/i, "");

function compileAccess(
  lists: ReadonlyArray<{ type: number; content: string; action: number }>,
): AccessRules | null {
  const byAction = new Map<Action, AccessRules["byAction"][number]>();
  for (const l of lists) {
    const action = MODELLED_ACTIONS[l.action];
    if (action === undefined) continue;
    let rule = byAction.get(action);
    if (rule === undefined) {
      rule = { action, addresses: new BlockList(), asns: new Set(), countries: new Set(), ja4s: new Set() };
      byAction.set(action, rule);
    }
    for (const entry of entriesOf(l.content)) {
      switch (l.type) {
        case 0: {
          const v = isIP(entry);
          if (v !== 0) rule.addresses.addAddress(entry, v === 4 ? "ipv4" : "ipv6");
          break;
        }
        case 1: {
          const [net = "", prefix = ""] = entry.split("/");
          const v = isIP(net);
          if (v !== 0 && /^\d{1,3}$/.test(prefix))
            rule.addresses.addSubnet(net, Number(prefix), v === 4 ? "ipv4" : "ipv6");
          break;
        }
        case 2:
          rule.asns.add(asnDigits(entry));
          break;
        case 3:
          rule.countries.add(entry.toUpperCase());
          break;
        case 5:
          rule.ja4s.add(entry);
          break;
        // 4 Organization: the model's sources carry no organisation, so such a list matches none of them.
      }
    }
  }
  if (byAction.size === 0) return null;
  return { byAction: ACTION_ORDER.flatMap((a) => byAction.get(a) ?? []) };
}

/** The access-list action that takes this source's events under `config`, or null. */
export function accessActionFor(config: ZoneConfig, source: SourceIdentity): Action | null {
  if (config.access === null) return null;
  const known = config.matches.get(source);
  if (known !== undefined) return known;
  const family = isIP(source.ip) === 6 ? "ipv6" : "ipv4";
  const asn = asnDigits(source.asn);
  let found: Action | null = null;
  for (const r of config.access.byAction) {
    if (
      r.addresses.check(source.ip, family) ||
      r.asns.has(asn) ||
      r.countries.has(source.country.toUpperCase()) ||
      r.ja4s.has(source.ja4)
    ) {
      found = r.action;
      break;
    }
  }
  config.matches.set(source, found);
  return found;
}

const compiled = new Map<string, ZoneConfig>();
let nextConfigId = 1;
const COMPILED_LIMIT = 2_000;

/** The zone's configuration as its state says now (undefined for a zone that does not exist). */
export function liveConfig(state: SimulatorState, zoneId: number): ZoneConfig | undefined {
  const z = state.shieldZones.find((s) => s.shieldZoneId === zoneId);
  if (z === undefined) return undefined;
  const lists = (state.accessLists.get(zoneId) ?? [])
    .filter((l) => l.isEnabled && MODELLED_ACTIONS[l.action] !== undefined)
    .map((l) => ({ type: l.type, content: l.content, action: l.action }));
  const fields = {
    wafEnabled: z.wafEnabled !== false,
    wafExecutionMode: z.wafExecutionMode,
    dDoSShieldSensitivity: z.dDoSShieldSensitivity,
    dDoSExecutionMode: z.dDoSExecutionMode,
    botExecutionMode: state.botDetection.get(zoneId)?.executionMode ?? 0,
  };
  return configFromKey(JSON.stringify([fields, lists]));
}

/** The configuration a key describes (keys are what a saved history keeps); throws on a key it cannot read. */
export function configFromKey(key: string): ZoneConfig {
  const hit = compiled.get(key);
  if (hit !== undefined) return hit;
  const [fields, lists] = JSON.parse(key) as [
    Omit<ZoneConfig, "key" | "id" | "access" | "matches">,
    Array<{ type: number; content: string; action: number }>,
  ];
  const numbers = [
    fields.wafExecutionMode,
    fields.dDoSShieldSensitivity,
    fields.dDoSExecutionMode,
    fields.botExecutionMode,
  ];
  if (
    typeof fields?.wafEnabled !== "boolean" ||
    numbers.some((n) => typeof n !== "number") ||
    !Array.isArray(lists) ||
    lists.some(
      (l) => typeof l?.type !== "number" || typeof l.content !== "string" || typeof l.action !== "number",
    )
  )
    throw new Error("not a zone configuration");
  const config: ZoneConfig = {
    key,
    id: nextConfigId++,
    wafEnabled: fields.wafEnabled,
    wafExecutionMode: fields.wafExecutionMode,
    dDoSShieldSensitivity: fields.dDoSShieldSensitivity,
    dDoSExecutionMode: fields.dDoSExecutionMode,
    botExecutionMode: fields.botExecutionMode,
    access: compileAccess(lists),
    matches: new WeakMap(),
  };
  if (compiled.size >= COMPILED_LIMIT) compiled.clear();
  compiled.set(key, config);
  return config;
}

/** Every shield zone's live configuration, taken before a write so that the write's effect can be dated. */
export function snapshotConfigs(state: SimulatorState): Map<number, ZoneConfig> {
  const out = new Map<number, ZoneConfig>();
  for (const z of state.shieldZones) {
    const c = liveConfig(state, z.shieldZoneId);
    if (c !== undefined) out.set(z.shieldZoneId, c);
  }
  return out;
}

/**
 * After a write at `now`: each zone whose configuration differs from `before` keeps `before` for the minutes
 * before the write's minute. The write's own minute and those after it read the new configuration (the current
 * minute has no events yet, so nothing already answered changes). Two writes in one minute: the configuration
 * between them was never in force for a whole minute and is not kept.
 */
export function recordChanges(
  state: SimulatorState,
  before: ReadonlyMap<number, ZoneConfig>,
  now: number,
): void {
  const minute = Math.floor(now / MINUTE_MS);
  for (const [zoneId, was] of before) {
    const is = liveConfig(state, zoneId);
    if (is === undefined || is.key === was.key) continue;
    let history = state.configHistory.get(zoneId);
    if (history === undefined) {
      history = [];
      state.configHistory.set(zoneId, history);
    }
    const last = history[history.length - 1];
    if (last === undefined || last.untilMinute < minute) history.push({ untilMinute: minute, config: was });
  }
}

/** The configuration in force at `minute`: the first epoch that ends after it, else the live one. */
export function configAt(history: readonly ZoneEpoch[], live: ZoneConfig, minute: number): ZoneConfig {
  const n = history.length;
  if (n === 0 || minute >= (history[n - 1]?.untilMinute ?? 0)) return live;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((history[mid]?.untilMinute ?? 0) > minute) hi = mid;
    else lo = mid + 1;
  }
  return history[lo]?.config ?? live;
}

/** The keys of the configurations in force somewhere in [fromMinute, toMinute), with where each ends. */
export function configKeysBetween(
  history: readonly ZoneEpoch[],
  live: ZoneConfig,
  fromMinute: number,
  toMinute: number,
): string {
  const parts: string[] = [];
  let lastUntil = Number.NEGATIVE_INFINITY;
  for (const e of history) {
    if (e.untilMinute > fromMinute && lastUntil < toMinute) parts.push(`${e.untilMinute}:${e.config.key}`);
    lastUntil = e.untilMinute;
  }
  if (lastUntil < toMinute) parts.push(`live:${live.key}`);
  return parts.join("|");
}
