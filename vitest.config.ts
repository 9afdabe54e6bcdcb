import { defineConfig } from "vitest/config";

/**
 * Three floors (docs/testing.md), told apart by the file name:
 * - spec (`*.test.ts`): pure modules and single services; no socket, process or thread (refused at run time);
 * - flows (`*.flow.test.ts`): through the real receiver in the in-process world (simulator, fake Slack, stores);
 *   the seeded simulation of the change engine, a flows file, runs after them alone (it keeps both cores busy);
 * - process (`*.process.test.ts`): real processes (compiled dist/, npm start, replicas, console, bench, docker).
 * The floors run one after another (spec first: the fastest answer); flows and process mostly wait on I/O, so
 * they run more files at once than this machine has cores.
 */
const FLOW = "test/**/*.flow.test.ts";
const PROCESS = "test/**/*.process.test.ts";
/** The seeded simulation: a flows file that keeps both cores busy for a minute, so it runs after the others, alone. */
const SIMULATION = "test/changes/engine-simulation.flow.test.ts";

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
      {
        extends: true,
        test: { name: "simulation", include: [SIMULATION], maxWorkers: 1, sequence: { groupOrder: 2 } },
      },
      {
        extends: true,
        test: { name: "process", include: [PROCESS], maxWorkers: 3, sequence: { groupOrder: 3 } },
      },
    ],
  },
});
