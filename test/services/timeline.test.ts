import { performance } from "node:perf_hooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildTimeline, type TimelineEntry } from "../../src/services/timeline.js";
import { openStore, type Store } from "../../src/store/index.js";
import {
  captureLogger,
  configFor,
  dropSchema,
  masterKeyB64,
  pgReachable,
  randomSchema,
  TEST_DATABASE_URL,
  tempDir,
} from "../store/helpers.js";

/**
 * The timeline's read model against both stores: what edgeops stored about one zone in a window comes back
 * as one chronological story (who and when), private channels' entries only for their members, and a 24 h
 * episode with 500 changes is built from the store quickly (measured against a floor in the same run).
 */

const TEAM = "T0001";
const ZONE = 4321;
const HOUR = 3_600_000;
const START = 1_700_000_000_000;

const engines: { engine: "sqlite" | "postgres"; enabled: boolean }[] = [
  { engine: "sqlite", enabled: true },
  { engine: "postgres", enabled: await pgReachable() },
];

for (const { engine, enabled } of engines) {
  describe.skipIf(!enabled)(`timeline read model (${engine})`, () => {
    let clock = START;
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      clock = START;
      const dir = await tempDir();
      const schema = engine === "postgres" ? randomSchema() : undefined;
      store = await openStore({
        config: configFor({
          DATA_DIR: dir.dir,
          ENCRYPTION_KEY: masterKeyB64(),
          ...(engine === "postgres" ? { DATABASE_URL: TEST_DATABASE_URL } : {}),
        }),
        logger: captureLogger().logger,
        now: () => clock,
        ...(schema ? { pgSchema: schema } : {}),
      });
      cleanup = async () => {
        await store.close();
        if (schema) await dropSchema(schema);
        await dir.cleanup();
      };
    });
    afterEach(async () => cleanup());

    async function zoneWatch(channelId: string) {
      const created = await store.watches.createIfRoom(
        {
          teamId: TEAM,
          channelId,
          createdBy: "U0001",
          kind: "zone",
          target: String(ZONE),
          options: { label: "shop.example.com" },
          nextPollAt: clock,
        },
        { perChannel: 10, perWorkspace: 10 },
      );
      if (created.kind !== "created") throw new Error("no watch");
      return created.item;
    }

    /** A change asked, approved and applied as the engine records it: the request's moves and their audit. */
    async function appliedBlock(i: number, channelId: string, opts: { temporaryMs?: number } = {}) {
      const value = `10.0.${Math.floor(i / 250)}.${i % 250}`;
      const params = { shieldZoneId: ZONE, type: "ip", value, state: "block" };
      const r = await store.approvals.create({
        kind: "access_block",
        teamId: TEAM,
        channelId,
        requesterId: "U0002",
        params,
        observed: "none",
        expiresAt: clock + HOUR,
        undoAfterMs: opts.temporaryMs ?? null,
      });
      const details = { requestId: r.id, channelId, params };
      await store.audit.append({
        teamId: TEAM,
        userId: "U0002",
        action: "access_block.request",
        target: `shield zone ${ZONE} / ip ${value}`,
        outcome: "pending",
        details,
      });
      clock += 1_000;
      await store.approvals.transition(r.id, "pending", "approved", {
        decidedBy: "U0001",
        decidedAt: clock,
        approvedBy: ["U0001"],
      });
      await store.audit.append({
        teamId: TEAM,
        userId: "U0001",
        action: "access_block.approve",
        target: `shield zone ${ZONE} / ip ${value}`,
        outcome: "approved",
        details,
      });
      clock += 1_000;
      await store.approvals.transition(r.id, "approved", "applied", {
        ...(opts.temporaryMs ? { undoAt: clock + opts.temporaryMs } : {}),
      });
      await store.approvals.setTargetOwner(TEAM, `${TEAM}/shield zone ${ZONE}/access ip ${value}`, r.id);
      await store.audit.append({
        teamId: TEAM,
        userId: "U0001",
        action: "access_block.apply",
        target: `shield zone ${ZONE} / ip ${value}`,
        outcome: "applied",
        details,
      });
      return r;
    }

    const line = (e: TimelineEntry) =>
      e.kind === "change" ? `${e.step} ${e.change} by ${e.by}` : `${e.kind} by ${e.by}`;

    it("tells one zone's alert, acknowledgement, mute and changes in order, with who and when", async () => {
      const watch = await zoneWatch("C0001");
      const episode = await store.episodes.open({
        watchId: watch.id,
        teamId: TEAM,
        channelId: "C0001",
        subject: String(ZONE),
        seq: 1,
        kind: "attack",
        details: {
          subject: {
            kind: "zone",
            shieldZoneId: ZONE,
            label: "shop.example.com",
            readings: [{ signal: "waf", count: 420, mean: 12, z: 9, over: true }],
            topOffender: "203.0.113.9",
            ddosSensitivity: 1,
          },
          reopened: 0,
        },
      });
      if (!episode) throw new Error("no episode");
      clock += 60_000;
      await store.episodes.acknowledge(episode.id, "U0003");
      await store.audit.append({
        teamId: TEAM,
        userId: "U0003",
        action: "watch.mute",
        target: `watch:${watch.id}`,
        outcome: "ok",
        details: { until: clock + HOUR, channelId: "C0001" },
      });
      clock += 60_000;
      const block = await appliedBlock(1, "C0001", { temporaryMs: 30 * 60_000 });
      // Another zone's change and a rejected one on this zone.
      await store.approvals.create({
        kind: "access_block",
        teamId: TEAM,
        channelId: "C0001",
        requesterId: "U0002",
        params: { shieldZoneId: 9999, type: "ip", value: "10.9.9.9", state: "block" },
        expiresAt: clock + HOUR,
      });
      clock += 60_000;
      const rejected = await store.approvals.create({
        kind: "access_block",
        teamId: TEAM,
        channelId: "C0001",
        requesterId: "U0002",
        params: { shieldZoneId: ZONE, type: "country", value: "CN", state: "block" },
        expiresAt: clock + HOUR,
      });
      clock += 1_000;
      await store.approvals.transition(rejected.id, "pending", "rejected", {
        decidedBy: "U0003",
        decidedAt: clock,
      });
      // No audit for this one (as if pruned): its row still tells asked and rejected.
      clock += 10 * 60_000;
      const resolved = await store.episodes.get(episode.id);
      await store.episodes.update(episode.id, resolved?.version ?? 1, {
        status: "resolved",
        resolvedAt: clock,
      });

      const t = await buildTimeline(
        { store, now: () => clock },
        { teamId: TEAM, zoneId: ZONE, window: "24h", audience: { kind: "all" } },
      );
      expect(t.entries.map(line)).toEqual([
        "alert_opened by null",
        "alert_acknowledged by U0003",
        "watch_muted by U0003",
        "asked Block IP 10.0.0.1 on shield zone 4321 by U0002",
        "approved Block IP 10.0.0.1 on shield zone 4321 by U0001",
        "applied Block IP 10.0.0.1 on shield zone 4321 by U0001",
        "asked Block country CN on shield zone 4321 by U0002",
        "rejected Block country CN on shield zone 4321 by U0003",
        "alert_resolved by null",
      ]);
      const opened = t.entries[0];
      expect(opened?.kind === "alert_opened" && opened.signals).toEqual([
        { signal: "waf", count: 420, mean: 12, over: true },
      ]);
      expect(t.mitigations).toEqual([
        expect.objectContaining({ requestId: block.id, until: START + 2 * 60_000 + 2_000 + 30 * 60_000 }),
      ]);
      expect(t.alerts).toMatchObject({ count: 1, firing: 0, firstOpenedAt: START, lastResolvedAt: clock });
      expect(t.hidden).toBe(0);

      // A 1 h window ending after the alert leaves out what came before it.
      clock += 55 * 60_000;
      const lastHour = await buildTimeline(
        { store, now: () => clock },
        { teamId: TEAM, zoneId: ZONE, window: "1h", audience: { kind: "all" } },
      );
      expect(lastHour.entries.map(line)).toEqual(["alert_resolved by null"]);
      // The temporary block is still in force, whatever the window.
      expect(lastHour.mitigations.map((m) => m.requestId)).toEqual([block.id]);
    });

    it("shows a private channel's entries only to its members (admins see all)", async () => {
      await appliedBlock(1, "C0001");
      clock += 60_000;
      await appliedBlock(2, "GPRIVATE");
      const forMember = await buildTimeline(
        { store, now: () => clock },
        {
          teamId: TEAM,
          zoneId: ZONE,
          window: "24h",
          audience: { kind: "channels", channelIds: new Set(["C0001"]) },
        },
      );
      expect(forMember.entries.every((e) => e.channelId === "C0001")).toBe(true);
      expect(forMember.entries).toHaveLength(3);
      expect(forMember.mitigations).toHaveLength(1);
      // Three steps and one mitigation of the private channel are left out, and counted.
      expect(forMember.hidden).toBe(4);
      const forAdmin = await buildTimeline(
        { store, now: () => clock },
        { teamId: TEAM, zoneId: ZONE, window: "24h", audience: { kind: "all" } },
      );
      expect(forAdmin.entries).toHaveLength(6);
      expect(forAdmin.hidden).toBe(0);
    });

    it("builds a 24 h episode with 500 changes from the store (measured against a floor)", async () => {
      const watch = await zoneWatch("C0001");
      const episode = await store.episodes.open({
        watchId: watch.id,
        teamId: TEAM,
        channelId: "C0001",
        subject: String(ZONE),
        seq: 1,
        kind: "attack",
        details: null,
      });
      if (!episode) throw new Error("no episode");
      for (let i = 0; i < 500; i++) {
        await appliedBlock(i, "C0001", i % 2 === 0 ? { temporaryMs: 48 * HOUR } : {});
        clock += 2 * 60_000 + 800; // 500 changes over ~23 h
      }
      const audience = { kind: "all" } as const;
      const input = { teamId: TEAM, zoneId: ZONE, window: "24h" as const, audience };
      const deps = { store, now: () => clock };
      // Warm up (prepared statements, caches), then time the build and a floor: an empty zone's timeline,
      // the same queries with nothing to find, in the same run on the same machine.
      await buildTimeline(deps, input);
      await buildTimeline(deps, { ...input, zoneId: 1 });
      const runs = 5;
      const timed = async (zoneId: number) => {
        const times: number[] = [];
        for (let i = 0; i < runs; i++) {
          const t0 = performance.now();
          await buildTimeline(deps, { ...input, zoneId });
          times.push(performance.now() - t0);
        }
        return times.sort((a, b) => a - b)[Math.floor(runs / 2)] ?? 0;
      };
      const floor = await timed(1);
      const build = await timed(ZONE);
      const t = await buildTimeline(deps, input);
      expect(t.entries.filter((e) => e.kind === "change")).toHaveLength(1_500);
      expect(t.entries[0]?.kind).toBe("alert_opened");
      expect(t.mitigations).toHaveLength(500);
      expect(t.cut).toBe(false);
      for (let i = 1; i < t.entries.length; i++)
        expect(t.entries[i]?.at ?? 0).toBeGreaterThanOrEqual(t.entries[i - 1]?.at ?? 0);
      console.log(
        `[timeline bench ${engine}] 24 h, 500 changes (1,500 steps): build ${build.toFixed(1)} ms (median of ${runs}); floor (empty zone) ${floor.toFixed(1)} ms; ${(build / Math.max(floor, 0.01)).toFixed(1)}× the floor`,
      );
    }, 120_000);
  });
}
