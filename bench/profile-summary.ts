/**
 * Summarise a V8 .cpuprofile (node --cpu-prof): self time by function and by where the code lives
 * (a package under node_modules, the app's src/, Node internals, GC, idle).
 * CLI: `tsx bench/profile-summary.ts <file.cpuprofile> [top]`.
 */
import { readFileSync } from "node:fs";
import { round } from "./common.js";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileRow {
  name: string;
  selfMs: number;
  percent: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Busy time: everything but (idle). */
  busyMs: number;
  byArea: ProfileRow[];
  topFunctions: ProfileRow[];
  /**
   * The app's own functions (src/) by total time: every sample with the function anywhere on its stack
   * (once per sample), so a caller includes what it calls. An async function counts while it runs between
   * its awaits, not while it waits.
   */
  appInclusive: ProfileRow[];
}

function areaOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1] as string;
  if (url.startsWith("node:")) return "node internals";
  const app = /\/(src|bench|test)\/(.*?)(\/[^/]*)?$/.exec(url);
  if (app) return `${app[1]}/${app[2] ?? ""}`;
  return url;
}

function shortUrl(url: string): string {
  const nm = url.indexOf("node_modules/");
  if (nm >= 0) return url.slice(nm + "node_modules/".length);
  const src = url.search(/\/(src|bench|test)\//);
  return src >= 0 ? url.slice(src + 1) : url.replace(/^file:\/\//, "");
}

/**
 * `from`: count only the samples from the first one with a function of that name on its stack (e.g.
 * "approve": an approvals profile from the first approval on, leaving out start-up and the requests' creation).
 */
export function summarizeProfile(file: string, top = 15, from?: string): ProfileSummary {
  const p = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const onStack = (id: number, name: string) => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at))
      if (byId.get(at)?.callFrame.functionName === name) return true;
    return false;
  };
  let first = 0;
  if (from !== undefined) {
    first = p.samples.findIndex((id) => onStack(id, from));
    if (first < 0) throw new Error(`no sample has ${from} on its stack`);
  }
  const self = new Map<number, number>();
  for (let i = first; i < p.samples.length; i++) {
    const id = p.samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const area = new Map<string, number>();
  const fn = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (functionName === "(idle)") idle += us;
    const a = areaOf(url, functionName);
    area.set(a, (area.get(a) ?? 0) + us);
    const key = url ? `${functionName || "(anonymous)"} ${shortUrl(url)}:${lineNumber + 1}` : functionName;
    fn.set(key, (fn.get(key) ?? 0) + us);
  }
  const appFrame = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    return /\/src\//.test(url) && !url.includes("node_modules/")
      ? `${functionName || "(anonymous)"} ${shortUrl(url)}:${lineNumber + 1}`
      : undefined;
  };
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    if (byId.get(id)?.callFrame.functionName === "(idle)") continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const node = byId.get(at);
      const frame = node && appFrame(node);
      if (frame && !seen.has(frame)) {
        seen.add(frame);
        inclusive.set(frame, (inclusive.get(frame) ?? 0) + us);
      }
    }
  }
  const busy = total - idle;
  const rows = (m: Map<string, number>, n = top) =>
    [...m]
      .filter(([name]) => name !== "(idle)")
      .sort((x, y) => y[1] - x[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, selfMs: round(us / 1000, 1), percent: round((us / busy) * 100, 1) }));
  return {
    file,
    totalMs: round(total / 1000, 1),
    busyMs: round(busy / 1000, 1),
    byArea: rows(area),
    topFunctions: rows(fn),
    appInclusive: rows(inclusive, 3 * top),
  };
}

export function formatProfile(s: ProfileSummary): string {
  const lines = [
    `CPU profile ${s.file}: ${s.busyMs} ms busy of ${s.totalMs} ms`,
    "  by area (self time, % of busy):",
  ];
  for (const r of s.byArea) lines.push(`    ${String(r.percent).padStart(5)}%  ${r.selfMs} ms  ${r.name}`);
  lines.push("  top functions (self time):");
  for (const r of s.topFunctions)
    lines.push(`    ${String(r.percent).padStart(5)}%  ${r.selfMs} ms  ${r.name}`);
  lines.push("  the app's functions, total time (on the stack, % of busy):");
  for (const r of s.appInclusive ?? [])
    lines.push(`    ${String(r.percent).padStart(5)}%  ${r.selfMs} ms  ${r.name}`);
  return lines.join("\n");
}

if (process.argv[1]?.endsWith("profile-summary.ts")) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: tsx bench/profile-summary.ts <file.cpuprofile> [top] [from-function]\n");
    process.exit(2);
  }
  process.stdout.write(
    `${formatProfile(summarizeProfile(file, Number(process.argv[3] ?? 20), process.argv[4]))}\n`,
  );
}
