import { type Simulator, type SimulatorState, startSimulator } from "../../tools/simulator/index.js";
import { type Harness, type HarnessOptions, startHarness, TEST_EDGE_KEY } from "./harness.js";

/**
 * The simulator with another bunny.net account (`otherKey`, its copy of the data shaped by `shapeOther`),
 * and a bot installed by OAuth in several workspaces (a single bot token answers only its own workspace):
 * T0001 with the simulator's key, `otherTeam` with `otherKey`, and T0NOKEY with none.
 */
export async function startBotWithAnotherAccount(options: {
  otherTeam: string;
  otherKey: string;
  shapeOther: (state: SimulatorState) => void;
  middleware?: HarnessOptions["middleware"];
}): Promise<{ sim: Simulator; h: Harness }> {
  const sim = await startSimulator({
    scanDurationMs: 50,
    apiKeys: [TEST_EDGE_KEY],
    accounts: { [options.otherKey]: options.shapeOther },
  });
  const h = await startHarness({
    sim,
    oauth: true,
    installs: ["T0001", options.otherTeam, "T0NOKEY"],
    ...(options.middleware ? { middleware: options.middleware } : {}),
  });
  await h.store.keys.set(options.otherTeam, options.otherKey, "U0001");
  return { sim, h };
}
