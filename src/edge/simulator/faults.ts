/**
 * Fault injection. A fault matches by optional method and by path (string = prefix of the request path, RegExp =
 * tested against the path). Faults that only add latency stack; the first matching fault that changes the answer
 * (reset, status, body) wins. Each applied fault counts one use against `times` and is dropped when used up.
 */
import type { Fault } from "./index.js";

/** What the server does for a request once faults are considered. */
export interface FaultPlan {
  latencyMs: number;
  /** The fault that replaces or alters the answer, if any. */
  terminal?: Fault;
}

const alters = (f: Fault): boolean =>
  f.reset === true ||
  f.status !== undefined ||
  f.body !== undefined ||
  f.retryAfter !== undefined ||
  f.padToBytes !== undefined;

function matches(f: Fault, method: string, path: string): boolean {
  if (f.method !== undefined && f.method.toUpperCase() !== method.toUpperCase()) return false;
  if (typeof f.path === "string") return path.startsWith(f.path);
  f.path.lastIndex = 0; // tolerate /g and /y regexps
  return f.path.test(path);
}

export class FaultSet {
  private faults: Array<{ fault: Fault; remaining: number }> = [];

  add(fault: Fault): void {
    this.faults.push({ fault, remaining: fault.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.faults = [];
  }

  /** Picks the faults for a request and consumes one use of each one applied. */
  plan(method: string, path: string): FaultPlan {
    const plan: FaultPlan = { latencyMs: 0 };
    for (const entry of this.faults) {
      if (entry.remaining <= 0 || !matches(entry.fault, method, path)) continue;
      if (alters(entry.fault)) {
        if (plan.terminal !== undefined) continue;
        plan.terminal = entry.fault;
      }
      plan.latencyMs += entry.fault.latencyMs ?? 0;
      entry.remaining -= 1;
    }
    this.faults = this.faults.filter((e) => e.remaining > 0);
    return plan;
  }
}

/** Cuts a JSON text so that it can no longer be parsed. */
export function truncateJson(text: string): string {
  if (text.length < 2) return '{"truncated":';
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

/** A fault path matching exactly this request path (optionally with a trailing slash), not the paths below it. */
export function exactPath(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\/$/, "")}/?$`);
}
