import type { InvariantName } from "./invariants.js";
import type { Plan, Step } from "./plan.js";
import { type RunResult, runPlan } from "./run.js";
import type { Batch } from "./world.js";

/**
 * The shortest step list found that still fails the same invariant: halves, then quarters … then single
 * steps are dropped while the run still fails, then faults are dropped from the steps that are left. The
 * plan keeps its seed (replicas, offsets, Math.random's stream), so a shrunk list replays as it is.
 */
export async function shrink(
  batch: Batch,
  plan: Plan,
  invariant: InvariantName,
  budget = 150,
): Promise<{ steps: Step[]; runs: number; last?: RunResult }> {
  let steps = plan.steps;
  let runs = 0;
  let last: RunResult | undefined;
  const fails = async (candidate: Step[]) => {
    runs++;
    const result = await runPlan(batch, { ...plan, steps: candidate });
    const failed = result.violations.some((v) => v.invariant === invariant);
    if (failed) last = result;
    return failed;
  };
  for (let chunk = Math.ceil(steps.length / 2); chunk >= 1 && runs < budget; chunk = Math.floor(chunk / 2)) {
    for (let start = 0; start < steps.length && runs < budget; ) {
      const candidate = [...steps.slice(0, start), ...steps.slice(start + chunk)];
      if (candidate.length > 0 && (await fails(candidate))) steps = candidate;
      else start += chunk;
    }
    if (chunk === 1) break;
  }
  for (let i = 0; i < steps.length && runs < budget; i++) {
    const s = steps[i];
    if (!s || !("fault" in s) || !s.fault) continue;
    const { fault: _dropped, ...rest } = s;
    const candidate = [...steps.slice(0, i), rest as Step, ...steps.slice(i + 1)];
    if (await fails(candidate)) steps = candidate;
  }
  return { steps, runs, ...(last ? { last } : {}) };
}
