/**
 * Every simulator route answers in the shapes of the provider's OpenAPI documents (../shared/reference/edge-api,
 * read in place, never copied): each answer below is validated with Ajv against the schema its operation documents
 * for that status. Statuses a document does not list are allowed only where listed in UNDOCUMENTED (with the reason)
 * and must take the shape named there (problem details, a refusing envelope, a plan refusal, Core error data). Values the seed puts off-spec on purpose (to exercise
 * unknown-enum handling) are listed in DELIBERATE and must each be seen.
 */
import type { Ajv, ValidateFunction } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  exactPath,
  type Refusal,
  SIM_API_KEY,
  SIM_IDS,
  type Simulator,
  seedFromEnv,
  startSimulator,
} from "../../../tools/simulator/index.js";
import { MAX_ZONE_ATTACK_EVENTS } from "../../../tools/simulator/plan.js";
import { ROUTES } from "../../../tools/simulator/routes.js";
import { steppedClock } from "../../support/clock.js";
import {
  type DocumentedOperation,
  documentsAjv,
  type Family,
  type Json,
  operationFor,
} from "../../support/openapi.js";

/** The error body each family documents (also used for statuses a document leaves without content). */
const FAMILY_ERRORS: Record<Family, string[]> = {
  mc: ["ErrorDetails", "ProblemDetails"],
  shield: ["ProblemDetails"],
  core: ["ApiErrorData"],
};

/**
 * The shape an undocumented status must take (besides the documented schema it is checked against):
 * - problem: the framework's problem details, with a title and the HTTP status as its `status`;
 * - envelope: the operation's documented answer whose error envelope refuses (`success` false) with the HTTP status;
 * - plan: the operation's documented answer whose error envelope refuses with an `invalid_plan_type.*` key;
 * - core: Core's error data with a message.
 */
type UndocumentedShape = "problem" | "envelope" | "plan" | "core";

/** `METHOD template status` the documents do not list: why the simulator answers them, and in what shape. */
const UNDOCUMENTED: Record<string, [UndocumentedShape, string]> = {
  "GET /shield/shield-zone/{shieldZoneId} 404": [
    "problem",
    "unknown zone: the framework's NotFound problem details",
  ],
  "GET /shield/shield-zone/{shieldZoneId}/bot-categorization 202": [
    "plan",
    "plan lacks the feature: the reference notes a 202 carrying invalid_plan_type.*",
  ],
  "PUT /shield/shield-zone/{shieldZoneId}/bot-categorization/categories/{category} 202": [
    "plan",
    "plan lacks the feature (as above)",
  ],
  "GET /shield/shield-zone/{shieldZoneId}/bot-detection 202": [
    "plan",
    "a Basic plan: invalid_plan_type.bot_detection, the form the Terraform provider handles",
  ],
  "GET /shield/metrics/rate-limit/{id} 404": ["envelope", "unknown rule, in the operation's envelope"],
  "GET /shield/metrics/rate-limits/{shieldZoneId} 404": [
    "envelope",
    "unknown zone, in the operation's envelope",
  ],
  "GET /shield/rate-limits/{shieldZoneId} 404": ["envelope", "unknown zone, in the operation's envelope"],
  "GET /shield/rate-limit/{id} 404": ["problem", "unknown rule: the framework's NotFound problem details"],
  "GET /shield/metrics/overview/{shieldZoneId} 404": [
    "envelope",
    "unknown zone, in the operation's envelope",
  ],
  "GET /shield/metrics/overview/{shieldZoneId}/detailed 404": [
    "envelope",
    "unknown zone, in the operation's envelope",
  ],
  "GET /shield/metrics/overview/{shieldZoneId}/detailed 400": [
    "problem",
    "unparsable StartDate/EndDate/Resolution or too many buckets: model-binding problem details",
  ],
  "POST /shield/event-logs/{shieldZoneId}/search 404": [
    "problem",
    "unknown zone: problem details like the documented 400",
  ],
  "POST /shield/event-logs/{shieldZoneId}/search 202": [
    "plan",
    "plan without event logs: invalid_plan_type.event_logs",
  ],
  "GET /shield/waf/rules/review-triggered/{shieldZoneId} 404": ["envelope", "unknown zone, in errorResponse"],
  "GET /shield/waf/rules/review-triggered/ai-recommendation/{shieldZoneId}/{ruleId} 404": [
    "envelope",
    "no such triggered rule, in errorResponse",
  ],
  "GET /pullzone 400": ["core", "page/perPage outside the documented minimum/maximum, Core error data"],
  "GET /dnszone 400": ["core", "page/perPage outside the documented minimum/maximum, Core error data"],
  "PATCH /shield/shield-zone 400": [
    "problem",
    "a field outside UpdateShieldZoneRequest: model-binding problem details",
  ],
  "PATCH /shield/shield-zone 404": ["problem", "unknown zone: the framework's NotFound problem details"],
  "POST /shield/waf/rules/review-triggered/{shieldZoneId} 400": [
    "problem",
    "no ruleId or an action outside ReviewActionType: model-binding problem details",
  ],
  "POST /shield/waf/rules/review-triggered/{shieldZoneId} 404": [
    "envelope",
    "unknown zone or a rule the zone did not trigger, in errorResponse",
  ],
  "GET /shield/shield-zone/{shieldZoneId}/access-lists 404": [
    "problem",
    "unknown zone: the framework's NotFound problem details",
  ],
  "GET /shield/shield-zone/{shieldZoneId}/access-lists/{id} 404": [
    "problem",
    "unknown list: NotFound problem details",
  ],
  "PATCH /shield/shield-zone/{shieldZoneId}/access-lists/{id} 404": [
    "problem",
    "unknown list: NotFound problem details",
  ],
  "PATCH /shield/shield-zone/{shieldZoneId}/access-lists/configurations/{id} 404": [
    "problem",
    "unknown configuration: NotFound problem details",
  ],
};

/** What an undocumented status's body must say beyond its documented schema (which accepts any object). */
function undocumentedShape(shape: UndocumentedShape, status: number): Json {
  const refusing = (error: Json): Json => ({
    anyOf: ["error", "errorResponse"].map((k) => ({
      type: "object",
      required: [k],
      properties: {
        [k]: { type: "object", required: ["success"], properties: { success: { const: false }, ...error } },
      },
    })),
  });
  switch (shape) {
    case "problem":
      return {
        type: "object",
        required: ["title", "status"],
        properties: { title: { type: "string", minLength: 1 }, status: { const: status } },
      };
    case "envelope":
      return refusing({ statusCode: { const: status } });
    case "plan":
      return refusing({ errorKey: { type: "string", pattern: "^invalid_plan_type\\." } });
    case "core":
      return {
        type: "object",
        required: ["Message"],
        properties: { Message: { type: "string", minLength: 1 } },
      };
  }
}

/** Off-spec values the seed serves on purpose; each must be seen at least once. */
const DELIBERATE: ReadonlyArray<{ why: string; path: RegExp; keyword: string }> = [
  { why: "zoneWithUnknownEnum has planType 9", path: /\/planType$/, keyword: "enum" },
  { why: "apps with the older capitalised status", path: /^\/items\/\d+\/status$/, keyword: "enum" },
  {
    why: "apps with the older capitalised endpoint type",
    path: /^\/items\/\d+\/displayEndpoint\/type$/,
    keyword: "enum",
  },
  {
    why: "dnsZoneOddRecords has a record of unlisted Type 11",
    path: /^\/Records\/\d+\/Type$/,
    keyword: "enum",
  },
  {
    why: "bot categorization lists the read-only System category 255 (noted by the reference, not in the enum)",
    path: /^\/categories\/\d+(\/bots\/\d+)?\/category$/,
    keyword: "enum",
  },
];

type Responses = Record<string, { content?: Record<string, { schema?: Json }> }>;
const responsesOf = (op: DocumentedOperation) => op.doc.responses as Responses;

// ---- the cases ---------------------------------------------------------------------------------------

interface Case {
  method: string;
  path: string;
  body?: unknown;
  /** null: no AccessKey header. */
  key?: string | null;
  status: number;
  /** Answered by the refusal fault (the operation's documented refusal inside a 2xx). */
  refuse?: Refusal;
}

/** A fixed clock: everything below is deterministic. */
const NOW = Date.UTC(2026, 7, 20, 14, 0, 30);
const iso = (t: number) => new Date(t).toISOString();
const H = 3_600_000;
const D = 24 * H;
const zone = SIM_IDS.zoneUnderAttack;
const quiet = SIM_IDS.zoneQuiet;
const unknownZone = SIM_IDS.unknownShieldZone;
const window15m = { from: NOW - 15 * 60_000, to: NOW };
const STAGED_ZONE = SIM_IDS.zoneEnterprise;
/** An app whose seeded status is active, moved by a staged timeline. */
const STAGED_APP = SIM_IDS.appsWithCapitalisedStatus[2];

function cases(): Case[] {
  const get = (path: string, status = 200, key?: string | null): Case => ({
    method: "GET",
    path,
    status,
    ...(key === undefined ? {} : { key }),
  });
  const post = (path: string, body: unknown, status = 200): Case => ({ method: "POST", path, body, status });
  const put = (path: string, body: unknown, status = 200): Case => ({ method: "PUT", path, body, status });
  const patch = (path: string, body: unknown, status = 200): Case => ({
    method: "PATCH",
    path,
    body,
    status,
  });
  const lists = `/shield/shield-zone/${SIM_IDS.customerAccessList.zoneId}/access-lists`;
  // The list the POST below creates: the next id after the seeded customer list.
  const created = SIM_IDS.customerAccessList.listId + 1;
  const out: Case[] = [
    // Magic Containers
    get("/mc/apps"),
    get("/mc/apps?limit=1000"),
    get("/mc/apps?limit=0", 400),
    get("/mc/apps?nextCursor=bm90LWEtY3Vyc29y", 400),
    // Shield zones
    get("/shield/shield-zones"),
    get("/shield/shield-zones?page=3"),
    get("/shield/shield-zones?perPage=1000"),
    ...Array.from({ length: SIM_IDS.shieldZoneCount }, (_, i) =>
      get(`/shield/shield-zone/${SIM_IDS.firstShieldZone + i}`),
    ),
    get(`/shield/shield-zone/${unknownZone}`, 404),
    // Bots
    get(`/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-detection`),
    get(`/shield/shield-zone/${unknownZone}/bot-detection`, 404),
    get(`/shield/shield-zone/${SIM_IDS.zoneWithoutBotPlan}/bot-detection`, 202),
    get(`/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-categorization`),
    get(`/shield/shield-zone/${SIM_IDS.zoneWithoutBotPlan}/bot-categorization`, 202),
    get(`/shield/shield-zone/${unknownZone}/bot-categorization`, 404),
    put(`/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-categorization/categories/1`, { action: 1 }),
    put(
      `/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-categorization/categories/1`,
      { action: 1, x: 1 },
      400,
    ),
    put(
      `/shield/shield-zone/${SIM_IDS.zoneWithoutBotPlan}/bot-categorization/categories/1`,
      { action: 1 },
      202,
    ),
    put(`/shield/shield-zone/${unknownZone}/bot-categorization/categories/1`, { action: 1 }, 404),
    // Rate limits
    ...SIM_IDS.rateLimitIds.map((id) => get(`/shield/metrics/rate-limit/${id}`)),
    get(`/shield/metrics/rate-limit/${SIM_IDS.rateLimitNoHistory}`),
    get(`/shield/metrics/rate-limit/${SIM_IDS.rateLimitRulesUnderAttack[0]}`),
    get("/shield/metrics/rate-limit/1", 404),
    get(`/shield/metrics/rate-limits/${zone}`),
    get(`/shield/metrics/rate-limits/${quiet}`),
    get(`/shield/metrics/rate-limits/${SIM_IDS.zoneEnterprise}`),
    get(`/shield/metrics/rate-limits/${unknownZone}`, 404),
    get(`/shield/rate-limits/${zone}`),
    get(`/shield/rate-limits/${zone}?page=2&perPage=2`),
    get(`/shield/rate-limits/${quiet}`),
    get(`/shield/rate-limits/${unknownZone}`, 404),
    get(`/shield/rate-limit/${SIM_IDS.rateLimitRulesUnderAttack[0]}`),
    get("/shield/rate-limit/1", 404),
    // Metrics
    get(`/shield/metrics/overview/${zone}`),
    get(`/shield/metrics/overview/${quiet}`),
    get(`/shield/metrics/overview/${SIM_IDS.zoneWithUnknownEnum}`),
    get(`/shield/metrics/overview/${STAGED_ZONE}`),
    get(`/shield/metrics/overview/${STAGED_ZONE}/detailed?StartDate=${iso(NOW - 7 * D)}&Resolution=3`),
    get(`/shield/metrics/overview/${unknownZone}`, 404),
    get(`/shield/metrics/overview/${zone}/detailed`),
    get(
      `/shield/metrics/overview/${zone}/detailed?StartDate=${iso(NOW - 30 * 60_000)}&EndDate=${iso(NOW)}&Resolution=1`,
    ),
    get(
      `/shield/metrics/overview/${zone}/detailed?StartDate=${iso(NOW - D)}&EndDate=${iso(NOW)}&Resolution=2`,
    ),
    get(`/shield/metrics/overview/${zone}/detailed?StartDate=${iso(NOW - 7 * D)}&Resolution=3`),
    get(`/shield/metrics/overview/${quiet}/detailed?StartDate=${iso(NOW - 28 * D)}&Resolution=4`),
    get(`/shield/metrics/overview/${quiet}/detailed?StartDate=${iso(NOW - 90 * D)}&Resolution=5`),
    get(`/shield/metrics/overview/${quiet}/detailed?StartDate=${iso(NOW - 365 * D)}&Resolution=6`),
    get(`/shield/metrics/overview/${zone}/detailed?StartDate=${iso(NOW - 72 * H)}&Resolution=0`),
    get(`/shield/metrics/overview/${zone}/detailed?StartDate=yesterday`, 400),
    get(`/shield/metrics/overview/${zone}/detailed?StartDate=${iso(NOW - 30 * D)}&Resolution=1`, 400),
    get(`/shield/metrics/overview/${unknownZone}/detailed`, 404),
    // Event logs
    ...["ip", "asn", "country", "ja4", "ua", "url", "ruleId", "feature", "action"].map((g) =>
      post(`/shield/event-logs/${zone}/search`, { ...window15m, groupBy: [g], pageSize: 5, buckets: 15 }),
    ),
    post(`/shield/event-logs/${zone}/search`, { ...window15m, groupBy: ["ip", "ja4"] }),
    post(`/shield/event-logs/${zone}/search`, {
      from: NOW - 72 * H,
      to: NOW,
      groupBy: ["country"],
      buckets: 72,
    }),
    post(`/shield/event-logs/${zone}/search`, { ...window15m, pageSize: 20 }),
    post(`/shield/event-logs/${zone}/search`, {
      ...window15m,
      filters: [{ field: "ip", op: "cidr", value: ["198.51.100.0/24"] }],
      query: "login",
      page: 1,
      pageSize: 3,
    }),
    post(`/shield/event-logs/${quiet}/search`, { ...window15m, groupBy: ["ip"] }),
    post(`/shield/event-logs/${SIM_IDS.zoneWithoutEventLogs}/search`, window15m, 202),
    post(`/shield/event-logs/${zone}/search`, { from: NOW }, 400),
    post(`/shield/event-logs/${zone}/search`, { ...window15m, groupBy: ["nope"] }, 400),
    post(`/shield/event-logs/${unknownZone}/search`, window15m, 404),
    // Triggered WAF rules and their AI recommendations
    get(`/shield/waf/rules/review-triggered/${zone}`),
    get(`/shield/waf/rules/review-triggered/${quiet}`),
    get(`/shield/waf/rules/review-triggered/${unknownZone}`, 404),
    get(`/shield/waf/rules/review-triggered/ai-recommendation/${SIM_IDS.waf.zoneId}/${SIM_IDS.waf.ruleId}`),
    get(
      `/shield/waf/rules/review-triggered/ai-recommendation/${SIM_IDS.wafFailed.zoneId}/${SIM_IDS.wafFailed.ruleId}`,
    ),
    get(
      `/shield/waf/rules/review-triggered/ai-recommendation/${SIM_IDS.wafEmpty.zoneId}/${SIM_IDS.wafEmpty.ruleId}`,
    ),
    get(`/shield/waf/rules/review-triggered/ai-recommendation/${zone}/913100`),
    get(`/shield/waf/rules/review-triggered/ai-recommendation/${zone}/000000`, 404),
    // Core: DNS scans and pull zones
    ...[
      SIM_IDS.dnsZoneCompleted,
      SIM_IDS.dnsZoneLarge,
      SIM_IDS.dnsZoneFailedScan,
      SIM_IDS.dnsZonePendingScan,
      SIM_IDS.dnsZoneInProgressScan,
      SIM_IDS.dnsZoneOddRecords,
    ].map((id) => get(`/dnszone/${id}/records/scan`)),
    get(`/dnszone/${SIM_IDS.dnsZoneNoScan}/records/scan`, 404),
    post("/dnszone/records/scan", { ZoneId: SIM_IDS.dnsZoneCompleted }),
    post("/dnszone/records/scan", { Domain: "elsewhere-example.com" }),
    post("/dnszone/records/scan", { ZoneId: 1, Domain: "a.com" }, 400),
    post("/dnszone/records/scan", { ZoneId: SIM_IDS.unknownDnsZone }, 404),
    get("/pullzone"),
    get(`/pullzone?search=${SIM_IDS.ambiguousDomain}`),
    get("/pullzone?page=2&perPage=5"),
    get("/pullzone?perPage=1", 400),
    get("/dnszone"),
    get("/dnszone?page=1&perPage=5&search=example"),
    get("/dnszone?perPage=1", 400),
    // Mitigations: restart an app, purge a pull zone (all or a tag) or a URL
    post(`/mc/apps/${SIM_IDS.appWithUnknownStatus}/restart`, undefined),
    post("/mc/apps/no-such-app/restart", undefined, 404),
    post(`/pullzone/${SIM_IDS.pullZoneUnderAttack}/purgeCache`, undefined, 204),
    post(`/pullzone/${SIM_IDS.pullZoneUnderAttack}/purgeCache`, { CacheTag: "product-images" }, 204),
    post("/pullzone/1/purgeCache", undefined, 404),
    post(`/purge?url=${encodeURIComponent("https://shop.acme-example.com/app.css")}`, undefined),
    // Mitigations: a shield zone's DDoS sensitivity, WAF execution mode and learning mode; a triggered rule's review
    patch("/shield/shield-zone", { shieldZoneId: zone, shieldZone: { dDoSShieldSensitivity: 4 } }),
    patch("/shield/shield-zone", {
      shieldZoneId: zone,
      shieldZone: { wafExecutionMode: 0, learningMode: true },
    }),
    patch("/shield/shield-zone", {
      shieldZoneId: SIM_IDS.zoneWithUnknownEnum,
      shieldZone: { wafExecutionMode: 1 },
    }),
    patch("/shield/shield-zone", { shieldZoneId: zone, shieldZone: { dDoSShieldSensitivity: 5 } }, 400),
    patch("/shield/shield-zone", { shieldZoneId: zone, shieldZone: { ddos: 1 } }, 400),
    patch("/shield/shield-zone", { shieldZone: { wafExecutionMode: 1 } }, 400),
    patch("/shield/shield-zone", { shieldZoneId: unknownZone, shieldZone: { wafExecutionMode: 1 } }, 404),
    post(`/shield/waf/rules/review-triggered/${zone}`, { ruleId: SIM_IDS.waf.ruleId, action: 2 }),
    post(`/shield/waf/rules/review-triggered/${zone}`, { ruleId: SIM_IDS.waf.ruleId, action: 3 }, 400),
    post(`/shield/waf/rules/review-triggered/${zone}`, { ruleId: "no-such-rule", action: 0 }, 404),
    post(`/shield/waf/rules/review-triggered/${unknownZone}`, { ruleId: "920350", action: 0 }, 404),
    // Mitigations: custom access lists (/edge block)
    get(lists),
    get(`/shield/shield-zone/${unknownZone}/access-lists`, 404),
    post(lists, { name: "edgeops: blocked IPs", type: 0, content: "" }),
    post(lists, { name: "bad", type: 0, content: "not-an-ip" }, 400),
    post(lists, { name: "bad", type: 9, content: "" }, 400),
    get(`${lists}/${SIM_IDS.customerAccessList.listId}`),
    get(`${lists}/${created}`),
    get(`${lists}/1`, 404),
    patch(`${lists}/${created}`, { content: "203.0.113.7\n2001:db8::1" }),
    patch(`${lists}/${created}`, { content: "AS4134" }, 400),
    patch(`${lists}/${created}`, { content: "203.0.113.8", checksum: "0".repeat(64) }, 400),
    patch(`${lists}/1`, { content: "" }, 404),
    patch(`${lists}/configurations/${SIM_IDS.customerAccessList.configurationId + 1}`, {
      isEnabled: true,
      action: 2,
    }),
    patch(`${lists}/configurations/${SIM_IDS.customerAccessList.configurationId + 1}`, { action: 7 }, 400),
    patch(`${lists}/configurations/1`, { action: 2 }, 404),
    get(lists),
  ];
  // Every route without a key, in its family's 401 shape.
  for (const r of ROUTES) {
    const sample = out.find((c) => c.method === r.method && r.pattern.test(c.path.split("?")[0] ?? ""));
    if (sample) out.push({ ...sample, key: null, status: 401 });
  }
  // Every documented refusal inside a 2xx, on demand (the refusal fault), and one claiming no error status.
  const refused = (c: Case, refuse: Refusal = {}): Case => ({ ...c, refuse });
  const category = `/shield/shield-zone/${SIM_IDS.zoneEnterprise}/bot-categorization`;
  out.push(
    refused(patch("/shield/shield-zone", { shieldZoneId: zone, shieldZone: { learningMode: true } }, 202)),
    refused(put(`${category}/categories/1`, { action: 1 }, 202)),
    refused(get(category), { statusCode: 200 }),
    refused(get(`/shield/metrics/rate-limits/${zone}`), { statusCode: 200 }),
    refused(post(`/shield/waf/rules/review-triggered/${zone}`, { ruleId: SIM_IDS.waf.ruleId, action: 2 })),
    refused(get(lists), { statusCode: 403, errorKey: "access_lists.forbidden" }),
    refused(post(lists, { name: "edgeops: blocked IPs", type: 0, content: "" }, 202)),
    refused(patch(`${lists}/${created}`, { content: "203.0.113.9" }, 202)),
    refused(
      patch(
        `${lists}/configurations/${SIM_IDS.customerAccessList.configurationId + 1}`,
        { isEnabled: true, action: 1 },
        202,
      ),
    ),
  );
  return out;
}

// ---- run ---------------------------------------------------------------------------------------------

interface Outcome {
  c: Case;
  status: number;
  text: string;
}

let sim: Simulator;
let ajv: Ajv;
let toJsonSchema: (node: unknown, family: Family) => unknown;
const outcomes: Outcome[] = [];

beforeAll(async () => {
  ({ ajv, toJsonSchema } = documentsAjv({ nullReferences: true }));
  // The statuses below are the friendly ones for unknown access-list ids; the envelope the adversary answers
  // instead is judged against the documents in access-lists.flow.test.ts. A zone PATCH keeps the fields it
  // was not sent: reset ones (a WAF turned off) would leave the later review cases no triggered rule to review;
  // verified-writes.flow.test.ts specifies that reading.
  sim = await startSimulator({
    clock: steppedClock(() => NOW),
    adversary: {
      seed: seedFromEnv(process.env.EDGE_SIMULATOR_SEED),
      pin: { "access-lists.unknown-id": "problem-details", "shield-settings.patch-absent": "keep" },
    },
  });
  sim.scaleIncident(SIM_IDS.zoneQuiet, { eventLogGroups: 300, triggeredRules: 40 });
  // A fault plan in force: the largest attack the plan allows on a zone with every feature on, six days old and
  // still going (its 28-day counters near the documents' 32-bit limit), and an app moved by a status timeline.
  const days = 6 * 24 * 60;
  sim.stageAttack(STAGED_ZONE, {
    startsAt: NOW - days * 60_000,
    rampMinutes: 5,
    durationMinutes: days + 60,
    peakPerMinute: Math.floor(MAX_ZONE_ATTACK_EVENTS / (days + 60 + 30)),
  });
  sim.stageAppStatus(STAGED_APP, [
    { at: NOW - H, status: "failing" },
    { at: NOW - 60_000, status: "progressing" },
  ]);
  for (const c of cases()) {
    if (c.refuse) sim.addFault({ method: c.method, path: exactPath(c.path), refuse: c.refuse, times: 1 });
    const headers: Record<string, string> = c.key === null ? {} : { AccessKey: c.key ?? SIM_API_KEY };
    if (c.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${sim.url}${c.path}`, {
      method: c.method,
      headers,
      ...(c.body === undefined ? {} : { body: JSON.stringify(c.body) }),
    });
    outcomes.push({ c, status: res.status, text: await res.text() });
  }
}, 120_000);

afterAll(async () => {
  await sim?.close();
});

const validators = new Map<string, ValidateFunction>();
function validatorFor(family: Family, schema: Json): ValidateFunction {
  const converted = toJsonSchema(schema, family) as Json;
  const key = JSON.stringify(converted);
  let v = validators.get(key);
  if (v === undefined) {
    v = ajv.compile(converted);
    validators.set(key, v);
  }
  return v;
}
const named = (family: Family, name: string) =>
  validatorFor(family, { $ref: `#/components/schemas/${name}` });

const seenDeliberate = new Set<string>();

/** Errors that are not deliberate; records the deliberate ones seen. */
function realErrors(v: ValidateFunction): string[] {
  const errors = v.errors ?? [];
  const deliberatePaths: string[] = [];
  const kept = errors.filter((e) => {
    const d = DELIBERATE.find((x) => x.keyword === e.keyword && x.path.test(e.instancePath));
    if (d) {
      seenDeliberate.add(d.why);
      deliberatePaths.push(e.instancePath);
    }
    return d === undefined;
  });
  // A combinator around a deliberate value (nullable wrappers, oneOf-wrapped enums) fails with it: not news.
  const isWrapperNoise = (e: (typeof errors)[number]) =>
    ["anyOf", "oneOf", "type"].includes(e.keyword) &&
    deliberatePaths.some((p) => p === e.instancePath || p.startsWith(`${e.instancePath}/`));
  return kept
    .filter((e) => !isWrapperNoise(e))
    .map((e) => `${e.instancePath || "/"} ${e.keyword} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
}

function check(o: Outcome): string[] {
  const op = operationFor(o.c.method, o.c.path.split("?")[0] ?? "");
  if (op === undefined) return [`no documented operation for ${o.c.method} ${o.c.path}`];
  const documented = responsesOf(op)[String(o.status)];
  const label = `${op.method} ${op.template} ${o.status}`;
  const body = o.text === "" ? undefined : (JSON.parse(o.text) as unknown);
  const tryAll = (validators: ValidateFunction[]): string[] => {
    let best: string[] | undefined;
    for (const v of validators) {
      if (body === undefined) return ["empty body where a JSON body is documented"];
      if (v(body)) return [];
      const errs = realErrors(v);
      if (errs.length === 0) return [];
      if (best === undefined || errs.length < best.length) best = errs;
    }
    return best ?? [];
  };
  const familyErrors = FAMILY_ERRORS[op.family].map((n) => named(op.family, n));
  if (documented !== undefined) {
    const schema = documented.content?.["application/json"]?.schema;
    if (schema === undefined) {
      // No content documented: empty, or (Core 400, per the reference notes) the family's error data.
      return body === undefined ? [] : tryAll(familyErrors);
    }
    // GET /pullzone documents its page >= 1 form only in prose: { Items, CurrentPage, TotalItems, HasMoreItems }.
    if (op.template === "/pullzone" && /[?&]page=[1-9]/.test(o.c.path)) {
      const wrapper = body as Json;
      const keys = Object.keys(wrapper).sort();
      if (keys.join() !== "CurrentPage,HasMoreItems,Items,TotalItems") return [`paged keys ${keys.join()}`];
      const v = validatorFor(op.family, schema);
      return v(wrapper.Items) ? [] : realErrors(v);
    }
    return tryAll([validatorFor(op.family, schema)]);
  }
  const undocumented = UNDOCUMENTED[label];
  if (undocumented === undefined) return [`undocumented status: ${label}`];
  const [shape] = undocumented;
  const ok = responsesOf(op)["200"]?.content?.["application/json"]?.schema;
  const documentedShape =
    shape === "envelope" || shape === "plan"
      ? ok === undefined
        ? []
        : [validatorFor(op.family, ok)]
      : familyErrors;
  const errors = tryAll(documentedShape);
  if (errors.length > 0 || body === undefined) return errors;
  const v = validatorFor(op.family, undocumentedShape(shape, o.status));
  return v(body) ? [] : [`not ${shape}: ${ajv.errorsText(v.errors)}`];
}

describe("simulator answers against the OpenAPI documents", () => {
  it("covers every route with a success and a 401", () => {
    for (const r of ROUTES) {
      const hits = outcomes.filter(
        (o) => o.c.method === r.method && r.pattern.test(o.c.path.split("?")[0] ?? ""),
      );
      expect(
        hits.some((o) => o.status >= 200 && o.status < 300),
        `${r.method} ${r.pattern}`,
      ).toBe(true);
      expect(
        hits.some((o) => o.status === 401),
        `${r.method} ${r.pattern}`,
      ).toBe(true);
    }
  });

  it("answers each case with the expected status", () => {
    // Where the adversary echoes the request in a refusal ("shield.refusal-form"), the zone PATCH refuses in
    // its 200 (UpdateShieldZoneResponse, `data` the request) rather than its 202.
    const echoedRefusal = (o: (typeof outcomes)[number]) =>
      o.c.refuse !== undefined && o.status === 200 && (JSON.parse(o.text) as { data?: unknown }).data != null;
    const wrong = outcomes
      .filter((o) => o.status !== o.c.status && !echoedRefusal(o))
      .map(
        (o) => `${o.c.method} ${o.c.path} -> ${o.status} (expected ${o.c.status}) ${o.text.slice(0, 200)}`,
      );
    expect(wrong).toEqual([]);
  });

  it("validates every answer against its documented schema", () => {
    const problems: string[] = [];
    for (const o of outcomes) {
      for (const e of check(o)) problems.push(`${o.c.method} ${o.c.path} ${o.status}: ${e}`);
    }
    expect(problems).toEqual([]);
  });

  it("sees every deliberate deviation (the list has not gone stale)", () => {
    for (const o of outcomes) check(o);
    expect([...seenDeliberate].sort()).toEqual(DELIBERATE.map((d) => d.why).sort());
  });

  it("answered each refusal case with the refusal, not the real answer", () => {
    const refusals = outcomes.filter((o) => o.c.refuse);
    expect(refusals.length).toBeGreaterThanOrEqual(9);
    for (const o of refusals) {
      // A review's refusal may be `success: false` alone, its errorResponse null ("shield.refusal-form").
      const body = JSON.parse(o.text) as { error?: Json; errorResponse?: Json; success?: boolean };
      expect((body.error ?? body.errorResponse)?.success ?? body.success, `${o.c.method} ${o.c.path}`).toBe(
        false,
      );
    }
  });

  it("answered with the fault plan in force", () => {
    const body = (path: string) => {
      const o = outcomes.find((x) => x.c.path === path && x.c.key !== null);
      return JSON.parse(o?.text ?? "{}") as Json;
    };
    const apps = (body("/mc/apps?limit=1000").items ?? []) as Array<{ id: string; status: string }>;
    expect(apps.find((a) => a.id === STAGED_APP)?.status).toBe("progressing");
    const overview = (
      body(`/shield/metrics/overview/${STAGED_ZONE}`).data as { overview: { dDoSMitigated: number } }
    ).overview;
    expect(overview.dDoSMitigated).toBeGreaterThan(200_000_000);
    expect(overview.dDoSMitigated).toBeLessThan(2 ** 31);
  });

  it("fails an undocumented status whose body takes none of the shapes it is allowed", () => {
    const outcome = (method: string, path: string, status: number, body: unknown): Outcome => ({
      c: { method, path, status },
      status,
      text: JSON.stringify(body),
    });
    const noShape = [
      outcome("GET", `/shield/shield-zone/${unknownZone}`, 404, { unexpected: true }),
      outcome("GET", `/shield/shield-zone/${unknownZone}`, 404, { title: "Not Found", status: 500 }),
      outcome("GET", "/shield/metrics/rate-limit/1", 404, { data: null, error: null }),
      outcome("GET", `/shield/waf/rules/review-triggered/${unknownZone}`, 404, { triggeredRules: [] }),
      outcome("GET", `/shield/shield-zone/${quiet}/bot-detection`, 202, {
        data: null,
        error: { statusCode: 202, success: false, errorKey: "zone.busy" },
      }),
      outcome("GET", "/pullzone?page=1&perPage=1", 400, {}),
    ];
    expect(noShape.filter((o) => check(o).length === 0).map((o) => `${o.c.path} ${o.text}`)).toEqual([]);
    // The bodies the simulator does answer take their shapes.
    expect(
      check(
        outcome("GET", "/shield/metrics/rate-limit/1", 404, {
          data: null,
          error: { statusCode: 404, success: false, message: "Rate limit 1 not found." },
        }),
      ),
    ).toEqual([]);
  });

  it("fails a wrong answer (the validation can fail)", () => {
    const op = operationFor("GET", `/shield/shield-zone/${zone}`);
    const schema = op && responsesOf(op)["200"]?.content?.["application/json"]?.schema;
    expect(schema).toBeDefined();
    const v = validatorFor("shield", schema as Json);
    expect(v({ data: { shieldZoneId: zone, planType: 1 } })).toBe(true);
    expect(v({ data: { shieldZoneId: "x" } })).toBe(false);
    expect(v({ data: { shieldZoneId: zone, wafexecutionmode: 1 } })).toBe(false);
    expect(v({ data: { shieldZoneId: zone, dDoSShieldSensitivity: 7 } })).toBe(false);
    const rateLimits = operationFor("GET", `/shield/metrics/rate-limits/${zone}`);
    const rl = validatorFor(
      "shield",
      (rateLimits && responsesOf(rateLimits)["200"])?.content?.["application/json"]?.schema as Json,
    );
    expect(rl({ data: [{ ratelimitId: 1, overview: { totalBreaches: 2 ** 31 } }], error: null })).toBe(false);
  });
});
