import { randomInt } from "node:crypto";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/**
 * Three floors (docs/testing.md), told apart by the file name:
 * - spec (`*.test.ts`): pure modules and single services; no socket, process or thread (refused at run time);
 * - flows (`*.flow.test.ts`): through the real receiver in the in-process world (simulator, fake Slack, stores);
 *   the seeded simulation of the change engine, a flows file, runs after them alone (it keeps both cores busy);
 *   the Edge API's read and write flows run again under the adversarial simulator, one seed after another;
 * - process (`*.process.test.ts`): real processes (compiled dist/, npm start, replicas, console, bench, docker).
 * The floors run one after another (spec first: the fastest answer); flows and process mostly wait on I/O, so
 * they run more files at once than this machine has cores.
 */
const FLOW = "test/**/*.flow.test.ts";
const PROCESS = "test/**/*.process.test.ts";
/** The seeded simulation: a flows file that keeps both cores busy for a minute, so it runs after the others, alone. */
const SIMULATION = "test/changes/engine-simulation.flow.test.ts";

/**
 * The tests that read and write through the Edge API run again under the adversarial simulator (docs/simulator.md):
 * three fixed seeds and one fresh seed per run, printed so that a failure replays with
 * `EDGE_SIMULATOR_FRESH_SEED=<seed> npx vitest run --project 'adversarial-fresh-*'`.
 */
const ADVERSARIAL = [
  "test/edge/contract-*.flow.test.ts",
  "test/tools/simulator/openapi.flow.test.ts",
  "test/slack/edge-commands/read-commands.flow.test.ts",
  "test/slack/edge-commands/answers.flow.test.ts",
  "test/slack/edge-commands/incident.flow.test.ts",
  "test/slack/edge-commands/incident-numbers.flow.test.ts",
  "test/slack/edge-commands/ratelimit-names.flow.test.ts",
  "test/slack/edge-commands/bot-detection-plan.flow.test.ts",
  "test/slack/impact-preview.flow.test.ts",
  "test/services/offenders.flow.test.ts",
  "test/jobs/alert-poller.flow.test.ts",
  "test/jobs/alert-poller-drift.flow.test.ts",
  "test/changes/verified-writes.flow.test.ts",
  "test/changes/kinds/every-kind.flow.test.ts",
  "test/services/timeline.flow.test.ts",
  "test/slack/edge-commands/timeline.flow.test.ts",
  "test/slack/listeners/alert-buttons.flow.test.ts",
  "test/slack/incident-chart.flow.test.ts",
  "test/jobs/alert-poller-chart.flow.test.ts",
  "test/mcp/server.flow.test.ts",
  "test/slack/edge-commands/status.flow.test.ts",
  "test/slack/mitigation-effect.flow.test.ts",
];
const ADVERSARIAL_SEEDS = [7, 1009, 424242];
// Drawn once, in the main process, and handed to the workers (which load this file again) through the environment.
const drawn = process.env.EDGE_SIMULATOR_FRESH_SEED === undefined;
process.env.EDGE_SIMULATOR_FRESH_SEED ??= String(randomInt(1, 2 ** 31 - 1));
const FRESH_SEED = Number(process.env.EDGE_SIMULATOR_FRESH_SEED);
if (!Number.isSafeInteger(FRESH_SEED)) throw new Error("EDGE_SIMULATOR_FRESH_SEED must be a whole number");
// Printed once per run, so a failure in adversarial-fresh-<seed> replays.
if (drawn)
  console.log(
    `adversarial simulator: fresh seed ${FRESH_SEED} (replay: EDGE_SIMULATOR_FRESH_SEED=${FRESH_SEED} npx vitest run --project 'adversarial-fresh-*')`,
  );

/** Each seed's run is a group of its own (16 workers on two cores timed out): one after another, after the flows. */
function adversarial(name: string, seed: number, groupOrder: number): TestProjectInlineConfiguration {
  return {
    extends: true,
    test: {
      name,
      include: ADVERSARIAL,
      env: { EDGE_SIMULATOR_SEED: String(seed) },
      maxWorkers: 4,
      sequence: { groupOrder },
    },
  };
}

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: "forks",
    projects: [
      {
        extends: true,
        test: {
          name: "spec",
          include: ["test/**/*.test.ts"],
          exclude: [FLOW, PROCESS],
          setupFiles: ["test/support/floors/spec-setup.ts"],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "flows",
          include: [FLOW],
          exclude: [SIMULATION],
          maxWorkers: 5,
          sequence: { groupOrder: 1 },
        },
      },
      ...ADVERSARIAL_SEEDS.map((seed, i) => adversarial(`adversarial-${seed}`, seed, 2 + i)),
      adversarial(`adversarial-fresh-${FRESH_SEED}`, FRESH_SEED, 2 + ADVERSARIAL_SEEDS.length),
      {
        extends: true,
        test: { name: "simulation", include: [SIMULATION], maxWorkers: 1, sequence: { groupOrder: 6 } },
      },
      {
        extends: true,
        test: { name: "process", include: [PROCESS], maxWorkers: 3, sequence: { groupOrder: 7 } },
      },
    ],
  },
});
