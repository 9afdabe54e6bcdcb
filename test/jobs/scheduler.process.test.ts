/**
 * The scheduler's post honours Slack's 429 Retry-After. The wait is the Slack Web API client's own
 * (@slack/web-api retries after Retry-After on real time; no clock of the bot's moves it), so this test
 * waits its one real second on the process floor (moved from scheduler.flow.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScheduler } from "../../src/jobs/schedules.js";
import { createSchedule, parseWhenWords } from "../../src/services/schedules.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import { type Harness, startHarness } from "../support/harness.js";

let h: Harness;
let clock = Date.parse("2026-06-01T00:00:00Z");

beforeAll(async () => {
  h = await startHarness({ clock: steppedClock(() => clock) });
});
afterAll(async () => {
  await h?.close();
});

const posts = (channel: string) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);

describe("scheduler: delivery", () => {
  it("honours Slack's 429 Retry-After and posts once", async () => {
    clock = Date.parse("2026-06-01T00:00:00Z");
    const { schedule: s } = await createSchedule(h.deps, {
      teamId: "T0001",
      channelId: "C0RATE",
      userId: "U0002",
      zoneId: SIM_IDS.dnsZoneCompleted,
      when: parseWhenWords(["daily", "09:00"]).when,
      timezone: "UTC",
    });
    h.slack.addFault({ method: "chat.postMessage", channel: "C0RATE", retryAfterSec: 1, times: 1 });
    clock = Date.parse("2026-06-01T09:00:00Z");
    const sched = createScheduler({
      deps: h.deps,
      clientFor: h.app.env.clientFor,
      clock: steppedClock(() => clock),
      scanWait: { firstDelayMs: 20, maxWaitMs: 3000 },
    });
    try {
      await sched.tick();
    } finally {
      await sched.stop();
    }
    const attempts = posts("C0RATE");
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(950);
    expect((await h.store.schedules.get(s.id))?.lastOutcome).toBe("ok");
  });
});
