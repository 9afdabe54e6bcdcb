/**
 * Shared by the benchmark's processes: credentials, workspace/key naming, statistics and a tiny
 * request/reply protocol over Node's IPC channel (`child_process.fork`).
 */
import { type ChildProcess, fork } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const SIGNING_SECRET = "bench-signing-secret-0123456789";
export const BOT_TOKEN = "xoxb-bench-bot-token-0000";
export const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
/** The simulator's added latency for every call, as the issue asks (150 ms). */
export const SIM_LATENCY_MS = 150;

/** Slack team id of the i-th benchmark workspace (T000000 ...). */
export const teamFor = (i: number): string => `T${String(i).padStart(6, "0")}`;
/** The Edge API key stored for (and accepted by the simulator from) the i-th workspace. */
export const keyFor = (i: number): string => `bench-edge-key-${String(i).padStart(6, "0")}`;

/** The results file as it stands (`{}` when missing or unreadable), for a run that replaces only its own part. */
export function readResults(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

// ---- statistics ---------------------------------------------------------------------------------

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? Number.NaN),
    mean: round(sorted.length ? sum / sorted.length : Number.NaN),
  };
}

export const round = (v: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

export const ratio = (a: number, b: number): number => (b > 0 ? round(a / b, 2) : Number.NaN);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll until `check` is true (or throw after `timeoutMs`). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * How many requests whose id starts with `prefix` have an answer at response_url. `/edge zones` may answer
 * twice (the page at once, then the page with its zones' checks, which can come after the next run began),
 * so the answers are counted by request, and only the run's own.
 */
export const answeredCount = (responses: readonly { id: string }[], prefix: string): number =>
  new Set(responses.filter((r) => r.id.startsWith(prefix)).map((r) => r.id)).size;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

// ---- IPC ----------------------------------------------------------------------------------------

interface RpcRequest {
  rpc: number;
  cmd: string;
  args: unknown;
}
type RpcReply = { rpc: number; ok: true; result: unknown } | { rpc: number; ok: false; error: string };

/** In a child: answer the parent's calls, then tell it we are ready with `ready`. */
export function serveRpc(handlers: Record<string, (args: never) => unknown>, ready: unknown): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error("bench: this process must be started by bench/run.ts (no IPC channel)");
  process.on("message", (m: RpcRequest) => {
    const handler = handlers[m.cmd];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${m.cmd}`);
        return handler(m.args as never);
      })
      .then(
        (result) => send({ rpc: m.rpc, ok: true, result } satisfies RpcReply),
        (e: unknown) =>
          send({ rpc: m.rpc, ok: false, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
      );
  });
  // The parent going away (Ctrl-C, crash) ends the child too.
  process.on("disconnect", () => process.exit(0));
  send({ ready });
}

export interface Child<R = unknown> {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly ready: R;
  call<T>(cmd: string, args?: unknown): Promise<T>;
  /** Ask politely (`stop` command, so --cpu-prof gets written), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  execArgv?: string[];
  /** File for the child's stdout and stderr (its log); discarded when absent. */
  logFile?: string;
  args?: string[];
  /** Run the compiled JavaScript under this directory (see compileForBench) instead of tsx. */
  compiledDir?: string | undefined;
}

const benchDir = fileURLToPath(new URL(".", import.meta.url));

/** Start `bench/<script>` under tsx with an IPC channel; resolves once the child says it is ready. */
export function spawnChild<R>(script: string, options: SpawnOptions = {}): Promise<Child<R>> {
  const out = options.logFile ? openSync(options.logFile, "a") : "ignore";
  const file = options.compiledDir
    ? join(options.compiledDir, "bench", script.replace(/\.ts$/, ".js"))
    : `${benchDir}${script}`;
  const proc = fork(file, options.args ?? [], {
    execArgv: [...(options.compiledDir ? [] : ["--import", "tsx"]), ...(options.execArgv ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ["ignore", out, out, "ipc"],
  });
  let next = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    proc.once("exit", (code, signal) => {
      exited = true;
      for (const p of pending.values()) p.reject(new Error(`${script} exited (${code ?? signal})`));
      pending.clear();
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    const onEarlyExit = () =>
      reject(
        new Error(
          `${script} exited before it was ready${options.logFile ? ` (see ${options.logFile})` : ""}`,
        ),
      );
    proc.once("exit", onEarlyExit);
    proc.on("message", (m: { ready?: R } & Partial<RpcReply>) => {
      if ("ready" in m) {
        proc.off("exit", onEarlyExit);
        resolve({
          proc,
          pid: proc.pid ?? 0,
          ready: m.ready as R,
          call<T>(cmd: string, args?: unknown): Promise<T> {
            if (exited) return Promise.reject(new Error(`${script} is not running`));
            const rpc = next++;
            return new Promise<T>((res, rej) => {
              pending.set(rpc, { resolve: res as (v: unknown) => void, reject: rej });
              proc.send({ rpc, cmd, args } satisfies RpcRequest);
            });
          },
          async stop(graceMs = 10_000) {
            if (exited) return;
            const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
            if (proc.connected) proc.send({ rpc: 0, cmd: "stop", args: null } satisfies RpcRequest);
            else proc.kill("SIGTERM");
            await exit;
            clearTimeout(timer);
          },
        });
        return;
      }
      if (m.rpc === undefined) return;
      const p = pending.get(m.rpc);
      if (!p) return;
      pending.delete(m.rpc);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(`${script}: ${(m as { error?: string }).error ?? "failed"}`));
    });
  });
}

/** Resident set size of a process from /proc (Linux), in MiB. */
export async function rssOf(pid: number): Promise<number | undefined> {
  try {
    const { readFile } = await import("node:fs/promises");
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
    return kb === undefined ? undefined : round(Number(kb) / 1024, 1);
  } catch {
    return undefined;
  }
}

/**
 * CPU time of this process's main thread (the event loop) in ms, from the kernel's scheduler
 * statistics (ns); process.cpuUsage() also counts the GC helper and libuv pool threads.
 */
export function mainThreadCpuMs(): number {
  // Synchronously: an asynchronous read runs on a libuv pool thread and would read that thread.
  let schedstat = "";
  try {
    schedstat = readFileSync("/proc/thread-self/schedstat", "utf8");
  } catch {}
  const ns = Number(schedstat.split(" ")[0]);
  return Number.isFinite(ns) && schedstat ? ns / 1e6 : Number.NaN;
}

/** This process's CPU time so far: its main thread and the whole process (`cpu` RPC of the bench's children). */
export function cpuNow(): { mainThreadMs: number; processMs: number } {
  const { user, system } = process.cpuUsage();
  return { mainThreadMs: mainThreadCpuMs(), processMs: (user + system) / 1000 };
}

/** Which recorded requests an RPC looks at: method, path substring, query values, received at or after `since`. */
export interface CountArgs {
  method?: string;
  pathIncludes?: string;
  query?: Record<string, string>;
  since?: number;
}

/** The Edge call `/edge zones` waits for: its page of ten (the pull zone list that names them loads beside it). */
export const ZONES_PAGE_CALL: CountArgs = { pathIncludes: "/shield/shield-zones", query: { perPage: "10" } };
