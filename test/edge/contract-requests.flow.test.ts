/**
 * Every request the client can build, with edge-case arguments, is checked with Ajv against what
 * its operation documents (../shared/reference/edge-api, read in place): path and query parameters (names,
 * types, formats, enums, limits, required ones) and the JSON request body. The simulator only answers; the
 * documents judge.
 */
import { describe, expect, it } from "vitest";
import type { EdgeClient } from "../../src/edge/client.js";
import { OPERATIONS, type OperationName } from "../../src/edge/operations.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { documentsAjv, type Json, operationFor } from "../support/openapi.js";
import { useSimulatorClient } from "../support/sim-client.js";

interface Param {
  name: string;
  in: string;
  required?: boolean;
  schema?: Json;
}

const { ajv, toJsonSchema } = documentsAjv({ nullReferences: false });

/** A path or query value (always text on the wire) as its documented type, for Ajv. */
function typed(raw: string, schema: Json | undefined): unknown {
  const type = schema?.type;
  if (type === "integer" || type === "number") return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  if (type === "boolean") return raw === "true" ? true : raw === "false" ? false : raw;
  if (schema?.$ref !== undefined && /^-?\d+$/.test(raw)) return Number(raw);
  return raw;
}

function problems(method: string, path: string, query: Record<string, string>, body: unknown): string[] {
  const op = operationFor(method, path);
  if (!op) return [`${method} ${path}: no documented operation`];
  const params = (op.doc.parameters as Param[] | undefined) ?? [];
  const content = (op.doc.requestBody as { content?: Record<string, { schema?: Json }> } | undefined)
    ?.content;
  const bodySchema = content?.["application/json"]?.schema;
  const out: string[] = [];
  const label = `${method} ${op.template}`;
  const check = (what: string, schema: Json | undefined, value: unknown) => {
    if (!schema) return;
    const valid = ajv.compile(toJsonSchema(schema, op.family) as Json);
    if (!valid(value)) out.push(`${label} ${what}=${JSON.stringify(value)}: ${ajv.errorsText(valid.errors)}`);
  };
  const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? "");
  const values = op.pattern.exec(path)?.slice(1) ?? [];
  names.forEach((name, i) => {
    const p = params.find((x) => x.in === "path" && x.name === name);
    check(`path ${name}`, p?.schema, typed(decodeURIComponent(values[i] ?? ""), p?.schema));
  });
  const documented = params.filter((p) => p.in === "query");
  for (const [name, raw] of Object.entries(query)) {
    const p = documented.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!p) out.push(`${label}: query ${name} is not documented`);
    else check(`query ${name}`, p.schema, typed(raw, p.schema));
  }
  for (const p of documented.filter((x) => x.required))
    if (!Object.keys(query).some((k) => k.toLowerCase() === p.name.toLowerCase()))
      out.push(`${label}: required query ${p.name} missing`);
  if (body !== undefined && !bodySchema) out.push(`${label}: sends a body the operation does not document`);
  if (bodySchema && body !== undefined) {
    const converted = toJsonSchema(bodySchema, op.family) as Json;
    const schema = (converted.$ref ? { $ref: converted.$ref } : converted) as Json;
    const valid = ajv.compile(schema);
    if (!valid(body)) out.push(`${label} body ${JSON.stringify(body)}: ${ajv.errorsText(valid.errors)}`);
  }
  return out;
}

const s = useSimulatorClient();
const Z = SIM_IDS.zoneUnderAttack;
const MAX32 = 2_147_483_647;

/** The operation a call's name starts with ("listApps 1000 with cursor": listApps). */
const operationOf = (name: string) => name.split(" ")[0] ?? "";

/** Every operation, each with arguments at its edges. */
const CALLS: Array<[string, (c: EdgeClient) => Promise<unknown>]> = [
  ["listApps default", (c) => c.listApps()],
  ["listApps 1000 with cursor", (c) => c.listApps({ limit: 1000, cursor: "abc==" })],
  ["listApps 1", (c) => c.listApps({ limit: 1 })],
  ["listShieldZones default", (c) => c.listShieldZones()],
  ["listShieldZones edges", (c) => c.listShieldZones({ page: 3, perPage: 1000 })],
  ["listShieldZones 1", (c) => c.listShieldZones({ page: 1, perPage: 1 })],
  ["listPullZones default", (c) => c.listPullZones()],
  ["listPullZones edges", (c) => c.listPullZones({ page: 2, perPage: 5 })],
  ["listDnsZones", (c) => c.listDnsZones({ page: 1, perPage: 1000 })],
  ["getShieldZone int32 max", (c) => c.getShieldZone(MAX32)],
  ["getShieldZone", (c) => c.getShieldZone(Z)],
  ["getMetricsOverview", (c) => c.getMetricsOverview(Z)],
  ...[0, 1, 2, 3, 4, 5, 6].map(
    (resolution) =>
      [
        `getMetricsOverviewDetailed resolution ${resolution}`,
        (c: EdgeClient) =>
          c.getMetricsOverviewDetailed(Z, {
            from: s.sim.now() - 3_600_000,
            to: s.sim.now(),
            resolution: resolution as 0,
          }),
      ] as [string, (c: EdgeClient) => Promise<unknown>],
  ),
  ["getMetricsOverviewDetailed epoch", (c) => c.getMetricsOverviewDetailed(Z, { from: 0, to: 1 })],
  [
    "searchEventLogs everything",
    (c) =>
      c.searchEventLogs(Z, {
        from: s.sim.now() - 600_000,
        to: s.sim.now(),
        query: "x".repeat(500),
        filters: [
          { field: "ip", op: "cidr", value: ["192.0.2.0/24"] },
          { field: "country", op: "in", value: ["DE", "US"] },
          { field: "ua", op: "wildcard", value: ["*bot*"] },
        ],
        groupBy: ["ip", "asn", "country", "ja4", "ua", "url", "feature", "ruleId", "action"],
        buckets: 500,
        page: 0,
        pageSize: 500,
      }),
  ],
  [
    "searchEventLogs minimal",
    (c) => c.searchEventLogs(Z, { from: s.sim.now() - 1, to: s.sim.now(), buckets: 0, pageSize: 1 }),
  ],
  ["getTriggeredWafRules", (c) => c.getTriggeredWafRules(Z)],
  ["getRateLimits", (c) => c.getRateLimits(Z)],
  ["listRateLimitRules default", (c) => c.listRateLimitRules(Z)],
  ["listRateLimitRules edges", (c) => c.listRateLimitRules(Z, { page: MAX32, perPage: 1000 })],
  ["listRateLimitRules 1", (c) => c.listRateLimitRules(Z, { page: 1, perPage: 1 })],
  // The document types this path's zone id int64.
  ["listRateLimitRules int64 zone", (c) => c.listRateLimitRules(Number.MAX_SAFE_INTEGER)],
  ["getBotDetection", (c) => c.getBotDetection(Z)],
  ["getBotCategories", (c) => c.getBotCategories(Z)],
  ...[0, 7].flatMap((category) =>
    [0, 1, 2].map(
      (action) =>
        [
          `setBotCategoryAction ${category} ${action}`,
          (c: EdgeClient) => c.setBotCategoryAction(Z, category, action as 0),
        ] as [string, (c: EdgeClient) => Promise<unknown>],
    ),
  ),
  ["getRateLimitRule", (c) => c.getRateLimitRule(SIM_IDS.rateLimitRulesUnderAttack[0] ?? 1)],
  ["getRateLimitRule int32 max", (c) => c.getRateLimitRule(MAX32)],
  ["getRateLimitMetrics int32 max", (c) => c.getRateLimitMetrics(MAX32)],
  ["getRateLimitMetrics", (c) => c.getRateLimitMetrics(SIM_IDS.rateLimitIds[0])],
  ["getWafAiRecommendation", (c) => c.getWafAiRecommendation(Z, "942100")],
  ["getWafAiRecommendation odd rule", (c) => c.getWafAiRecommendation(Z, "a/b c?d")],
  ["getLatestDnsScan", (c) => c.getLatestDnsScan(Number.MAX_SAFE_INTEGER)],
  ["triggerDnsScan", (c) => c.triggerDnsScan(Number.MAX_SAFE_INTEGER)],
  ["restartApp", (c) => c.restartApp("mc-x_1")],
  ["purgePullZone", (c) => c.purgePullZone(SIM_IDS.pullZoneUnderAttack)],
  ["purgePullZone tag", (c) => c.purgePullZone(SIM_IDS.pullZoneUnderAttack, "a.b:c/d-e_f")],
  ["purgeUrl", (c) => c.purgeUrl("https://shop.acme-example.com/a b/*?x=1&y=2")],
  ...(
    [
      { dDoSShieldSensitivity: 0 },
      { dDoSShieldSensitivity: 4 },
      { wafExecutionMode: 1 },
      { learningMode: false },
    ] as const
  ).map(
    (u) =>
      [`updateShieldZone ${JSON.stringify(u)}`, (c: EdgeClient) => c.updateShieldZone(Z, u)] as [
        string,
        (c: EdgeClient) => Promise<unknown>,
      ],
  ),
  ...[0, 1, 2].map(
    (a) =>
      [`reviewTriggeredWafRule ${a}`, (c: EdgeClient) => c.reviewTriggeredWafRule(Z, "942100", a as 0)] as [
        string,
        (c: EdgeClient) => Promise<unknown>,
      ],
  ),
  ["listCustomAccessLists", (c) => c.listCustomAccessLists(Z)],
  ["getCustomAccessList", (c) => c.getCustomAccessList(Z, Number.MAX_SAFE_INTEGER)],
  ...[0, 5].map(
    (type) =>
      [
        `createCustomAccessList type ${type}`,
        (c: EdgeClient) => c.createCustomAccessList(Z, { name: "n".repeat(100), type, content: "" }),
      ] as [string, (c: EdgeClient) => Promise<unknown>],
  ),
  ["setCustomAccessListContent empty", (c) => c.setCustomAccessListContent(Z, 1, "")],
  ["setCustomAccessListContent lines", (c) => c.setCustomAccessListContent(Z, 1, "192.0.2.1\n192.0.2.2")],
  ...[0, 5].map(
    (action) =>
      [
        `configureAccessList ${action}`,
        (c: EdgeClient) =>
          c.configureAccessList(Z, Number.MAX_SAFE_INTEGER, { isEnabled: action > 0, action }),
      ] as [string, (c: EdgeClient) => Promise<unknown>],
  ),
];

describe("every request the client builds matches the documents", () => {
  it("covers every operation of the client", () => {
    const covered = new Set(CALLS.map(([name]) => operationOf(name)));
    const operations = Object.keys(OPERATIONS);
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.filter((o) => !covered.has(o))).toEqual([]);
  });

  for (const [name, call] of CALLS) {
    it(name, async () => {
      await call(s.client).catch(() => undefined);
      expect(s.sim.requests.length, "the call reached the API").toBeGreaterThan(0);
      // The call is the operation its name says: its row's method and path were requested.
      const row = OPERATIONS[operationOf(name) as OperationName];
      expect(row, `${name} names an operation of the table`).toBeDefined();
      const path = new RegExp(`^${row.path.replace(/\{\w+\}/g, "[^/]+")}$`);
      expect(
        s.sim.requests.some((r) => r.method === row.method && path.test(r.path)),
        `${name} requested ${row.method} ${row.path}`,
      ).toBe(true);
      const found = s.sim.requests.flatMap((r) => problems(r.method, r.path, r.query, r.body));
      expect(found).toEqual([]);
    });
  }
});
