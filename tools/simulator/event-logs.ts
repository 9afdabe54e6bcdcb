/**
 * POST /shield/event-logs/{shieldZoneId}/search: EventLogsSearchRequest -> EventLogsSearchResponse. Validation
 * failures answer 400 problem details (as documented); an unknown zone 404 problem details; a plan without the
 * event log `planFeatureErrorStatus` with `errorResponse.errorKey` `invalid_plan_type.event_logs`.
 *
 * Where the document is silent the adversary chooses (friendly reading first): the order of groups and rows
 * ("event-logs.order"), how feature, action and ASN values are spelled ("event-logs.feature-spelling",
 * "event-logs.action-spelling", "event-logs.asn-spelling"), whether `eq`/`in` ignore case ("event-logs.eq-case")
 * and whether `totalPages` is given ("event-logs.total-pages").
 */
import { EVENT_LOG_DIMENSIONS } from "../../src/edge/schemas/shield.js";
import type { Adversary } from "./adversary.js";
import { type HandlerContext, intParam, isPlainObject, json, problem, type SimResponse } from "./http.js";
import { zoneHost } from "./seed.js";
import {
  type Action,
  clustersBetween,
  EVENT_LOG_RETENTION_MS,
  type EventCluster,
  eventId,
  eventRange,
  eventTime,
  type Feature,
  MINUTE_MS,
  serverZoneFor,
  statusFor,
  wafRuleInfo,
  zoneModel,
} from "./traffic.js";

export const DIMENSIONS = EVENT_LOG_DIMENSIONS;
export type Dimension = (typeof DIMENSIONS)[number];
const OPERATORS = ["eq", "in", "contains", "cidr", "wildcard"] as const;
type Operator = (typeof OPERATORS)[number];

const BODY_FIELDS = ["from", "to", "query", "filters", "groupBy", "buckets", "page", "pageSize"];
const FILTER_FIELDS = ["field", "op", "value"];
const MAX_BUCKETS = 500;
const MAX_PAGE_SIZE = 500;
const DEFAULT_PAGE_SIZE = 50;
/** Tolerated clock skew for a window that ends "now" by the caller's clock. */
const FUTURE_SKEW_MS = 60_000;

interface Filter {
  field: Dimension;
  op: Operator;
  values: string[];
  /** Parsed networks for `cidr`. */
  networks?: Network[];
}

interface SearchRequest {
  from: number;
  to: number;
  query: string | null;
  filters: Filter[];
  groupBy: Dimension[];
  buckets: number;
  page: number;
  pageSize: number;
}

class InvalidRequest extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const isDimension = (v: unknown): v is Dimension =>
  typeof v === "string" && (DIMENSIONS as readonly string[]).includes(v);

function intField(body: Record<string, unknown>, name: string): number | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    throw new InvalidRequest(name, `${name} must be an integer.`);
  }
  return v;
}

function parseRequest(raw: unknown, now: number): SearchRequest {
  if (raw === undefined) {
    throw new InvalidRequest(
      "body",
      'A request body is required, e.g. {"from": <unix ms>, "to": <unix ms>}.',
    );
  }
  if (!isPlainObject(raw)) throw new InvalidRequest("body", "The request body must be a JSON object.");
  const unknown = Object.keys(raw).filter((k) => !BODY_FIELDS.includes(k));
  if (unknown.length > 0) {
    throw new InvalidRequest(unknown[0] ?? "body", `Unknown field(s): ${unknown.join(", ")}.`);
  }
  const from = intField(raw, "from");
  const to = intField(raw, "to");
  if (from === undefined) throw new InvalidRequest("from", "from is required (window start, Unix ms).");
  if (to === undefined) throw new InvalidRequest("to", "to is required (window end, Unix ms).");
  if (to <= from) throw new InvalidRequest("to", "to must be after from.");
  if (to < now - EVENT_LOG_RETENTION_MS) {
    throw new InvalidRequest("to", "to must be within the last 72 hours; the event log keeps 72 hours.");
  }
  if (to > now + FUTURE_SKEW_MS) throw new InvalidRequest("to", "to must not be in the future.");

  const query = raw.query ?? null;
  if (query !== null && typeof query !== "string")
    throw new InvalidRequest("query", "query must be a string.");

  const filters: Filter[] = [];
  const rawFilters = raw.filters ?? null;
  if (rawFilters !== null) {
    if (!Array.isArray(rawFilters)) throw new InvalidRequest("filters", "filters must be an array.");
    for (const [i, f] of rawFilters.entries()) filters.push(parseFilter(f, `filters[${i}]`));
  }

  const groupBy: Dimension[] = [];
  const rawGroupBy = raw.groupBy ?? null;
  if (rawGroupBy !== null) {
    if (!Array.isArray(rawGroupBy))
      throw new InvalidRequest("groupBy", "groupBy must be an array of strings.");
    for (const g of rawGroupBy) {
      if (!isDimension(g)) {
        throw new InvalidRequest("groupBy", `groupBy values must be among ${DIMENSIONS.join(", ")}.`);
      }
      if (groupBy.includes(g)) throw new InvalidRequest("groupBy", `groupBy lists ${g} twice.`);
      groupBy.push(g);
    }
  }

  const page = intField(raw, "page") ?? 0;
  if (page < 0) throw new InvalidRequest("page", "page is zero-based and must not be negative.");
  const pageSizeRaw = intField(raw, "pageSize") ?? 0;
  const pageSize = pageSizeRaw === 0 ? DEFAULT_PAGE_SIZE : Math.min(MAX_PAGE_SIZE, Math.max(1, pageSizeRaw));
  const buckets = Math.min(MAX_BUCKETS, Math.max(0, intField(raw, "buckets") ?? 0));
  return { from, to, query: query === "" ? null : query, filters, groupBy, buckets, page, pageSize };
}

function parseFilter(raw: unknown, where: string): Filter {
  if (!isPlainObject(raw)) throw new InvalidRequest(where, `${where} must be an object {field, op, value}.`);
  const unknown = Object.keys(raw).filter((k) => !FILTER_FIELDS.includes(k));
  if (unknown.length > 0)
    throw new InvalidRequest(where, `${where}: unknown field(s) ${unknown.join(", ")}.`);
  const field = raw.field;
  if (!isDimension(field)) {
    throw new InvalidRequest(`${where}.field`, `${where}.field must be one of ${DIMENSIONS.join(", ")}.`);
  }
  const op = raw.op ?? "eq";
  if (typeof op !== "string" || !(OPERATORS as readonly string[]).includes(op)) {
    throw new InvalidRequest(`${where}.op`, `${where}.op must be one of ${OPERATORS.join(", ")}.`);
  }
  const value = raw.value;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === "string")) {
    throw new InvalidRequest(`${where}.value`, `${where}.value must be a non-empty array of strings.`);
  }
  const filter: Filter = { field, op: op as Operator, values: value as string[] };
  if (op === "cidr") {
    if (field !== "ip") throw new InvalidRequest(`${where}.op`, "The cidr operator applies to ip only.");
    filter.networks = (value as string[]).map((v) => {
      const n = parseCidr(v);
      if (n === undefined) throw new InvalidRequest(`${where}.value`, `${v} is not an IPv4 or IPv6 CIDR.`);
      return n;
    });
  }
  return filter;
}

// ---- IP networks ------------------------------------------------------------------------------------

interface Network {
  v6: boolean;
  base: bigint;
  bits: number;
}

function parseIp(ip: string): { v6: boolean; value: bigint } | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) {
    const octets = v4.slice(1).map(Number);
    if (octets.some((o) => o > 255)) return undefined;
    return { v6: false, value: octets.reduce((acc, o) => (acc << 8n) | BigInt(o), 0n) };
  }
  if (!/^[0-9a-f:]+$/i.test(ip) || (ip.match(/::/g) ?? []).length > 1) return undefined;
  const [head, tail] = ip.includes("::") ? ip.split("::") : [ip, undefined];
  const h = head === "" || head === undefined ? [] : head.split(":");
  const t = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - h.length - t.length;
  if ((tail === undefined && missing !== 0) || missing < 0) return undefined;
  const groups = [...h, ...Array.from({ length: tail === undefined ? 0 : missing }, () => "0"), ...t];
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return { v6: true, value: groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g, 16)), 0n) };
}

function parseCidr(raw: string): Network | undefined {
  const [addr, len, extra] = raw.trim().split("/");
  if (addr === undefined || extra !== undefined) return undefined;
  const ip = parseIp(addr);
  if (ip === undefined) return undefined;
  const max = ip.v6 ? 128 : 32;
  const bits = len === undefined ? max : /^\d{1,3}$/.test(len) ? Number(len) : Number.NaN;
  if (!Number.isInteger(bits) || bits < 0 || bits > max) return undefined;
  const shift = BigInt(max - bits);
  return { v6: ip.v6, base: (ip.value >> shift) << shift, bits };
}

function inNetwork(ip: string, n: Network): boolean {
  const parsed = parseIp(ip);
  if (parsed === undefined || parsed.v6 !== n.v6) return false;
  const shift = BigInt((n.v6 ? 128 : 32) - n.bits);
  return (parsed.value >> shift) << shift === n.base;
}

// ---- spellings --------------------------------------------------------------------------------------

/**
 * The document names the dimensions but enumerates none of their values: these are the spellings a run may
 * answer (the first is the friendly one, the overview metrics' property names).
 */
const FEATURE_SPELLINGS = {
  camel: {
    waf: "waf",
    ddos: "ddos",
    rateLimit: "rateLimit",
    botDetection: "botDetection",
    accessLists: "accessLists",
  },
  pascal: {
    waf: "Waf",
    ddos: "DDoS",
    rateLimit: "RateLimit",
    botDetection: "BotDetection",
    accessLists: "AccessLists",
  },
  upper: {
    waf: "WAF",
    ddos: "DDOS",
    rateLimit: "RATE_LIMIT",
    botDetection: "BOT_DETECTION",
    accessLists: "ACCESS_LISTS",
  },
  long: {
    waf: "web_application_firewall",
    ddos: "ddos_protection",
    rateLimit: "rate_limiting",
    botDetection: "bot_detection",
    accessLists: "access_lists",
  },
} as const satisfies Record<string, Record<Feature, string>>;
const ACTION_SPELLINGS = {
  verb: { block: "block", challenge: "challenge", log: "log" },
  pascal: { block: "Block", challenge: "Challenge", log: "Log" },
  past: { block: "blocked", challenge: "challenged", log: "logged" },
  upper: { block: "BLOCK", challenge: "CHALLENGE", log: "LOG" },
} as const satisfies Record<string, Record<Action, string>>;
const ASN_SPELLINGS = {
  prefixed: (asn: string) => asn,
  number: (asn: string) => asn.replace(/^AS/i, ""),
} as const;

export interface Spelling {
  feature: Record<Feature, string>;
  action: Record<Action, string>;
  asn: (asn: string) => string;
  /** `eq` and `in` compare case-sensitively. */
  caseSensitive: boolean;
}

const keysOf = <T extends object>(o: T) => Object.keys(o) as (keyof T)[];

/** This run's spellings (one choice per run, so a value read in one answer filters the next). */
export function spellingOf(adversary: Adversary): Spelling {
  return {
    feature: FEATURE_SPELLINGS[adversary.choose("event-logs.feature-spelling", keysOf(FEATURE_SPELLINGS))],
    action: ACTION_SPELLINGS[adversary.choose("event-logs.action-spelling", keysOf(ACTION_SPELLINGS))],
    asn: ASN_SPELLINGS[adversary.choose("event-logs.asn-spelling", keysOf(ASN_SPELLINGS))],
    caseSensitive: adversary.choose("event-logs.eq-case", ["insensitive", "sensitive"]) === "sensitive",
  };
}

export const FRIENDLY_SPELLING: Spelling = {
  feature: FEATURE_SPELLINGS.camel,
  action: ACTION_SPELLINGS.verb,
  asn: ASN_SPELLINGS.prefixed,
  caseSensitive: false,
};

// ---- matching ---------------------------------------------------------------------------------------

export function dimensionOf(c: EventCluster, d: Dimension, sp: Spelling = FRIENDLY_SPELLING): string {
  switch (d) {
    case "feature":
      return sp.feature[c.feature];
    case "ruleId":
      return c.ruleId;
    case "ip":
      return c.source.ip;
    case "ja4":
      return c.source.ja4;
    case "ua":
      return c.source.ua;
    case "url":
      return c.url;
    case "asn":
      return sp.asn(c.source.asn);
    case "country":
      return c.source.country;
    case "action":
      return sp.action[c.action];
  }
}

const wildcardRegExp = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*")}$`,
    "is",
  );

function matchesFilter(c: EventCluster, f: Filter, sp: Spelling): boolean {
  const value = dimensionOf(c, f.field, sp);
  const lower = value.toLowerCase();
  switch (f.op) {
    case "eq":
    case "in":
      return f.values.some((v) => (sp.caseSensitive ? v === value : v.toLowerCase() === lower));
    case "contains":
      return f.values.some((v) => lower.includes(v.toLowerCase()));
    case "wildcard":
      return f.values.some((v) => wildcardRegExp(v).test(value));
    case "cidr":
      return (f.networks ?? []).some((n) => inNetwork(value, n));
  }
}

function matchesQuery(c: EventCluster, query: string): boolean {
  const q = query.toLowerCase();
  const name = c.feature === "waf" ? (wafRuleInfo(c.ruleId)?.description ?? "") : "";
  return [c.source.ip, c.ruleId, c.url, c.source.ua, name].some((v) => v.toLowerCase().includes(q));
}

// ---- answers ----------------------------------------------------------------------------------------

function fieldsOf(c: EventCluster, sp: Spelling): Record<Dimension, string> {
  return Object.fromEntries(DIMENSIONS.map((d) => [d, dimensionOf(c, d, sp)])) as Record<Dimension, string>;
}

function logOf(c: EventCluster, j: number, host: string, sp: Spelling): Record<string, unknown> {
  return {
    timestamp: eventTime(c, j),
    shieldZoneId: c.zoneId,
    feature: sp.feature[c.feature],
    action: sp.action[c.action],
    ruleId: c.ruleId === "" ? null : c.ruleId,
    ruleName: c.feature === "waf" ? (wafRuleInfo(c.ruleId)?.description ?? null) : null,
    remoteIp: c.source.ip,
    country: c.source.country,
    asn: sp.asn(c.source.asn),
    ja4: c.source.ja4,
    userAgent: c.source.ua,
    method: c.method,
    host,
    url: c.url,
    status: statusFor(c.feature, c.action),
    serverZone: serverZoneFor(c),
  };
}

const COUNT_KEY = { block: "blocked", challenge: "challenged", log: "logged" } as const;

interface GroupAcc {
  key: Record<string, string>;
  count: number;
  firstSeen: number;
  lastSeen: number;
  actions: { blocked: number; challenged: number; logged: number };
  countries: Map<string, number>;
  asns: Map<string, number>;
  features: Set<string>;
  ruleIds: Set<string>;
  sparkline: number[] | null;
}

const mostFrequent = (m: Map<string, number>): string | null => {
  let best: string | null = null;
  let n = -1;
  for (const [k, v] of m) {
    if (v > n || (v === n && best !== null && k < best)) {
      best = k;
      n = v;
    }
  }
  return best;
};

/** How this answer is read: the run's spellings, and the order key of the query (the same on every page). */
interface Reading {
  sp: Spelling;
  adversary: Adversary;
  /** The query without its page: one order across all of its pages. */
  salt: string;
}

function grouped(req: SearchRequest, clusters: EventCluster[], from: number, to: number, r: Reading) {
  const { sp } = r;
  const groups = new Map<string, GroupAcc>();
  const span = req.to - req.from;
  for (const c of clusters) {
    const [first, end] = eventRange(c, from, to);
    const n = end - first;
    if (n <= 0) continue;
    const values = req.groupBy.map((d) => dimensionOf(c, d, sp));
    const id = JSON.stringify(values);
    let g = groups.get(id);
    if (g === undefined) {
      g = {
        key: Object.fromEntries(req.groupBy.map((d, i) => [d, values[i] ?? ""])),
        count: 0,
        firstSeen: Number.POSITIVE_INFINITY,
        lastSeen: 0,
        actions: { blocked: 0, challenged: 0, logged: 0 },
        countries: new Map(),
        asns: new Map(),
        features: new Set(),
        ruleIds: new Set(),
        sparkline: req.buckets > 0 ? Array.from({ length: req.buckets }, () => 0) : null,
      };
      groups.set(id, g);
    }
    g.count += n;
    g.firstSeen = Math.min(g.firstSeen, eventTime(c, first));
    g.lastSeen = Math.max(g.lastSeen, eventTime(c, end - 1));
    g.actions[COUNT_KEY[c.action]] += n;
    g.countries.set(c.source.country, (g.countries.get(c.source.country) ?? 0) + n);
    const asn = sp.asn(c.source.asn);
    g.asns.set(asn, (g.asns.get(asn) ?? 0) + n);
    g.features.add(sp.feature[c.feature]);
    if (c.ruleId !== "") g.ruleIds.add(c.ruleId);
    if (g.sparkline !== null) {
      const bucketOf = (t: number) =>
        Math.min(req.buckets - 1, Math.floor(((t - req.from) * req.buckets) / span));
      const a = bucketOf(eventTime(c, first));
      const b = bucketOf(eventTime(c, end - 1));
      if (a === b) g.sparkline[a] = (g.sparkline[a] ?? 0) + n;
      else {
        for (let j = first; j < end; j++) {
          const i = bucketOf(eventTime(c, j));
          g.sparkline[i] = (g.sparkline[i] ?? 0) + 1;
        }
      }
    }
  }
  // Friendly: busiest first. The document promises no order.
  const sorted = r.adversary.order(
    "event-logs.order",
    [...groups.entries()].sort(
      ([ka, a], [kb, b]) => b.count - a.count || b.lastSeen - a.lastSeen || (ka < kb ? -1 : ka > kb ? 1 : 0),
    ),
    r.salt,
  );
  const page = sorted.slice(req.page * req.pageSize, (req.page + 1) * req.pageSize).map(([, g]) => ({
    key: g.key,
    count: g.count,
    firstSeen: g.firstSeen,
    lastSeen: g.lastSeen,
    context: {
      country: mostFrequent(g.countries),
      asn: mostFrequent(g.asns),
      blocked: g.actions.blocked,
      challenged: g.actions.challenged,
      logged: g.actions.logged,
      features: [...g.features].sort().join(","),
      ruleIds: [...g.ruleIds].sort().join(","),
    },
    sparkline: g.sparkline,
  }));
  return { groups: page, total: sorted.length };
}

function flat(
  req: SearchRequest,
  clusters: EventCluster[],
  from: number,
  to: number,
  host: string,
  r: Reading,
) {
  // Friendly: newest first. Minutes are walked in the answer's order, materialising only those the page touches;
  // the adversary orders the minutes and the events within each (the document promises no order).
  const byMinute = new Map<number, EventCluster[]>();
  let total = 0;
  for (const c of clusters) {
    const [first, end] = eventRange(c, from, to);
    if (end <= first) continue;
    total += end - first;
    const list = byMinute.get(c.minute) ?? [];
    list.push(c);
    byMinute.set(c.minute, list);
  }
  const start = req.page * req.pageSize;
  const stop = start + req.pageSize;
  const rows: Array<{ logId: string; timestamp: number; log: unknown; fields: Record<string, string> }> = [];
  let seen = 0;
  const minutes = r.adversary.order(
    "event-logs.order",
    [...byMinute.keys()].sort((a, b) => b - a),
    r.salt,
  );
  for (const minute of minutes) {
    if (seen >= stop) break;
    const list = byMinute.get(minute) ?? [];
    const inMinute = list.reduce((n, c) => {
      const [first, end] = eventRange(c, from, to);
      return n + end - first;
    }, 0);
    if (seen + inMinute > start) {
      const events: Array<{ c: EventCluster; j: number; t: number; id: string }> = [];
      for (const c of list) {
        const [first, end] = eventRange(c, from, to);
        for (let j = first; j < end; j++) events.push({ c, j, t: eventTime(c, j), id: eventId(c, j) });
      }
      events.sort((a, b) => b.t - a.t || (a.id < b.id ? -1 : 1));
      const ordered = r.adversary.order("event-logs.order", events, `${r.salt}/${minute}`);
      for (const [i, e] of ordered.entries()) {
        const at = seen + i;
        if (at < start || at >= stop) continue;
        rows.push({
          logId: e.id,
          timestamp: e.t,
          log: logOf(e.c, e.j, host, r.sp),
          fields: fieldsOf(e.c, r.sp),
        });
      }
    }
    seen += inMinute;
  }
  return { rows, total };
}

export function searchEventLogs(ctx: HandlerContext): SimResponse {
  let req: SearchRequest;
  try {
    req = parseRequest(ctx.body, ctx.now);
  } catch (e) {
    if (!(e instanceof InvalidRequest)) throw e;
    return problem(400, e.message, ctx.path, { [e.field]: [e.message] });
  }
  const id = intParam(ctx.params[0]);
  const model = id === undefined ? undefined : zoneModel(ctx.state, id);
  if (id === undefined || model === undefined) {
    return problem(404, `Shield Zone ${ctx.params[0] ?? ""} not found.`, ctx.path);
  }
  if (ctx.state.eventLogsUnavailable.has(id)) {
    const status = ctx.state.planFeatureErrorStatus;
    return json(status, {
      rows: null,
      groups: null,
      total: 0,
      totalPages: 0,
      page: req.page,
      errorResponse: {
        statusCode: status,
        success: false,
        message: "Event logs are not available on this Shield Zone's plan. Upgrade to Advanced or higher.",
        errorKey: "invalid_plan_type.event_logs",
      },
    });
  }
  // Data older than the retention is gone; nothing exists after the clock's current minute.
  const from = Math.max(req.from, ctx.now - EVENT_LOG_RETENTION_MS);
  const to = Math.min(req.to, Math.floor(ctx.now / MINUTE_MS) * MINUTE_MS);
  const sp = spellingOf(ctx.adversary);
  const clusters =
    to <= from
      ? []
      : clustersBetween(model, from, to, ctx.now).filter(
          (c) =>
            req.filters.every((f) => matchesFilter(c, f, sp)) &&
            (req.query === null || matchesQuery(c, req.query)),
        );
  const filters = req.filters.map(({ field, op, values }) => [field, op, values]);
  const salt = JSON.stringify([id, req.from, req.to, req.query, filters, req.groupBy, req.buckets]);
  const reading: Reading = { sp, adversary: ctx.adversary, salt };
  // The document lists totalPages but requires nothing: an answer may give `total` alone.
  const withPages = ctx.adversary.choose("event-logs.total-pages", ["present", "absent"]) === "present";
  const paging = (total: number) => ({
    total,
    ...(withPages ? { totalPages: Math.ceil(total / req.pageSize) } : {}),
    page: req.page,
    errorResponse: null,
  });
  if (req.groupBy.length > 0) {
    const { groups, total } = grouped(req, clusters, from, to, reading);
    return json(200, { rows: null, groups, ...paging(total) });
  }
  const { rows, total } = flat(req, clusters, from, to, zoneHost(ctx.state, id), reading);
  return json(200, { rows, groups: null, ...paging(total) });
}
