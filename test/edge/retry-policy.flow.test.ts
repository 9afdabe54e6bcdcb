import { afterEach, describe, expect, it } from "vitest";
import type { EdgeApi } from "../../src/edge/client.js";
import { EdgeApiError } from "../../src/edge/errors.js";
import { testEdgeApi } from "../support/edge-api.js";
import { type CannedAnswer, type CannedServer, startCannedServer } from "./support/canned-server.js";

const apps = { items: [], meta: { totalItems: 0 }, cursor: null };
const rateLimited: CannedAnswer = { status: 429, headers: { "retry-after": "0" } };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function setup(answers: CannedAnswer[]): Promise<{ server: CannedServer; api: EdgeApi }> {
  const server = await startCannedServer((_r, i) => answers[i] ?? { status: 200, body: apps });
  const api = testEdgeApi(server.url, { ratePerSec: 100, concurrency: 4 });
  cleanups.push(async () => {
    await api.close(0);
    await server.close();
  });
  return { server, api };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as EdgeApiError,
  );

describe("the retry policy (p-retry with the key queue's pause)", () => {
  it("counts 429 retries apart from 5xx retries: two of each still end in the answer", async () => {
    const { server, api } = await setup([{ status: 502 }, rateLimited, { status: 503 }, rateLimited]);
    const page = await api.forKey("k").listApps();
    expect(page.items).toEqual([]);
    expect(server.requests).toHaveLength(5);
  });

  it("gives up after the policy's 5xx retries (three attempts), with the last error", async () => {
    const { server, api } = await setup([{ status: 502 }, { status: 502 }, { status: 503 }]);
    const e = await failure(api.forKey("k").listApps());
    expect(e).toBeInstanceOf(EdgeApiError);
    expect(e?.kind).toBe("server");
    expect(e?.status).toBe(503);
    expect(server.requests).toHaveLength(3);
  });

  it("gives up after the policy's 429 retries (four attempts)", async () => {
    const { server, api } = await setup([rateLimited, rateLimited, rateLimited, rateLimited]);
    const e = await failure(api.forKey("k").triggerDnsScan(5));
    expect(e?.kind).toBe("rate_limited");
    expect(server.requests).toHaveLength(4);
  });

  it("a call that is not safe to repeat is retried after a 429 but never after a 5xx", async () => {
    const { server, api } = await setup([rateLimited, { status: 502 }]);
    const e = await failure(api.forKey("k").triggerDnsScan(5));
    expect(e?.kind).toBe("server");
    expect(server.requests.map((r) => r.method)).toEqual(["POST", "POST"]);
  });

  it("a 4xx other than 429 is not retried", async () => {
    const { server, api } = await setup([{ status: 400, body: { title: "no" } }]);
    const e = await failure(api.forKey("k").listApps());
    expect(e?.kind).toBe("bad_request");
    expect(server.requests).toHaveLength(1);
  });

  it("closing the API stops retrying", async () => {
    // The first answer (a 502, which a read would retry) is held until the API has closed.
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const { server, api } = await setup([{ status: 502, holdUntil: held }]);
    const call = failure(api.forKey("k").listApps());
    await server.waitForRequests(1);
    await api.close(0);
    const e = await call;
    expect(e).toBeInstanceOf(EdgeApiError);
    release();
    expect(server.requests).toHaveLength(1);
    expect(api.queueStats()).toEqual({ keys: 1, waiting: 0, inFlight: 0 });
  });
});
