import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { type FakeSlack, startFakeSlack } from "../support/fake-slack.js";
import { BOT_TOKEN, SIGNING_SECRET, TEST_EDGE_KEY, TEST_ENCRYPTION_KEY } from "../support/harness.js";
import { postSigned, slashCommandBody } from "../support/slack-signer.js";

/** edgeops as a real process (npm start, node dist/main.js …) in HTTP mode, against loopback fakes. */
export interface BotProcess {
  child: ChildProcess;
  /** The JSON log lines printed so far. */
  logs: Record<string, unknown>[];
  output(): string;
  waitForLog(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** PORT once "edgeops is running" was logged. */
  port(): Promise<number>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The process `npm …` runs (its only child): what an orchestrator signalling npm's child reaches. */
  childOfNpm(): number;
  command(text: string): Promise<{ status: number; responseId: string }>;
}

export interface ProcessWorld {
  sim: Simulator;
  slack: FakeSlack;
  dataDir: string;
  /** The environment of a fresh machine plus an HTTP-mode configuration pointing at the fakes. */
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  spawn(command: string, args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }): BotProcess;
  close(): Promise<void>;
}

export async function startProcessWorld(): Promise<ProcessWorld> {
  const sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY] });
  const slack = await startFakeSlack();
  const dataDir = mkdtempSync(join(tmpdir(), "edgeops-proc-"));
  const children: ChildProcess[] = [];
  const world: ProcessWorld = {
    sim,
    slack,
    dataDir,
    env(extra = {}) {
      const env: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) {
        if (
          /^(SLACK_|EDGE_API_|DATABASE_URL|NODE_ENV|ADMIN_USER_IDS|ENCRYPTION_KEY|METRICS_|VITEST|TEST)/.test(
            k,
          )
        )
          continue;
        env[k] = v;
      }
      return {
        ...env,
        DATA_DIR: dataDir,
        ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_API_URL: slack.apiUrl,
        EDGE_API_URL: sim.url,
        EDGE_API_KEY: TEST_EDGE_KEY,
        PORT: "0",
        LOG_LEVEL: "info",
        ...extra,
      };
    },
    spawn(command, args, options = {}) {
      const child = spawn(command, args, {
        cwd: options.cwd ?? process.cwd(),
        env: options.env ?? world.env(),
        stdio: ["ignore", "pipe", "pipe"],
        // Its own process group, so close() can end npm and whatever npm started, even orphans.
        detached: true,
      });
      children.push(child);
      let out = "";
      const logs: Record<string, unknown>[] = [];
      const waiters = new Set<() => void>();
      const onData = (c: Buffer) => {
        out += c.toString("utf8");
        const lines = out.split("\n");
        logs.length = 0;
        for (const line of lines) {
          if (!line.startsWith("{")) continue;
          try {
            logs.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            // a line still being written
          }
        }
        for (const w of [...waiters]) w();
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on("exit", (code, signal) => {
          for (const w of [...waiters]) w();
          resolve({ code, signal });
        }),
      );
      const waitForLog = (msg: string, timeoutMs = 30_000) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          const check = () => {
            const found = logs.find((l) => l.msg === msg);
            if (found) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(found);
            } else if (child.exitCode !== null || child.signalCode !== null) {
              waiters.delete(check);
              clearTimeout(timer);
              reject(new Error(`the process ended before logging "${msg}":\n${out}`));
            }
          };
          const timer = setTimeout(() => {
            waiters.delete(check);
            reject(new Error(`no "${msg}" within ${timeoutMs} ms:\n${out}`));
          }, timeoutMs);
          waiters.add(check);
          check();
        });
      const port = async () => Number((await waitForLog("edgeops is running")).port);
      return {
        child,
        logs,
        output: () => out,
        waitForLog,
        port,
        exited,
        childOfNpm() {
          const pids = execFileSync("ps", ["-o", "pid=", "--ppid", String(child.pid)], { encoding: "utf8" })
            .split("\n")
            .map((s) => Number(s.trim()))
            .filter((n) => n > 0);
          if (pids.length !== 1) throw new Error(`npm has ${pids.length} children, expected 1`);
          return pids[0] as number;
        },
        async command(text) {
          const responseId = `cmd-${Math.random().toString(36).slice(2)}`;
          const body = slashCommandBody({ text, responseUrl: slack.responseUrl(responseId) });
          const res = await postSigned(`http://127.0.0.1:${await port()}/slack/events`, body, SIGNING_SECRET);
          return { status: res.status, responseId };
        },
      };
    },
    async close() {
      for (const c of children) {
        try {
          if (c.pid) process.kill(-c.pid, "SIGKILL");
        } catch {
          // the group is gone already
        }
      }
      await sim.close();
      await slack.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}

/** Wait until `predicate` holds, polling. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Poll /readyz until it answers 200 (the token check and, in Socket Mode, the WebSocket are up). */
export async function waitUntilReady(baseUrl: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    const res = await fetch(`${baseUrl}/readyz`);
    last = await res.text();
    if (res.status === 200) return;
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
