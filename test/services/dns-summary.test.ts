import { describe, expect, it } from "vitest";
import type { DnsScan, DnsScanRecord } from "../../src/edge/schemas/core.js";
import {
  diffRecords,
  readSnapshot,
  type SnapRecord,
  summarise,
  toSnapRecord,
  toSnapshot,
} from "../../src/services/dns-summary.js";
import { dnsSummaryFailedMessage, dnsSummaryMessage } from "../../src/slack/blocks/dns-summary.js";
import { ACTIONS } from "../../src/slack/ids.js";
import { checkBlockKitLimits } from "../support/block-kit-limits.js";
import { blocksText, findButtons } from "../support/harness.js";

const r = (t: string, n: string, v: string, ttl: number | null = 300, p = false, x?: string): SnapRecord => ({
  t,
  n,
  v,
  ttl,
  p,
  ...(x ? { x } : {}),
});

const rec = (over: Partial<DnsScanRecord>): DnsScanRecord => ({
  name: "@",
  type: 0,
  ttl: 300,
  value: "192.0.2.1",
  priority: null,
  weight: null,
  port: null,
  isProxied: false,
  ...over,
});

function scan(records: DnsScanRecord[], over: Partial<DnsScan> = {}): DnsScan {
  return {
    jobId: "job-2",
    zoneId: 5678,
    domain: "shop-example.com",
    status: 2,
    createdAt: "2026-05-02T09:00:00Z",
    completedAt: "2026-05-02T09:00:30Z",
    records,
    error: null,
    ...over,
  };
}

const schedule = { id: "sabc2345", label: "daily at 09:00 (Europe/Amsterdam)" };

describe("record diff (identity: type + name + value; same type + name with another value is a change)", () => {
  it("finds added, removed, and attribute changes (TTL, proxied, priority)", () => {
    const before = [
      r("A", "@", "192.0.2.1", 300, true),
      r("A", "api", "192.0.2.2"),
      r("TXT", "@", "v=spf1 -all", 3600),
      r("MX", "@", "mx1.example.com", 3600, false, "prio 10"),
    ];
    const after = [
      r("A", "@", "192.0.2.1", 60, false),
      r("TXT", "@", "v=spf1 -all", 3600),
      r("MX", "@", "mx1.example.com", 3600, false, "prio 20"),
      r("CNAME", "www", "shop.b-cdn.net", 300, true),
    ];
    const d = diffRecords(before, after);
    expect(d.added).toEqual([r("CNAME", "www", "shop.b-cdn.net", 300, true)]);
    expect(d.removed).toEqual([r("A", "api", "192.0.2.2")]);
    expect(d.changed).toEqual([
      { before: r("A", "@", "192.0.2.1", 300, true), after: r("A", "@", "192.0.2.1", 60, false) },
      {
        before: r("MX", "@", "mx1.example.com", 3600, false, "prio 10"),
        after: r("MX", "@", "mx1.example.com", 3600, false, "prio 20"),
      },
    ]);
  });

  it("a name whose value moved is one change, not an add and a remove", () => {
    const d = diffRecords(
      [r("CNAME", "www", "old.b-cdn.net"), r("NS", "@", "kiki.bunny.net"), r("NS", "@", "coco.bunny.net")],
      [r("CNAME", "www", "new.b-cdn.net"), r("NS", "@", "kiki.bunny.net"), r("NS", "@", "lulu.bunny.net")],
    );
    expect(d.added).toEqual([]);
    expect(d.removed).toEqual([]);
    expect(d.changed.map((c) => [c.before.v, c.after.v])).toEqual([
      ["old.b-cdn.net", "new.b-cdn.net"],
      ["coco.bunny.net", "lulu.bunny.net"],
    ]);
  });

  it("extra values of a name are added or removed; duplicates count", () => {
    const d = diffRecords(
      [r("A", "@", "192.0.2.1"), r("A", "@", "192.0.2.1")],
      [r("A", "@", "192.0.2.1"), r("A", "@", "192.0.2.7"), r("A", "@", "192.0.2.8")],
    );
    expect(d.changed).toEqual([{ before: r("A", "@", "192.0.2.1"), after: r("A", "@", "192.0.2.7") }]);
    expect(d.added).toEqual([r("A", "@", "192.0.2.8")]);
    expect(d.removed).toEqual([]);
    expect(diffRecords([r("A", "x", "1")], [r("A", "x", "1")])).toEqual({
      added: [],
      removed: [],
      changed: [],
    });
    expect(diffRecords([], [r("A", "x", "1")]).added).toHaveLength(1);
    expect(diffRecords([r("A", "x", "1")], []).removed).toHaveLength(1);
  });

  it("normalises names (case, trailing dot, apex) but keeps type identity", () => {
    expect(toSnapRecord(rec({ name: "WWW.", type: 2, value: " a.example. " }))).toEqual(
      r("CNAME", "www", "a.example."),
    );
    expect(toSnapRecord(rec({ name: "", type: 4, priority: 10 })).n).toBe("@");
    expect(toSnapRecord(rec({ type: 4, priority: 10, weight: 5, port: 443 })).x).toBe(
      "prio 10, weight 5, port 443",
    );
    const d = diffRecords([r("A", "www", "1.2.3.4")], [r("AAAA", "www", "1.2.3.4")]);
    expect(d.added).toHaveLength(1);
    expect(d.removed).toHaveLength(1);
  });

  it("reads only snapshots it wrote", () => {
    const snap = toSnapshot(scan([rec({})]));
    expect(readSnapshot(JSON.parse(JSON.stringify(snap)))).toEqual(snap);
    expect(readSnapshot(null)).toBeNull();
    expect(readSnapshot({ v: 2, records: [] })).toBeNull();
    expect(readSnapshot("garbage")).toBeNull();
  });
});

describe("summaries and their message", () => {
  const first = scan(
    [
      rec({ name: "@", value: "192.0.2.1", isProxied: true }),
      rec({ name: "api", value: "192.0.2.2" }),
      rec({ name: "www", type: 2, value: "shop.b-cdn.net", isProxied: true }),
    ],
    { jobId: "job-1" },
  );

  it("the first summary has counts and no diff; the second shows what changed since", () => {
    const one = summarise(5678, first, null, { triggered: false, incomplete: false });
    expect(one.summary.diff).toBeNull();
    expect(one.summary.counts).toEqual([
      { type: "A", count: 2 },
      { type: "CNAME", count: 1 },
    ]);
    expect(one.summary.proxied).toBe(2);
    const text1 = blocksText(dnsSummaryMessage(one.summary, schedule).blocks);
    expect(text1).toContain("first summary");
    expect(text1).toContain("A 2 · CNAME 1");

    const second = scan([
      rec({ name: "@", value: "192.0.2.1", isProxied: false }),
      rec({ name: "www", type: 2, value: "shop2.b-cdn.net", isProxied: true }),
      rec({ name: "mail", value: "192.0.2.9" }),
    ]);
    const two = summarise(5678, second, one.snapshot, { triggered: true, incomplete: false });
    expect(two.summary.diff?.added.map((x) => x.n)).toEqual(["mail"]);
    expect(two.summary.diff?.removed.map((x) => x.n)).toEqual(["api"]);
    expect(two.summary.diff?.changed.map((c) => c.after.n)).toEqual(["@", "www"]);
    const msg = dnsSummaryMessage(two.summary, schedule);
    const text = blocksText(msg.blocks);
    expect(text).toContain("1 added · 1 removed · 2 changed");
    expect(text).toContain("no longer proxied");
    expect(text).toContain("shop.b-cdn.net → shop2.b-cdn.net");
    expect(text).toContain("(fresh scan)");
    expect(msg.text).toContain("1 added, 1 removed, 2 changed");
    expect(findButtons(msg.blocks).map((b) => [b.action_id, b.value])).toEqual([
      [ACTIONS.dnsScanNow, "5678"],
    ]);
    expect(checkBlockKitLimits("message", msg as never)).toEqual([]);
  });

  it("a failed scan shows its error and keeps the previous snapshot for the next diff", () => {
    const prev = toSnapshot(first);
    const failed = scan([], { status: 3, error: "SERVFAIL from ns1 <upstream>", completedAt: null });
    const out = summarise(5678, failed, prev, { triggered: true, incomplete: false });
    expect(out.snapshot).toBeNull();
    expect(out.summary.diff).toBeNull();
    expect(out.summary.total).toBe(0);
    const text = blocksText(dnsSummaryMessage(out.summary, schedule).blocks);
    expect(text).toContain("The scan failed:* SERVFAIL from ns1 &lt;upstream&gt;");
  });

  it("an unfinished scan says so and shows the previous summary's counts", () => {
    const running = scan([], { status: 1, completedAt: null });
    const out = summarise(5678, running, toSnapshot(first), { triggered: true, incomplete: true });
    expect(out.summary.countsFromPrevious).toBe(true);
    expect(out.summary.total).toBe(3);
    const text = blocksText(dnsSummaryMessage(out.summary, schedule).blocks);
    expect(text).toContain("had not finished");
    expect(text).toContain("from the previous summary");
  });

  it("stays within Slack's limits for a 540-record zone whose every record changed", () => {
    const many = (v: string) =>
      Array.from({ length: 540 }, (_, i) =>
        rec({ name: `edge-${i}`, value: `${v}-${i}`.repeat(8), type: i % 4 }),
      );
    const prev = toSnapshot(scan(many("a")));
    const out = summarise(5678, scan(many("b")), prev, { triggered: false, incomplete: false });
    expect(out.summary.diff?.changed).toHaveLength(540);
    const msg = dnsSummaryMessage(out.summary, schedule);
    expect(checkBlockKitLimits("message", msg as never)).toEqual([]);
    expect(blocksText(msg.blocks)).toContain("…and 525 more.");
  });

  it("the Edge API failure message names the zone and keeps Scan now", () => {
    const msg = dnsSummaryFailedMessage(5678, "The Edge API key was refused.", schedule);
    expect(blocksText(msg.blocks)).toContain("I could not read DNS zone 5678: The Edge API key was refused.");
    expect(findButtons(msg.blocks)[0]?.action_id).toBe(ACTIONS.dnsScanNow);
  });
});
