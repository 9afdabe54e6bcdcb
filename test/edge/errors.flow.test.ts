import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EdgeApi } from "../../src/edge/client.js";
import { describeEdgeError, EdgeApiError, kindForStatus, readErrorBody } from "../../src/edge/errors.js";
import { testEdgeApi } from "../support/edge-api.js";
import { type CannedAnswer, type CannedServer, startCannedServer } from "./support/canned-server.js";

const KEY = "test-key-0123456789";

let server: CannedServer;
let api: EdgeApi;

beforeAll(async () => {
  server = await startCannedServer();
  api = testEdgeApi(server.url);
});
afterAll(async () => {
  await api.close();
  await server.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

/** A Shield answer of `status` whose envelope holds `error` (statusCode the same, success false) beside `payload`. */
function shieldFailure(
  status: number,
  error: { message?: string; errorKey?: string },
  payload: Record<string, unknown> = { data: null },
): CannedAnswer {
  return { status, body: { ...payload, error: { statusCode: status, success: false, ...error } } };
}

async function failWith(answer: CannedAnswer, call: (c: ReturnType<EdgeApi["forKey"]>) => Promise<unknown>) {
  server.handle(() => answer);
  const err = await call(api.forKey(KEY)).then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EdgeApiError);
  return err as EdgeApiError;
}

describe("error body shapes → kind and sentence", () => {
  it("Magic Containers error details (400 with errors[]) → bad_request with the field message", async () => {
    const err = await failWith(
      {
        status: 400,
        body: {
          title: "One or more validation errors occurred.",
          status: 400,
          detail: "The request is invalid.",
          instance: "/apps",
          errors: [{ field: "limit", message: "The field limit must be between 1 and 1000." }],
        },
      },
      (c) => c.listApps(),
    );
    expect(err.kind).toBe("bad_request");
    expect(err.status).toBe(400);
    expect(err.operation).toBe("listApps");
    expect(err.apiMessage).toContain("limit: The field limit must be between 1 and 1000.");
    expect(err.isRetryable).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(describeEdgeError(err)).toMatch(
      /^The Edge API refused the request: The request is invalid\..*Check the values/,
    );
  });

  it("problem details on 401 → unauthorized, not retried", async () => {
    const err = await failWith(
      {
        status: 401,
        body: {
          type: "https://tools.ietf.org/html/rfc9110#section-15.5.2",
          title: "Unauthorized",
          status: 401,
        },
      },
      (c) => c.listApps(),
    );
    expect(err.kind).toBe("unauthorized");
    expect(server.requests).toHaveLength(1);
    expect(describeEdgeError(err)).toBe(
      "The Edge API rejected this workspace's API key: an admin can set a new one with /edge key.",
    );
  });

  it("a bare Shield {statusCode: 401} → unauthorized", async () => {
    const err = await failWith({ status: 401, body: { statusCode: 401 } }, (c) => c.listShieldZones());
    expect(err.kind).toBe("unauthorized");
    expect(err.errorKey).toBeUndefined();
  });

  it("the Shield envelope on 404 → not_found with errorKey, message and the zone in the sentence", async () => {
    const err = await failWith(
      shieldFailure(404, { message: "Shield Zone not found.", errorKey: "shield_zone.not_found" }),
      (c) => c.getBotDetection(42),
    );
    expect(err.kind).toBe("not_found");
    expect(err.errorKey).toBe("shield_zone.not_found");
    expect(err.apiMessage).toBe("Shield Zone not found.");
    expect(describeEdgeError(err)).toBe(
      "Shield zone 42 was not found: check the id. Find a zone by its domain with /edge zones and part of the name, e.g. /edge zones shop.example.com.",
    );
  });

  it("a Shield 202 with invalid_plan_type.* → plan_not_eligible", async () => {
    const err = await failWith(
      shieldFailure(
        202,
        {
          message: "Bot categorization is not available on this plan.",
          errorKey: "invalid_plan_type.bot_categorization",
        },
        { categories: null },
      ),
      (c) => c.getBotCategories(7),
    );
    expect(err.kind).toBe("plan_not_eligible");
    expect(err.status).toBe(202);
    expect(describeEdgeError(err)).toMatch(/^This shield zone's plan does not include bot categorization/);
  });

  it("a Shield 403 with invalid_plan_type.* → plan_not_eligible, a plain 403 → forbidden", async () => {
    const plan = await failWith(shieldFailure(403, { errorKey: "invalid_plan_type.bot_detection" }), (c) =>
      c.getBotDetection(7),
    );
    expect(plan.kind).toBe("plan_not_eligible");
    expect(describeEdgeError(plan)).toContain("does not include bot detection");
    const forbidden = await failWith({ status: 403 }, (c) => c.getBotDetection(7));
    expect(forbidden.kind).toBe("forbidden");
    expect(describeEdgeError(forbidden)).toContain("/edge key");
  });

  it("a 500 with no body → server, retried twice for a GET", async () => {
    const err = await failWith({ status: 500 }, (c) => c.getRateLimitMetrics(7001));
    expect(err.kind).toBe("server");
    expect(err.isRetryable).toBe(true);
    expect(server.requests).toHaveLength(3);
    expect(describeEdgeError(err)).toContain("HTTP 500");
  });

  it("Core {ErrorKey, Field, Message} on 400 → bad_request with errorKey", async () => {
    const err = await failWith(
      {
        status: 400,
        body: { ErrorKey: "dnszone.scan.invalid_request", Field: "ZoneId", Message: "Invalid zone." },
      },
      (c) => c.triggerDnsScan(5),
    );
    expect(err.kind).toBe("bad_request");
    expect(err.errorKey).toBe("dnszone.scan.invalid_request");
    expect(err.apiMessage).toBe("Invalid zone. (ZoneId)");
  });

  it("Core 404 with an empty body → not_found, with the DNS scan sentence", async () => {
    const err = await failWith({ status: 404 }, (c) => c.getLatestDnsScan(51006));
    expect(err.kind).toBe("not_found");
    expect(err.apiMessage).toBeUndefined();
    expect(describeEdgeError(err)).toMatch(/^No DNS scan was found for DNS zone 51006/);
  });

  it("the POST scan trigger is not retried after a 500", async () => {
    const err = await failWith({ status: 503 }, (c) => c.triggerDnsScan(5));
    expect(err.kind).toBe("server");
    expect(server.requests).toHaveLength(1);
  });

  it("malformed JSON → invalid_response, not retried, no SyntaxError leaks", async () => {
    const err = await failWith({ status: 200, body: '{"items": [{"id": "a"' }, (c) => c.listApps());
    expect(err.kind).toBe("invalid_response");
    expect(err.cause).toBeInstanceOf(SyntaxError);
    expect(server.requests).toHaveLength(1);
    expect(describeEdgeError(err)).toContain("could not understand");
  });

  it("a body of the wrong shape → invalid_response naming the field, not a ZodError", async () => {
    const err = await failWith({ status: 200, body: { data: [{ shieldZoneId: "nope" }] } }, (c) =>
      c.listShieldZones(),
    );
    expect(err.kind).toBe("invalid_response");
    expect(err.message).toContain("data.0.shieldZoneId");
    expect(err.name).toBe("EdgeApiError");
  });

  it("a reset connection → network, retried for GETs", async () => {
    const err = await failWith({ reset: true }, (c) => c.getBotCategories(3));
    expect(err.kind).toBe("network");
    expect(server.requests).toHaveLength(3);
    expect(describeEdgeError(err)).toContain("could not reach the Edge API");
  });

  it("a 2xx envelope claiming an error status without data → that status's kind", async () => {
    const err = await failWith(
      {
        status: 200,
        body: { data: null, error: { statusCode: 404, success: false, message: "Rate limit not found" } },
      },
      (c) => c.getRateLimitMetrics(9),
    );
    expect(err.kind).toBe("not_found");
    expect(describeEdgeError(err)).toBe("Rate limit 9 was not found: check the id.");
  });
});

describe("describeEdgeError", () => {
  const e = (kind: EdgeApiError["kind"], operation = "listApps") =>
    new EdgeApiError({ kind, operation, message: "x" });

  it("says what to do for each kind", () => {
    expect(describeEdgeError(e("queue_full"))).toBe(
      "Too many Edge API requests are waiting for this workspace; try again in a few seconds.",
    );
    expect(describeEdgeError(e("rate_limited"))).toMatch(/rate-limiting.*try again/);
    expect(describeEdgeError(e("timeout"))).toMatch(/did not answer in time; try again/);
    expect(describeEdgeError(e("plan_not_eligible", "getWafAiRecommendation"))).toMatch(
      /^This shield zone's plan does not include WAF AI recommendations/,
    );
    expect(
      describeEdgeError(
        new EdgeApiError({ kind: "invalid_argument", operation: "x", message: "The id must be 1" }),
      ),
    ).toBe("The id must be 1.");
  });

  it("turns unknown errors into a generic sentence without their text", () => {
    const s = describeEdgeError(new Error("ECONNREFUSED 10.0.0.1 AccessKey=abc"));
    expect(s).toMatch(/^Something went wrong while talking to the Edge API/);
    expect(s).not.toContain("abc");
    expect(describeEdgeError("weird")).toMatch(/^Something went wrong/);
  });

  it("maps status to kind in one place", () => {
    expect([400, 401, 403, 404, 408, 409, 422, 429, 500, 502].map((s) => kindForStatus(s))).toEqual([
      "bad_request",
      "unauthorized",
      "forbidden",
      "not_found",
      "timeout",
      "bad_request",
      "bad_request",
      "rate_limited",
      "server",
      "server",
    ]);
    expect(kindForStatus(400, "invalid_plan_type.waf")).toBe("plan_not_eligible");
  });

  it("reads every error body shape", () => {
    expect(readErrorBody(undefined)).toEqual({});
    expect(readErrorBody({ statusCode: 401 })).toEqual({ bodyStatus: 401 });
    expect(readErrorBody({ ErrorKey: "k", Message: "m" })).toEqual({ errorKey: "k", apiMessage: "m" });
    expect(readErrorBody({ title: "T", status: 401 })).toEqual({ apiMessage: "T", bodyStatus: 401 });
    expect(
      readErrorBody({ errorResponse: { statusCode: 400, success: false, message: "no", errorKey: "e" } }),
    ).toEqual({
      errorKey: "e",
      apiMessage: "no",
      bodyStatus: 400,
    });
  });
});

describe("a response body over maxBodyBytes (EDGE_API_MAX_BODY_BYTES)", () => {
  const LIMIT = 4096;
  let small: EdgeApi;
  beforeAll(() => {
    small = testEdgeApi(server.url, { maxBodyBytes: LIMIT });
  });
  afterAll(async () => {
    await small.close();
  });
  const padded = (bytes: number) => ({ data: [], padding: "x".repeat(bytes) });
  const failing = (call: Promise<unknown>) =>
    call.then(
      () => {
        throw new Error("expected the call to fail");
      },
      (e: unknown) => e as EdgeApiError,
    );

  it("an answer announcing a larger Content-Length → too_large at once, not retried", async () => {
    server.handle(() => ({
      status: 200,
      headers: { "content-length": String(LIMIT * 100) },
      body: "{",
    }));
    const err = await failing(small.forKey(KEY).listShieldZones());
    expect(err).toBeInstanceOf(EdgeApiError);
    expect(err.kind).toBe("too_large");
    expect(err.isRetryable).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(describeEdgeError(err)).toMatch(/larger than edgeops accepts.*EDGE_API_MAX_BODY_BYTES/);
  });

  it("one byte over the limit → too_large; exactly the limit is read", async () => {
    const atLimit = JSON.stringify({ data: [], page: { currentPage: 1, pageSize: 10, totalCount: 0 } });
    const fill = (n: number) => `${atLimit.slice(0, -1)},"pad":"${"x".repeat(n)}"}`;
    const exact = fill(LIMIT - fill(0).length);
    expect(Buffer.byteLength(exact)).toBe(LIMIT);
    server.handle(() => ({ status: 200, body: exact }));
    await expect(small.forKey(KEY).listShieldZones()).resolves.toMatchObject({ items: [], totalCount: 0 });
    server.handle(() => ({ status: 200, body: `${exact} ` }));
    expect((await failing(small.forKey(KEY).listShieldZones())).kind).toBe("too_large");
  });

  it("an oversized error answer still reports its status (a 500 is retried as a server error)", async () => {
    server.handle(() => ({ status: 500, body: padded(LIMIT * 4) }));
    const err = await failing(small.forKey(KEY).getBotCategories(3));
    expect(err.kind).toBe("server");
    expect(server.requests).toHaveLength(3);
  });

  it("a PUT answered 2xx with an oversized body is still applied", async () => {
    server.handle(() => ({ status: 200, body: padded(LIMIT * 4) }));
    await expect(small.forKey(KEY).setBotCategoryAction(3, 2, 1)).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });
});
