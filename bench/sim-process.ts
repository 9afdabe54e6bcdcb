/**
 * The Edge API simulator in its own process (so its CPU is not the bot's), 150 ms a call, accepting
 * one key per benchmark workspace. The orchestrator asks it, over IPC, what it received.
 */
import {
  type RecordedRequest,
  SIM_IDS,
  type StagedAttack,
  startSimulator,
} from "../tools/simulator/index.js";
import { type CountArgs, keyFor, SIM_LATENCY_MS, serveRpc } from "./common.js";

const keys = Number(process.env.BENCH_SIM_KEYS ?? "100");
const sim = await startSimulator({
  latencyMs: Number(process.env.BENCH_SIM_LATENCY_MS ?? SIM_LATENCY_MS),
  apiKeys: Array.from({ length: keys }, (_, i) => keyFor(i)),
  // Each workspace (key) is its own account here: one approval's change is not in force for the others.
  botCategoriesPerKey: true,
});

function matching({ method, pathIncludes, query, since = 0 }: CountArgs): RecordedRequest[] {
  return sim.requests.filter(
    (r) =>
      r.at >= since &&
      (method === undefined || r.method === method) &&
      (pathIncludes === undefined || r.path.includes(pathIncludes)) &&
      Object.entries(query ?? {}).every(([k, v]) => r.query[k] === v),
  );
}

serveRpc(
  {
    /** How many requests matched. */
    count: (args: CountArgs) => matching(args).length,
    /** Arrival times (ms) of matching requests. */
    arrivals: (args: CountArgs) => matching(args).map((r) => r.at),
    /** Arrival times (ms) of matching requests, by the Edge API key they carried. */
    arrivalsByKey: (args: CountArgs) => {
      const byKey: Record<string, number[]> = {};
      for (const r of matching(args)) {
        const key = String(r.headers.accesskey ?? "");
        const list = byKey[key] ?? [];
        list.push(r.at);
        byKey[key] = list;
      }
      return byKey;
    },
    /** Per matching request: its AccessKey and how long the simulator held it (received → answered, ms). */
    held: (args: CountArgs) =>
      matching(args)
        .filter((r) => r.receivedAt !== undefined && r.answeredAt !== undefined)
        .map((r) => ({
          key: r.headers.accesskey ?? "",
          ms: (r.answeredAt as number) - (r.receivedAt as number),
        })),
    clear: () => {
      sim.clearRequests();
      return true;
    },
    /** Slow every matching request by `latencyMs` (the cluster bench keeps schedule runs in flight across a kill). */
    slowPath: ({ path, latencyMs }: { path: string; latencyMs: number }) => {
      sim.addFault({ path, latencyMs });
      return true;
    },
    clearFaults: () => {
      sim.clearFaults();
      return true;
    },
    /** Stage an attack on a shield zone (the cluster bench's alerts): see Simulator.stageAttack. */
    stageAttack: ({ zone, ...attack }: StagedAttack & { zone: number }) => {
      sim.stageAttack(zone, attack);
      return true;
    },
    setLatency: (ms: number) => {
      sim.setLatency(ms);
      return true;
    },
    /** Set a bot category's current action on a shield zone, so a requested change is a real change. */
    setCategory: ({ zone, category, action }: { zone: number; category: number; action: number }) => {
      const group = sim.state.botCategories.get(zone)?.find((g) => g.category === category);
      if (!group) throw new Error(`no category ${category} on zone ${zone}`);
      group.categoryAction = action;
      // Every key's own copy starts again from this value.
      for (const k of [...sim.state.botCategoriesByKey.keys()])
        if (k.endsWith(` ${zone}`)) sim.state.botCategoriesByKey.delete(k);
      return true;
    },
    /** Add `eventLogGroups` distinct sources to a zone's event log (the incident card's rows; 0 removes them). */
    scaleIncident: ({ zone, eventLogGroups }: { zone: number; eventLogGroups: number }) => {
      sim.scaleIncident(zone, { eventLogGroups });
      return true;
    },
    /** The matching requests as received, to be sent again (the incident card's floor). */
    recorded: (args: CountArgs) =>
      matching(args).map((r) => ({
        method: r.method,
        path: r.path,
        query: r.query,
        body: r.body,
        accessKey: r.headers.accesskey ?? "",
      })),
    /** The lines of the access lists named `name` on a shield zone (the cluster bench's one-list phase). */
    accessListLines: ({ zone, name }: { zone: number; name: string }) =>
      (sim.state.accessLists.get(zone) ?? [])
        .filter((l) => l.name === name)
        .flatMap((l) => l.content.split("\n").filter((x) => x !== "")),
    stop: async () => {
      await sim.close();
      setImmediate(() => process.exit(0));
      return true;
    },
  },
  { url: sim.url, zone: SIM_IDS.firstShieldZone },
);
