import { describe, expect, it } from "vitest";
import { DNS_RECORD_TYPE_LABELS, dnsScanSchema, dnsScanTriggerSchema } from "../../src/edge/schemas/core.js";
import {
  appStatusLabel,
  endpointTypeLabel,
  listApplicationsResponseSchema,
} from "../../src/edge/schemas/mc.js";
import {
  BOT_CATEGORY_LABELS,
  bodyLimitActionLabel,
  botCategoryLabel,
  browserFingerprintAggressionLabel,
  ddosSensitivityLabel,
  getShieldZonesResponseSchema,
  planTypeLabel,
  rateLimitMetricsSchema,
  wafExecutionModeLabel,
} from "../../src/edge/schemas/shield.js";

describe("schemas", () => {
  it("tolerate unknown fields and normalise Magic Containers enum case", () => {
    const page = listApplicationsResponseSchema.parse({
      items: [
        {
          id: "a1",
          name: "web",
          description: "d",
          status: "Active",
          displayEndpoint: { id: "e", address: "web.b-cdn.net", type: "PUBLICIP", extra: 1 },
          runtimeType: "shared",
        },
        { id: "a2", status: "sleeping" },
      ],
      meta: { totalItems: 2 },
      cursor: "",
      somethingNew: true,
    });
    expect(page.nextCursor).toBeNull();
    expect(page.items[0]).toEqual({
      id: "a1",
      name: "web",
      description: "d",
      status: "active",
      displayEndpoint: { id: "e", address: "web.b-cdn.net", type: "publicIp" },
    });
    expect(page.items[1]).toMatchObject({ id: "a2", name: "a2", description: null, displayEndpoint: null });
    expect(appStatusLabel(page.items[1]!.status)).toBe("Unknown (sleeping)");
    expect(appStatusLabel("FAILING")).toBe("Failing");
    expect(endpointTypeLabel("publicIp")).toBe("Public IP");
  });

  it("keep integer enum values the spec does not list", () => {
    const r = getShieldZonesResponseSchema.parse({
      data: [{ shieldZoneId: 1, planType: 9, wafExecutionMode: 7, dDoSShieldSensitivity: 4, newField: "x" }],
      page: { totalCount: 1, currentPage: 1, pageSize: 10, nextPage: null },
    });
    const z = r.data![0]!;
    expect(z.planType).toBe(9);
    expect(planTypeLabel(z.planType)).toBe("Unknown (9)");
    expect(wafExecutionModeLabel(z.wafExecutionMode)).toBe("Unknown (7)");
    expect(ddosSensitivityLabel(z.ddosShieldSensitivity)).toBe("Challenge");
    expect(z.pullZoneId).toBeNull();
    expect(bodyLimitActionLabel(z.wafRequestBodyLimitAction)).toBe("Not set");
    expect(browserFingerprintAggressionLabel(4)).toBe("Custom");
    expect(botCategoryLabel(255)).toBe("System");
    expect(Object.keys(BOT_CATEGORY_LABELS)).toHaveLength(9);
    expect(Object.keys(DNS_RECORD_TYPE_LABELS).map(Number)).toEqual([
      0, 1, 2, 3, 4, 8, 9, 10, 12, 13, 14, 15, 16,
    ]);
  });

  it("accept nulls where the spec says nullable", () => {
    expect(
      rateLimitMetricsSchema.parse({ overview: {}, ratelimitOverviewPastTwentyEightDays: null }),
    ).toEqual({
      overview: { totalBreaches: 0, loggedBreaches: 0, challengedBreaches: 0, blockedBreaches: 0 },
      days: [],
      unreadableDays: [],
    });
    const scan = dnsScanSchema.parse({
      JobId: "j",
      ZoneId: null,
      Domain: "example.com",
      Status: 5,
      CreatedAt: "2026-08-20T00:00:00Z",
      CompletedAt: null,
      Records: [{ Name: "@", Type: null, Ttl: null, Value: "1.2.3.4", IsProxied: false }],
      Error: null,
    });
    expect(scan.status).toBe(5);
    expect(scan.records[0]).toMatchObject({ name: "@", type: null, value: "1.2.3.4", isProxied: false });
    expect(dnsScanTriggerSchema.parse({ JobId: "j", Status: 0 })).toEqual({ jobId: "j", status: 0 });
  });

  it("reject what cannot be right", () => {
    expect(getShieldZonesResponseSchema.safeParse({ data: [{ shieldZoneId: "1" }] }).success).toBe(false);
    expect(listApplicationsResponseSchema.safeParse({ items: [{ id: 7 }] }).success).toBe(false);
    // An app without an id (the document leaves it optional) is left out and counted, not a failure.
    expect(listApplicationsResponseSchema.parse({ items: [{ name: "no id" }] })).toMatchObject({
      items: [],
      skipped: 1,
    });
  });
});
