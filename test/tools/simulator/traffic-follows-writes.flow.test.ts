/**
 * The simulator applies what is written through its API to its own traffic, from the minute of the write (its
 * clock) on, and never to the minutes before: an access list's Block/Challenge/Log entry takes the matching
 * sources' events (they keep coming, now under accessLists), removing the entry gives them back, and a WAF
 * execution-mode change shifts the WAF events' actions. The event log and the metrics tell the same story.
 * Each case is compared with a twin simulator (same seed, same staged attack) that was never written to.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SIM_IDS, type Simulator, startSimulator } from "../../../tools/simulator/index.js";
import { steppedClock } from "../../support/clock.js";
import { SIM_HEADERS, simJson } from "./clocked-simulator.js";

const MIN = 60_000;
const ZONE = SIM_IDS.zoneUnderAttack; // 18401: WAF in Block mode, DDoS on
const NOW = Date.UTC(2026, 7, 20, 10, 0, 30);
/** 10:00:00, the staged attack's first minute. */
const T0 = NOW - 30_000;
const at = (minutes: number) => T0 + minutes * MIN;

let now = NOW;
let sim: Simulator;
/** Never written to: what the traffic would have been. */
let twin: Simulator;
beforeEach(async () => {
  now = NOW;
  const clock = steppedClock(() => now);
  sim = await startSimulator({ clock, adversary: {} });
  twin = await startSimulator({ clock, adversary: {} });
  for (const s of [sim, twin])
    s.stageAttack(ZONE, { startsAt: T0, rampMinutes: 1, durationMinutes: 180, peakPerMinute: 2_000 });
});
afterEach(async () => {
  await Promise.all([sim.close(), twin.close()]);
});

async function call(s: Simulator, method: string, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${s.url}${path}`, { method, headers: SIM_HEADERS, body: JSON.stringify(body) });
  expect(res.status, `${method} ${path}`).toBe(200);
  return res.json();
}

type Filter = { field: string; op: string; value: string[] };
/** Event-log counts over [from, to) by "feature/action" (friendly spellings), optionally filtered. */
async function events(s: Simulator, from: number, to: number, filters: Filter[] = []) {
  const body = (await call(s, "POST", `/shield/event-logs/${ZONE}/search`, {
    from,
    to,
    filters,
    groupBy: ["feature", "action"],
    pageSize: 100,
  })) as { groups: Array<{ key: { feature: string; action: string }; count: number }> | null };
  const out: Record<string, number> = {};
  for (const g of body.groups ?? []) out[`${g.key.feature}/${g.key.action}`] = g.count;
  return out;
}
const ofIp = (ip: string): Filter[] => [{ field: "ip", op: "eq", value: [ip] }];
const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** The detailed metrics' totals over [from, to) per feature, as "feature/counter". */
async function metrics(s: Simulator, from: number, to: number) {
  const q = `StartDate=${new Date(from).toISOString()}&EndDate=${new Date(to).toISOString()}&Resolution=1`;
  const r = await simJson<{ data: Record<string, { totals?: Record<string, number> }> }>(
    s,
    `/shield/metrics/overview/${ZONE}/detailed?${q}`,
  );
  const out: Record<string, number> = {};
  for (const f of ["waf", "ddos", "rateLimit", "botDetection", "accessLists"])
    for (const [name, n] of Object.entries(r.data[f]?.totals ?? {})) out[`${f}/${name}`] = n;
  return out;
}
/** The metrics' blocked + challenged + logged counts per feature (what the event log counts as its events). */
function actedByFeature(m: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(m)) {
    const [f = "", name = ""] = k.split("/");
    if (/block|challeng|logged/i.test(name)) out[f] = (out[f] ?? 0) + n;
  }
  return out;
}
function byFeature(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(counts)) {
    const f = k.split("/")[0] ?? "";
    out[f] = (out[f] ?? 0) + n;
  }
  return out;
}
const sameFeatures = (a: Record<string, number>, b: Record<string, number>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) expect(a[k] ?? 0, k).toBe(b[k] ?? 0);
};

/** The IPv4 address that sent the most events in [from, to). */
async function busiestAttacker(from: number, to: number): Promise<string> {
  const body = (await call(sim, "POST", `/shield/event-logs/${ZONE}/search`, {
    from,
    to,
    groupBy: ["ip"],
    pageSize: 500,
  })) as { groups: Array<{ key: { ip: string }; count: number }> };
  const top = body.groups.filter((g) => g.key.ip.includes(".")).sort((a, b) => b.count - a.count)[0];
  if (top === undefined) throw new Error("no events");
  return top.key.ip;
}

/** A custom list with `content`, switched on with `action` (AccessListAction: 2 Block, 3 Challenge, 4 Log). */
async function addList(
  type: number,
  content: string,
  action: number,
): Promise<{ id: number; configurationId: number }> {
  const base = `/shield/shield-zone/${ZONE}/access-lists`;
  const made = (await call(sim, "POST", base, { name: "edgeops test", type, content })) as {
    data: { id: number };
  };
  const listed = (
    await simJson<{ customLists: Array<{ listId: number; configurationId: number }> }>(sim, base)
  ).customLists;
  const configurationId = listed.find((l) => l.listId === made.data.id)?.configurationId ?? -1;
  await call(sim, "PATCH", `${base}/configurations/${configurationId}`, { isEnabled: true, action });
  return { id: made.data.id, configurationId };
}

describe("an access list written through the API", () => {
  it("takes a blocked address's events from the minute of the write, keeps the past, and gives them back when removed", async () => {
    now = at(20) + 30_000; // 10:20:30
    const ip = await busiestAttacker(at(0), at(20));
    const pastIp = await events(sim, at(0), at(20), ofIp(ip));
    const pastZone = await metrics(sim, at(0), at(20));
    expect(total(pastIp)).toBeGreaterThan(100);
    // Before the write the address's events are mostly other features' (WAF, DDoS, …).
    expect(total(pastIp) - (pastIp["accessLists/block"] ?? 0)).toBeGreaterThan(100);

    const list = await addList(0, ip, 2); // written at 10:20:30

    // The minutes already answered stay as they were.
    expect(await events(sim, at(0), at(20), ofIp(ip))).toEqual(pastIp);
    expect(await metrics(sim, at(0), at(20))).toEqual(pastZone);

    now = at(40) + 30_000;
    const blocked = await events(sim, at(20), at(40), ofIp(ip));
    const wouldHave = await events(twin, at(20), at(40), ofIp(ip));
    // The attacker keeps sending: every one of its events is now the access list's block, none under any other.
    expect(total(wouldHave)).toBeGreaterThan(100);
    expect(blocked).toEqual({ "accessLists/block": total(wouldHave) });

    /** The address's events that other features would have handled. */
    const taken = total(wouldHave) - (wouldHave["accessLists/block"] ?? 0);
    // The zone's other features lost exactly that address's events, and the access lists' blocks gained them.
    const zone = await events(sim, at(20), at(40));
    const zoneTwin = await events(twin, at(20), at(40));
    for (const k of new Set([...Object.keys(zone), ...Object.keys(zoneTwin)])) {
      const moved = k === "accessLists/block" ? -taken : (wouldHave[k] ?? 0);
      expect((zoneTwin[k] ?? 0) - (zone[k] ?? 0), k).toBe(moved);
    }
    // The metrics agree with the event log: blocked counters up, the threats that passed other features down.
    const m = await metrics(sim, at(20), at(40));
    const mTwin = await metrics(twin, at(20), at(40));
    sameFeatures(actedByFeature(m), byFeature(zone));
    expect((m["accessLists/blockedRequests"] ?? 0) - (mTwin["accessLists/blockedRequests"] ?? 0)).toBe(taken);
    const wafLoggedDrop = (mTwin["waf/loggedRequests"] ?? 0) - (m["waf/loggedRequests"] ?? 0);
    expect(wafLoggedDrop).toBe(wouldHave["waf/log"] ?? 0);

    // Removing the entry (the list emptied at 10:40:30) gives the address's events back from that minute on.
    await call(sim, "PATCH", `/shield/shield-zone/${ZONE}/access-lists/${list.id}`, { content: "" });
    now = at(60) + 30_000;
    expect(await events(sim, at(40), at(60), ofIp(ip))).toEqual(await events(twin, at(40), at(60), ofIp(ip)));
    expect(await metrics(sim, at(40), at(60))).toEqual(await metrics(twin, at(40), at(60)));
    // … and the blocked twenty minutes stay blocked.
    expect(await events(sim, at(20), at(40), ofIp(ip))).toEqual(blocked);
  });

  it("matches a CIDR, a country and an ASN, with the list's action, and ignores lists that are off", async () => {
    now = at(20) + 30_000;
    const ip = await busiestAttacker(at(0), at(20));
    // A /24 around the address, challenged.
    const net = `${ip.split(".").slice(0, 3).join(".")}.0/24`;
    await addList(1, net, 3);
    now = at(30) + 30_000;
    const inNet = await events(sim, at(20), at(30), [{ field: "ip", op: "cidr", value: [net] }]);
    // The network's events are the list's challenges now (beside the blocks the model's own lists already made).
    expect(inNet["accessLists/challenge"] ?? 0).toBeGreaterThan(0);
    expect(Object.keys(inNet).filter((k) => !k.startsWith("accessLists/"))).toEqual([]);
    const inNetBefore = await events(twin, at(20), at(30), [{ field: "ip", op: "cidr", value: [net] }]);
    expect(total(inNet)).toBe(total(inNetBefore));
    expect(inNet["accessLists/block"] ?? 0).toBe(inNetBefore["accessLists/block"] ?? 0);

    // Every source in a country and in an ASN, logged; a list switched off changes nothing.
    const countries = (await call(sim, "POST", `/shield/event-logs/${ZONE}/search`, {
      from: at(20),
      to: at(30),
      groupBy: ["country", "asn"],
      pageSize: 500,
    })) as { groups: Array<{ key: { country: string; asn: string }; count: number }> };
    const [first, second] = [...countries.groups].sort((a, b) => b.count - a.count);
    if (first === undefined || second === undefined) throw new Error("too few origins");
    await addList(3, first.key.country, 4);
    await addList(2, second.key.asn, 4);
    const off = (await call(sim, "POST", `/shield/shield-zone/${ZONE}/access-lists`, {
      name: "off",
      type: 0,
      content: ip,
    })) as { data: { id: number } };
    expect(off.data.id).toBeGreaterThan(0); // created, never switched on
    now = at(40) + 30_000;
    // The list that is off would block the address: it is challenged by the /24 instead.
    const ipNow = await events(sim, at(30), at(40), ofIp(ip));
    const ipTwin = await events(twin, at(30), at(40), ofIp(ip));
    expect(ipNow["accessLists/block"] ?? 0).toBe(ipTwin["accessLists/block"] ?? 0);
    expect(ipNow["accessLists/challenge"]).toBe(total(ipTwin) - (ipTwin["accessLists/block"] ?? 0));
    for (const filters of [
      [{ field: "country", op: "eq", value: [first.key.country] }],
      [{ field: "asn", op: "eq", value: [second.key.asn] }],
    ]) {
      const got = await events(sim, at(30), at(40), filters);
      // All of this origin's events are the lists' now (those in the /24 challenged: Challenge beats Log), and
      // as many as it would have sent anyway.
      expect(Object.keys(got).filter((k) => !k.startsWith("accessLists/"))).toEqual([]);
      expect(got["accessLists/log"] ?? 0).toBeGreaterThan(0);
      expect(total(got)).toBe(total(await events(twin, at(30), at(40), filters)));
    }
  });
});

describe("a shield zone setting written through the API", () => {
  it("WAF execution mode Block → Log logs every WAF event from its minute on, and back to Block blocks them again", async () => {
    const patchMode = (mode: number) =>
      call(sim, "PATCH", "/shield/shield-zone", {
        shieldZoneId: ZONE,
        shieldZone: { wafExecutionMode: mode },
      });
    const waf = (c: Record<string, number>) =>
      Object.fromEntries(Object.entries(c).filter(([k]) => k.startsWith("waf/")));
    now = at(20) + 30_000;
    const pastWaf = waf(await events(sim, at(0), at(20)));
    expect(pastWaf["waf/block"] ?? 0).toBeGreaterThan(pastWaf["waf/log"] ?? 0);
    await patchMode(0);
    expect(waf(await events(sim, at(0), at(20)))).toEqual(pastWaf);

    now = at(40) + 30_000;
    const logged = waf(await events(sim, at(20), at(40)));
    const wouldHave = waf(await events(twin, at(20), at(40)));
    expect(logged).toEqual({ "waf/log": total(wouldHave) });
    const m = await metrics(sim, at(20), at(40));
    expect(m["waf/blockedRequests"] ?? 0).toBe(0);
    expect(m["waf/loggedRequests"]).toBe(total(wouldHave));

    await patchMode(1);
    now = at(60) + 30_000;
    expect(waf(await events(sim, at(40), at(60)))).toEqual(waf(await events(twin, at(40), at(60))));
    expect(waf(await events(sim, at(20), at(40)))).toEqual(logged);
  });
});
