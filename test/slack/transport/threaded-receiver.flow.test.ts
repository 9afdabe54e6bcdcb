import { afterEach, describe, expect, it } from "vitest";
import { BUSY_RETRY_AFTER_S } from "../../../src/slack/transport/front-thread.js";
import { type Harness, startHarness } from "../../support/harness.js";
import { BOB } from "../../support/users.js";

/**
 * The HTTP front thread hands signed payloads to the main thread only while fewer than
 * HTTP_MAX_PAYLOADS_IN_FLIGHT are being handled there; beyond that a signed payload is answered 503 with
 * Retry-After (Slack sends events again; a person sees the command fail) instead of waiting in a queue
 * without bound. Through the real receiver: signed commands, the main thread held on a Slack call.
 */

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("a flood of signed payloads while the main thread is busy", () => {
  it("is answered 503 with Retry-After beyond the limit, and served again once the main thread caught up", async () => {
    h = await startHarness({ env: { HTTP_MAX_PAYLOADS_IN_FLIGHT: "3" } });
    const harness = h;
    await harness.settled();
    // `/edge audit` by a non-admin waits on users.conversations: held, the main thread keeps each in flight.
    let release = () => {};
    harness.slack.addFault({
      method: "users.conversations",
      holdUntil: new Promise<void>((resolve) => {
        release = resolve;
      }),
    });
    const held = [];
    for (let i = 0; i < 3; i++) {
      const res = await harness.command("audit", { userId: BOB });
      expect(res.status).toBe(200);
      held.push(res);
    }
    const flood = await Promise.all(
      Array.from({ length: 30 }, () => harness.command("audit", { userId: BOB })),
    );
    expect(flood.map((r) => r.status)).toEqual(Array(30).fill(503));
    expect(flood.every((r) => r.retryAfter === String(BUSY_RETRY_AFTER_S))).toBe(true);
    expect(harness.logs.text).toContain("too many Slack payloads in flight");

    release();
    for (const res of held) await harness.slack.waitForResponse(res.responseId);
    // Once the main thread has finished them, payloads are acknowledged and handled again.
    await expect.poll(async () => (await harness.command("help", { userId: BOB })).status).toBe(200);
  });
});
