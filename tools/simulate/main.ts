/**
 * The change engine's seeded simulation (docs/simulation.md).
 *
 *   SEED=<n> npm run simulate                      one seed: its steps, what happened, its violations, shrunk
 *   PLAN=<file.json> npm run simulate              a recorded plan (seed, replicas, skews, steps), e.g. a shrunk one
 *   npm run simulate -- --seeds 1000 [--from 1]    many seeds: violations by invariant, the seeds, the time
 *   npm run simulate -- --seeds 200 --store postgres   the same on PostgreSQL (TEST_DATABASE_URL, a fresh schema)
 *   … --shrink                                     shrink the first failing seed of each invariant
 *   … --connections shared                         one store connection for all replicas (default: one each)
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { INVARIANTS, type InvariantName } from "./invariants.js";
import { describeStep, type Plan, planFor } from "./plan.js";
import { type RunResult, runPlan } from "./run.js";
import { shrink } from "./shrink.js";
import { startBatch } from "./world.js";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const DATABASE_URL = process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

async function dropSchema(schema: string) {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/**
 * Where two runs of one plan first told another story (their logs, each run's workspace name aside), or
 * undefined when they told the same: how far a seed replays the same on this machine now (docs/simulation.md).
 */
function firstDifference(a: RunResult, b: RunResult): string | undefined {
  const first = a.log.map((line) => line.replaceAll(a.team, "T"));
  const second = b.log.map((line) => line.replaceAll(b.team, "T"));
  for (let i = 0; i < Math.max(first.length, second.length); i++)
    if (first[i] !== second[i])
      return `${i}:\n  first:  ${first[i] ?? "(no line)"}\n  second: ${second[i] ?? "(no line)"}`;
  return undefined;
}

async function main() {
  const storeKind = arg("store") === "postgres" ? "postgres" : "sqlite";
  const pgSchema = storeKind === "postgres" ? `edgeops_sim_${randomBytes(5).toString("hex")}` : undefined;
  const connections = arg("connections") === "shared" ? "shared" : "own";
  const batch = await startBatch({ store: storeKind, connections, ...(pgSchema ? { pgSchema } : {}) });
  let failed = false;
  try {
    const single = process.env.SEED;
    const recorded = process.env.PLAN;
    if (single !== undefined || recorded !== undefined) {
      // A seed's own plan, or a recorded one (a JSON Plan, e.g. a shrunk list printed by an earlier run).
      const plan: Plan = recorded
        ? (JSON.parse(readFileSync(recorded, "utf8")) as Plan)
        : planFor(Number(single));
      const result = await runPlan(batch, plan);
      console.log(result.log.join("\n"));
      if (result.violations.length === 0) {
        console.log(`seed ${plan.seed}: no violation`);
        return;
      }
      failed = true;
      for (const v of result.violations) console.log(`VIOLATION ${v.invariant}: ${v.detail}`);
      for (const invariant of new Set(result.violations.map((v) => v.invariant))) {
        const shrunk = await shrink(batch, plan, invariant);
        console.log(
          `\nshortest failing list for ${invariant} (seed ${plan.seed}, ${shrunk.steps.length} of ${plan.steps.length} steps, ${shrunk.runs} runs):`,
        );
        for (const s of shrunk.steps) console.log(`  ${describeStep(s)}`);
        console.log(
          `  as a plan (PLAN=<file> npm run simulate): ${JSON.stringify({ ...plan, steps: shrunk.steps })}`,
        );
        if (process.env.SIMULATE_VERBOSE && shrunk.last) console.log(shrunk.last.log.join("\n"));
      }
      return;
    }
    const count = Number(arg("seeds") ?? 100);
    const from = Number(arg("from") ?? 1);
    const started = performance.now();
    const bySeeds = new Map<InvariantName, number[]>();
    let failing = 0;
    const twice = process.argv.includes("--twice");
    let replayedOtherwise = 0;
    for (let seed = from; seed < from + count; seed++) {
      if (process.env.SIMULATE_TRACE) console.error(`seed ${seed}`);
      const result = await runPlan(batch, planFor(seed));
      if (twice) {
        const difference = firstDifference(result, await runPlan(batch, planFor(seed)));
        if (difference) {
          replayedOtherwise++;
          console.error(`seed ${seed} replayed otherwise at line ${difference}`);
        }
      }
      if (result.violations.length > 0) {
        failing++;
        // As it happens: a long run stopped early still names what it found.
        console.error(`seed ${seed}: ${[...new Set(result.violations.map((v) => v.invariant))].join(", ")}`);
      }
      for (const invariant of new Set(result.violations.map((v) => v.invariant)))
        bySeeds.set(invariant, [...(bySeeds.get(invariant) ?? []), seed]);
      if ((seed - from + 1) % 100 === 0)
        console.error(
          `… ${seed - from + 1} seeds, ${failing} failing, ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${count} seeds (${from}..${from + count - 1}) on ${storeKind}: ${failing} failing, ${seconds.toFixed(1)} s`,
    );
    for (const name of Object.keys(INVARIANTS) as InvariantName[]) {
      const seeds = bySeeds.get(name) ?? [];
      console.log(
        `  ${name.padEnd(28)} ${String(seeds.length).padStart(5)}  ${seeds.slice(0, 12).join(" ")}${seeds.length > 12 ? " …" : ""}`,
      );
    }
    if (twice) console.log(`  replayed with another log: ${replayedOtherwise} of ${count} seeds`);
    failed = failing > 0;
    if (process.argv.includes("--shrink"))
      for (const [invariant, seeds] of bySeeds) {
        const plan = planFor(seeds[0] as number);
        const shrunk = await shrink(batch, plan, invariant);
        console.log(
          `\n${invariant}: seed ${plan.seed}, ${shrunk.steps.length} of ${plan.steps.length} steps:`,
        );
        for (const s of shrunk.steps) console.log(`  ${describeStep(s)}`);
      }
  } finally {
    await batch.close();
    if (pgSchema) await dropSchema(pgSchema).catch(() => undefined);
    process.exitCode = failed ? 1 : 0;
  }
}

await main();
