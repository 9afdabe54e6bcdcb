import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Clock, systemClock } from "../../src/clock.js";
import { createScheduler, type Scheduler, type SchedulerOptions } from "../../src/jobs/schedules.js";
import { createSchedule, parseWhenWords } from "../../src/services/schedules.js";
import type { Schedule } from "../../src/store/index.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { createManualClock, steppedClock } from "../support/clock.js";
import { blocksText, type Harness, startHarness } from "../support/harness.js";

let h: Harness;
let clock = Date.parse("2026-03-27T12:00:00Z");
const schedulers: Scheduler[] = [];

beforeAll(async () => {
  h = await startHarness({ clock: steppedClock(() => clock) });
});
afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
  h.sim.clearFaults();
  for (const s of await h.store.schedules.list("T0001")) await h.store.schedules.remove("T0001", s.id);
});
afterAll(async () => {
  await h?.close();
});

function scheduler(extra: Partial<SchedulerOptions> = {}): Scheduler {
  const s = createScheduler({
    deps: h.deps,
    clientFor: h.app.env.clientFor,
    clock: steppedClock(() => clock),
    scanWait: { firstDelayMs: 20, maxWaitMs: 3000 },
    ...extra,
  });
  schedulers.push(s);
  return s;
}

async function schedule(
  channelId: string,
  when: string[],
  timezone: string,
  zoneId: number = SIM_IDS.dnsZoneCompleted,
) {
  const { schedule: s } = await createSchedule(h.deps, {
    teamId: "T0001",
    channelId,
    userId: "U0002",
    zoneId,
    when: parseWhenWords(when).when,
    timezone,
  });
  return s;
}

const posts = (channel: string) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);
const reload = async (s: Schedule) => (await h.store.schedules.get(s.id))!;
const iso = (ms: number) => new Date(ms).toISOString();

/** A scan wait whose sleeps pass at once, moving its own elapsed time: a wait that gives up without real time. */
function jumpingScanClock(): Pick<Clock, "sleep" | "elapsed"> {
  let elapsed = 0;
  return {
    elapsed: () => elapsed,
    sleep: (ms, signal) => {
      if (signal?.aborted) return Promise.reject(signal.reason);
      elapsed += ms;
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/**
 * A scan-wait clock whose sleeps hang until `release()`; `entered` resolves once the run is in its first
 * sleep. Released, it jumps as jumpingScanClock does.
 */
function hangingScanClock() {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let enter = () => {};
  const entered = new Promise<void>((r) => (enter = r));
  const jumping = jumpingScanClock();
  const clock: Pick<Clock, "sleep" | "elapsed"> = {
    elapsed: jumping.elapsed,
    sleep: (ms, signal) => {
      enter();
      return released.then(() => jumping.sleep(ms, signal));
    },
  };
  return { clock, entered, release };
}

/** Make the zone's scans look unfinished whatever the simulator's real-time scan duration. */
function scansNeverFinish(zoneId: number): void {
  h.sim.addFault({
    method: "GET",
    path: `/dnszone/${zoneId}/records/scan`,
    status: 200,
    body: {
      JobId: "00000000-0000-4000-8000-000000000001",
      ZoneId: zoneId,
      Domain: "slow-example.dev",
      Status: 1,
      CreatedAt: "2026-08-20T09:14:03Z",
      CompletedAt: null,
      Records: null,
      Error: null,
    },
  });
}

/** Tick at each time; return the UTC times at which this channel got a post. */
async function tickAt(sched: Scheduler, channel: string, times: string[]): Promise<string[]> {
  const postedAt: string[] = [];
  for (const t of times) {
    clock = Date.parse(t);
    const before = posts(channel).length;
    await sched.tick();
    if (posts(channel).length > before) postedAt.push(t);
  }
  return postedAt;
}

describe("scheduler: occurrences across daylight-saving changes (injected clock)", () => {
  it("daily 09:00 Europe/Amsterdam posts at 08:00Z before the March change and 07:00Z after", async () => {
    clock = Date.parse("2026-03-27T12:00:00Z");
    const s = await schedule("C0DAILY", ["daily", "09:00"], "Europe/Amsterdam");
    expect(iso(s.nextRunAt)).toBe("2026-03-28T08:00:00.000Z");
    const sched = scheduler();
    const postedAt = await tickAt(sched, "C0DAILY", [
      "2026-03-28T07:59:00Z", // not yet
      "2026-03-28T08:00:00Z",
      "2026-03-28T08:00:30Z", // the same occurrence again: nothing
      "2026-03-29T06:59:00Z",
      "2026-03-29T07:00:00Z", // 09:00 CEST
      "2026-03-29T08:00:00Z", // 09:00 in the old offset: nothing
      "2026-03-30T07:00:10Z",
    ]);
    expect(postedAt).toEqual(["2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:10Z"]);
    const after = await reload(s);
    expect(iso(after.nextRunAt)).toBe("2026-03-31T07:00:00.000Z");
    expect(after.lastRunAt).toBe(Date.parse("2026-03-30T07:00:10Z"));
    expect(after.lastOutcome).toBe("ok");
    const text = blocksText(posts("C0DAILY")[0]!.args.blocks);
    expect(text).toContain("DNS summary · shop-example.com");
    expect(text).toContain("daily at 09:00 (Europe/Amsterdam)");
  });

  it("weekly mon 09:00 America/New_York posts at 13:00Z, then 14:00Z after November's change", async () => {
    clock = Date.parse("2026-10-20T00:00:00Z");
    await schedule("C0WEEKLY", ["weekly", "mon", "09:00"], "America/New_York");
    const sched = scheduler();
    const postedAt = await tickAt(sched, "C0WEEKLY", [
      "2026-10-26T12:59:00Z",
      "2026-10-26T13:00:00Z",
      "2026-11-02T13:00:00Z", // 08:00 EST: not yet
      "2026-11-02T14:00:00Z",
      "2026-11-05T14:00:00Z",
    ]);
    expect(postedAt).toEqual(["2026-10-26T13:00:00Z", "2026-11-02T14:00:00Z"]);
  });

  it('cron "30 2 * * *" in the repeated autumn hour posts once that night', async () => {
    clock = Date.parse("2026-10-24T12:00:00Z");
    await schedule("C0CRON", ["30 2 * * *"], "Europe/Amsterdam");
    const sched = scheduler();
    const postedAt = await tickAt(sched, "C0CRON", [
      "2026-10-25T00:30:00Z", // 02:30 CEST
      "2026-10-25T01:00:00Z",
      "2026-10-25T01:30:00Z", // 02:30 CET, the same wall time again: nothing
      "2026-10-25T01:45:00Z",
      "2026-10-26T01:30:00Z", // Monday 02:30 CET
    ]);
    expect(postedAt).toEqual(["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"]);
  });

  it('cron "30 2 * * *" in the spring gap posts once, at 03:00 local', async () => {
    clock = Date.parse("2026-03-28T12:00:00Z");
    await schedule("C0GAP", ["30 2 * * *"], "Europe/Amsterdam");
    const postedAt = await tickAt(scheduler(), "C0GAP", [
      "2026-03-29T00:30:00Z",
      "2026-03-29T01:00:00Z", // 03:00 CEST
      "2026-03-29T01:30:00Z",
      "2026-03-30T00:30:00Z", // 02:30 CEST
    ]);
    expect(postedAt).toEqual(["2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"]);
  });
});

describe("scheduler: downtime, scans and diffs", () => {
  it("after four days of downtime the missed occurrence is posted once and the next run is computed from now", async () => {
    clock = Date.parse("2026-05-01T00:00:00Z");
    const s = await schedule("C0DOWN", ["daily", "09:00"], "UTC");
    const sched = scheduler();
    clock = Date.parse("2026-05-05T12:00:00Z");
    expect(await sched.tick()).toBe(1);
    expect(await sched.tick()).toBe(0);
    expect(posts("C0DOWN")).toHaveLength(1);
    expect(iso((await reload(s)).nextRunAt)).toBe("2026-05-06T09:00:00.000Z");
  });

  it("diffs records between two summaries, scanning afresh when the latest scan is older than the period", async () => {
    // After the real clock, so the simulator's scans are always older than a day.
    clock = Date.parse("2027-02-01T10:00:00Z");
    const s = await schedule("C0DIFF", ["daily", "09:00"], "UTC", SIM_IDS.dnsZoneNoScan);
    const sched = scheduler();
    clock = Date.parse("2027-02-02T09:00:00Z");
    h.sim.clearRequests();
    expect(await sched.tick()).toBe(1);
    const triggers = () =>
      h.sim.requests.filter((r) => r.method === "POST" && r.path === "/dnszone/records/scan").length;
    expect(triggers()).toBe(1);
    const first = blocksText(posts("C0DIFF")[0]!.args.blocks);
    expect(first).toContain("fresh-example.app");
    expect(first).toContain("first summary");
    expect((await reload(s)).snapshot).toMatchObject({ v: 1 });

    const zone = h.sim.state.dnsZones.get(SIM_IDS.dnsZoneNoScan)!;
    const www = zone.records.find((r) => r.Name === "www")!;
    www.Value = "moved.b-cdn.net";
    zone.records = zone.records.filter((r) => r.Name !== "vpn");
    zone.records.push({ ...www, Name: "shop", Type: 0, Value: "198.51.100.7", IsProxied: false });

    clock = Date.parse("2027-02-03T09:00:00Z");
    expect(await sched.tick()).toBe(1);
    expect(triggers()).toBe(2);
    const second = posts("C0DIFF")[1]!;
    const text = blocksText(second.args.blocks);
    expect(text).toContain("1 added · 1 removed · 1 changed");
    expect(text).toContain("`shop` → 198.51.100.7");
    expect(text).toContain("`vpn`");
    expect(text).toContain("→ moved.b-cdn.net");
    expect(String(second.args.text)).toContain("1 added, 1 removed, 1 changed");
    expect(h.slack.violations).toEqual([]);
  });

  it("a scan that does not finish in time: summarises what exists and says so", async () => {
    clock = Date.parse("2027-02-01T10:00:00Z");
    const s = await schedule("C0SLOW", ["daily", "09:00"], "UTC", SIM_IDS.dnsZoneInProgressScan);
    scansNeverFinish(SIM_IDS.dnsZoneInProgressScan);
    clock = Date.parse("2027-02-02T09:00:00Z");
    await scheduler({ scanWait: { firstDelayMs: 20, maxWaitMs: 200, clock: jumpingScanClock() } }).tick();
    const text = blocksText(posts("C0SLOW")[0]!.args.blocks);
    expect(text).toContain("had not finished");
    expect(text).toContain("In progress");
    expect((await reload(s)).lastOutcome).toBe("partial");
  });

  it("an Edge API error still posts a message naming the zone, and is recorded", async () => {
    clock = Date.parse("2026-06-01T00:00:00Z");
    const s = await schedule("C0EDGE", ["daily", "09:00"], "UTC", SIM_IDS.unknownDnsZone);
    clock = Date.parse("2026-06-01T09:00:00Z");
    await scheduler().tick();
    expect(blocksText(posts("C0EDGE")[0]!.args.blocks)).toContain(
      `I could not read DNS zone ${SIM_IDS.unknownDnsZone}`,
    );
    const after = await reload(s);
    expect(after.lastOutcome).toBe("edge_error");
    expect(after.lastError).toBeTruthy();
  });

  it("stop() cuts a scan wait short, posts what exists, and waits for the tick", async () => {
    clock = Date.parse("2027-02-01T10:00:00Z");
    await schedule("C0STOP", ["daily", "09:00"], "UTC", SIM_IDS.dnsZonePendingScan);
    scansNeverFinish(SIM_IDS.dnsZonePendingScan);
    clock = Date.parse("2027-02-02T09:00:00Z");
    // A 30 s first poll delay keeps the run waiting until stop() cuts it short.
    let waiting = () => {};
    const inScanWait = new Promise<void>((r) => (waiting = r));
    const sched = scheduler({
      scanWait: {
        firstDelayMs: 30_000,
        maxWaitMs: 60_000,
        clock: {
          ...systemClock,
          sleep: (ms, signal) => {
            waiting();
            return systemClock.sleep(ms, signal);
          },
        },
      },
    });
    const ticking = sched.tick();
    await inScanWait;
    const started = Date.now();
    await sched.stop();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(await ticking).toBe(1);
    expect(posts("C0STOP")).toHaveLength(1);
    expect(blocksText(posts("C0STOP")[0]!.args.blocks)).toContain("had not finished");
  });
});

describe("scheduler: stopping before a run has started waiting", () => {
  it("reads the scan once instead of waiting, and posts what exists", async () => {
    clock = Date.parse("2027-02-01T10:00:00Z");
    await schedule("C0STOP2", ["daily", "09:00"], "UTC", SIM_IDS.dnsZonePendingScan);
    scansNeverFinish(SIM_IDS.dnsZonePendingScan);
    // The scan's trigger is answered only once the scheduler has been told to stop.
    let answerTrigger = () => {};
    const held = new Promise<void>((r) => (answerTrigger = r));
    h.sim.addFault({ method: "POST", path: "/dnszone/records/scan", holdUntil: held, times: 1 });
    clock = Date.parse("2027-02-02T09:00:00Z");
    const sched = scheduler({ scanWait: { firstDelayMs: 30_000, maxWaitMs: 60_000 } });
    h.sim.clearRequests();
    const ticking = sched.tick();
    await h.sim.waitForRequest((r) => r.method === "POST" && r.path === "/dnszone/records/scan");
    const stopping = sched.stop();
    answerTrigger();
    await stopping;
    expect(await ticking).toBe(1);
    expect(blocksText(posts("C0STOP2")[0]!.args.blocks)).toContain("had not finished");
    const reads = h.sim.requests.filter((r) => r.method === "GET" && r.path.endsWith("/records/scan"));
    expect(reads).toHaveLength(2); // the latest scan before triggering, and once after
  });
});

describe("scheduler: delivery", () => {
  it("not in the channel: marks failing, one DM to the creator, no storm, recovers after a successful post", async () => {
    clock = Date.parse("2026-06-01T00:00:00Z");
    const s = await schedule("C0GONE", ["daily", "09:00"], "UTC");
    h.slack.addFault({ method: "chat.postMessage", channel: "C0GONE", error: "not_in_channel", times: 2 });
    const dms = () => h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === "DU0002");
    const sched = scheduler();
    const runs = async () => (await h.deps.metrics.schedulerRuns.get()).values;

    clock = Date.parse("2026-06-01T09:00:00Z");
    expect(await sched.tick()).toBe(1);
    let now = await reload(s);
    expect(now.failing).toBe(true);
    expect(now.lastOutcome).toBe("channel_failing");
    expect(now.lastError).toContain("not a member");
    expect(iso(now.nextRunAt)).toBe("2026-06-02T09:00:00.000Z");
    expect(h.slack.callsTo("conversations.open").filter((c) => c.args.users === "U0002")).toHaveLength(1);
    expect(dms()).toHaveLength(1);
    const dm = String(dms()[0]!.args.text);
    expect(dm).toContain("<#C0GONE>");
    expect(dm).toContain("I'm not a member of that channel");
    expect(dm).toContain("/invite @edgeops");
    expect(dm).toContain(`/edge schedule remove ${s.id}`);

    // No storm: ticking again within the same occurrence does nothing.
    for (const t of ["2026-06-01T09:00:30Z", "2026-06-01T12:00:00Z", "2026-06-02T08:59:00Z"]) {
      clock = Date.parse(t);
      expect(await sched.tick()).toBe(0);
    }
    expect(posts("C0GONE")).toHaveLength(1);

    // The next occurrence tries again; still failing: no second DM.
    clock = Date.parse("2026-06-02T09:00:00Z");
    expect(await sched.tick()).toBe(1);
    expect(dms()).toHaveLength(1);
    expect((await reload(s)).failing).toBe(true);

    // Invited: the next post arrives and clears the failing mark.
    clock = Date.parse("2026-06-03T09:00:00Z");
    expect(await sched.tick()).toBe(1);
    now = await reload(s);
    expect(now.failing).toBe(false);
    expect(now.lastOutcome).toBe("ok");
    expect(now.lastError).toBeNull();
    expect(posts("C0GONE")).toHaveLength(3);
    const byOutcome = Object.fromEntries((await runs()).map((v) => [v.labels.outcome, v.value]));
    expect(byOutcome.channel_failing).toBeGreaterThanOrEqual(2);
  });

  it("an archived channel gets its own reason and fix", async () => {
    clock = Date.parse("2026-06-01T00:00:00Z");
    const s = await schedule("C0ARCH", ["daily", "09:00"], "UTC");
    h.slack.addFault({ method: "chat.postMessage", channel: "C0ARCH", error: "is_archived", times: 1 });
    clock = Date.parse("2026-06-01T09:00:00Z");
    await scheduler().tick();
    const dm = h.slack
      .callsTo("chat.postMessage")
      .filter((c) => String(c.args.channel).startsWith("D") && String(c.args.text).includes(s.id));
    expect(dm).toHaveLength(1);
    expect(String(dm[0]!.args.text)).toContain("that channel is archived");
    expect(String(dm[0]!.args.text)).toContain("Unarchive <#C0ARCH>");
  });
});

describe("scheduler: leases (a run lost with its replica is run by another, once)", () => {
  it("a replica stuck past its lease does not post; the one that took the occurrence over posts it once", async () => {
    clock = Date.parse("2026-05-04T08:59:00Z");
    const s = await schedule("C0LEASE", ["daily", "09:00"], "UTC");
    // The scan never finishes, so A's run waits (in the sleep it is given) instead of posting at once.
    scansNeverFinish(SIM_IDS.dnsZoneCompleted);
    // Replica A claims at 09:00 and hangs in its scan wait (as a replica that stopped would).
    const outcomesA: string[] = [];
    // Its first sleep hangs until released; then its scan wait gives up without real time passing.
    const scanTimeA = hangingScanClock();
    const a = scheduler({
      leaseMs: 60_000,
      scanWait: { firstDelayMs: 20, maxWaitMs: 3_000, clock: scanTimeA.clock },
      onRun: (_s, r) => outcomesA.push(r.outcome),
    });
    clock = Date.parse("2026-05-04T09:00:00Z");
    const tickA = a.tick();
    // A has claimed (its run is in its scan wait): the lease is its.
    await scanTimeA.entered;
    expect((await reload(s)).leaseUntil).toBe(clock + 60_000);
    // B ticks while A's lease holds: nothing is due.
    const b = scheduler({
      leaseMs: 60_000,
      scanWait: { firstDelayMs: 20, maxWaitMs: 300, clock: jumpingScanClock() },
    });
    clock = Date.parse("2026-05-04T09:00:30Z");
    expect(await b.tick()).toBe(0);
    // A's lease ended without a renewal (its clock stood still): B takes the occurrence over and posts it.
    clock = Date.parse("2026-05-04T09:01:01Z");
    expect(await b.tick()).toBe(1);
    expect(posts("C0LEASE")).toHaveLength(1);
    const after = await reload(s);
    expect(after).toMatchObject({ leaseUntil: null, lastOutcome: "partial", lastRunAt: clock });
    expect(iso(after.nextRunAt)).toBe("2026-05-05T09:00:00.000Z");
    // A wakes up: the fence stops its post.
    scanTimeA.release();
    await tickA;
    expect(outcomesA).toEqual(["superseded"]);
    expect(posts("C0LEASE")).toHaveLength(1);
    expect(await reload(s)).toMatchObject({ leaseUntil: null, lastRunAt: clock });
  });

  it("a run that outlasts several lease periods keeps its lease by renewing it, and posts once", async () => {
    clock = Date.parse("2026-05-04T08:59:00Z");
    const s = await schedule("C0RENEW", ["daily", "09:00"], "UTC");
    scansNeverFinish(SIM_IDS.dnsZoneCompleted);
    // A's renewals (every leaseMs / 3) run on this manual clock's timers, stamped with `clock`.
    const timers = createManualClock(0);
    const scanTimeA = hangingScanClock();
    const a = scheduler({
      leaseMs: 1_500,
      clock: { ...timers, now: () => clock },
      scanWait: { firstDelayMs: 20, maxWaitMs: 3_000, clock: scanTimeA.clock },
    });
    const b = scheduler({ leaseMs: 3_000 });
    clock = Date.parse("2026-05-04T09:00:00Z");
    const tickA = a.tick();
    await scanTimeA.entered;
    // 4 s pass (A renews every 500 ms, stamped by the clock that moves with its timers); B keeps looking.
    for (let i = 0; i < 10; i++) {
      clock += 400;
      await timers.advance(400);
      await h.settled();
      expect(await b.tick()).toBe(0);
    }
    scanTimeA.release();
    expect(await tickA).toBe(1);
    expect(posts("C0RENEW")).toHaveLength(1);
    expect(await reload(s)).toMatchObject({ leaseUntil: null, lastOutcome: "partial" });
  });
});
