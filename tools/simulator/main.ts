/**
 * `npm run simulator [-- --port 8787 --latency 150 --scan-ms 1000 --seed 1 --strict 7]`: runs the Edge API simulator
 * until SIGINT/SIGTERM. Dev tool; flags only (the environment is read by src/config.ts alone), except that
 * `EDGE_SIMULATOR_SEED`, like `--strict`, turns on the least convenient readings (docs/simulator.md).
 */
import { parseArgs } from "node:util";
import { SIM_API_KEY, SIM_IDS, startSimulator } from "./index.js";

const DEFAULT_PORT = 8787;

function intFlag(name: string, raw: string | undefined, def: number, max: number): number {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max) {
    process.stderr.write(`simulator: --${name} must be a whole number from 0 to ${max} (got "${raw}")\n`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      host: { type: "string" },
      latency: { type: "string" },
      "scan-ms": { type: "string" },
      seed: { type: "string" },
      strict: { type: "string" },
      key: { type: "string", multiple: true },
    },
  });
  const sim = await startSimulator({
    port: intFlag("port", values.port, DEFAULT_PORT, 65_535),
    host: values.host ?? "127.0.0.1",
    latencyMs: intFlag("latency", values.latency, 0, 60_000),
    scanDurationMs: intFlag("scan-ms", values["scan-ms"], 1000, 3_600_000),
    seed: intFlag("seed", values.seed, 1, 2 ** 31),
    apiKeys: values.key ?? [SIM_API_KEY],
    ...(values.strict === undefined
      ? {}
      : { adversary: { seed: intFlag("strict", values.strict, 0, 2 ** 31) } }),
  });
  const keys = values.key ?? [SIM_API_KEY];
  process.stdout.write(
    [
      `Edge API simulator listening on ${sim.url}`,
      `  EDGE_API_URL=${sim.url}`,
      `  AccessKey: ${keys.join(", ")}`,
      `  Magic Containers: ${sim.url}/mc/apps`,
      `  Attack in progress on shield zone ${SIM_IDS.zoneUnderAttack} (${SIM_IDS.domainUnderAttack}); try /edge incident`,
      `  Notable ids: ${JSON.stringify(SIM_IDS)}`,
      sim.adversary.seed === undefined
        ? "  Friendly readings where the documents are silent (--strict <seed> for the least convenient)"
        : `  Strict: seed ${sim.adversary.seed}, the least convenient readings where the documents are silent`,
      "Press Ctrl+C to stop.",
      "",
    ].join("\n"),
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\nsimulator: ${signal}, stopping\n`);
    sim.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}

main().catch((e: unknown) => {
  process.stderr.write(`simulator: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
