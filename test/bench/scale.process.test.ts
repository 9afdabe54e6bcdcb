import { describe, expect, it } from "vitest";
import { formatClusterTable, runClusterBench } from "../../bench/cluster.js";
import { IN_CI, pgReachable } from "../support/helpers.js";

/**
 * The cluster bench's scale phase at small scale, as `npm run bench -- --replicas 3 --only scale` runs it:
 * commands, Approve clicks and zone watches at once, first on one replica alone, then on three replicas
 * from source (tsx) behind the proxy, on the real PostgreSQL and Redis. Structure and correctness only
 * (every answer, exactly one PUT, no window over a key's cap); `npm run bench` measures.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const reachable = await pgReachable();

describe.skipIf(!reachable && !IN_CI)(
  "the scale phase: commands, approvals and watches at once (small scale)",
  () => {
    it("reports each figure for three replicas and one, per-replica CPU and the shared Edge rate, and loses nothing", async () => {
      const r = await runClusterBench({
        replicas: 3,
        only: ["scale"],
        scaleWorkspaces: 40,
        scaleCommandRate: 20,
        scaleApprovalRate: 5,
        scaleWatches: 20,
        scaleWatchIntervalMs: 2_000,
        scaleSeconds: 5,
        // Its own logical database: the cluster test (db 3) uses the same key names.
        redisUrl: `${REDIS_URL.replace(/\/\d*$/, "")}/4`,
        compiled: false,
        quiet: !process.env.BENCH_VERBOSE,
        out: undefined,
      });
      const text = formatClusterTable(r);
      const s = r.scale;
      expect(s, text).toBeDefined();
      if (!s) return;
      expect(r.acks, text).toBeUndefined();
      expect(s.figures.map((f) => f.figure)).toEqual([
        "command ack",
        "/edge zones overhead",
        "/edge apps overhead",
        "click ack",
        "click → applied",
      ]);
      for (const f of s.figures) {
        expect(f.cluster.p99, `${f.figure}\n${text}`).toBeGreaterThan(0);
        expect(f.oneReplica.p99, `${f.figure}\n${text}`).toBeGreaterThan(0);
      }
      expect(s.cluster.cpu.map((c) => c.replica)).toEqual([1, 2, 3]);
      expect(s.oneReplica.cpu.map((c) => c.replica)).toEqual([1]);
      for (const run of [s.cluster, s.oneReplica]) {
        // 100 commands and 25 clicks in 5 s, every one answered; the proxy spread them over every replica.
        expect(run.commands.sent, text).toBe(100);
        expect(run.clicks.sent, text).toBe(25);
        expect(run.clicks.pendingBefore, text).toBe(25);
        for (const c of run.cpu) {
          expect(c.cpuMs, text).toBeGreaterThan(0);
          expect(c.requests, text).toBeGreaterThan(0);
        }
        expect(
          run.cpu.reduce((n, c) => n + c.requests, 0),
          text,
        ).toBe(125);
        expect(run.cpuMsPerRequestAll, text).toBeGreaterThan(0);
        expect(run.commands.failed, text).toBe(0);
        expect(run.commands.zones.missing + run.commands.apps.missing, text).toBe(0);
        expect(run.clicks.failed, text).toBe(0);
        expect(run.clicks.notApplied, text).toBe(0);
        expect(run.clicks.exactlyOnce, text).toBe(25);
        expect(run.edge.windowsOverCap, text).toBe(0);
        expect(run.edge.calls, text).toBeGreaterThan(0);
        // 20 watches every 2 s: the pollers were evaluating them during the load.
        expect(run.watches.evaluatedSinceLoad, text).toBeGreaterThan(0);
      }
      expect(s.cluster.via).toBe("proxy");
      expect(s.oneReplica.via).toBe("direct");
      const scaleVerdicts = r.verdicts.filter((v) => v.target.startsWith("scale:"));
      expect(scaleVerdicts, text).toHaveLength(4);
      for (const v of scaleVerdicts.filter((v) => !v.target.includes("click ack")))
        expect(v.met, text).toBe(true);
    }, 300_000);
  },
);
