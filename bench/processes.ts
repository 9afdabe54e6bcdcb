/**
 * Starting the processes of a benchmark run and building the signed Slack bodies the load generator
 * sends. The orchestrator (bench/run.ts) hosts the fake Slack Web API (and response_url) itself.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { systemClock } from "../src/clock.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { openStore } from "../src/store/index.js";
import type { FakeSlack } from "../test/support/fake-slack.js";
import { TEST_DATABASE_URL } from "../test/support/helpers.js";
import { interactionBody, slashCommandBody } from "../test/support/slack-signer.js";
import {
  BOT_TOKEN,
  type Child,
  ENCRYPTION_KEY,
  keyFor,
  SIGNING_SECRET,
  spawnChild,
  teamFor,
} from "./common.js";
import type { LoadRequest, LoadRun, LoadSample } from "./loadgen.js";

export interface SimReady {
  url: string;
  zone: number;
}

export interface BenchContext {
  workDir: string;
  /** Compiled JavaScript of the bot (as production runs it: node dist/...); tsx when undefined. */
  compiledDir: string | undefined;
  /** When set, every bot process is CPU-profiled into <profileDir>/<bot name>/. */
  profileDir: string | undefined;
  slack: FakeSlack;
  sim: Child<SimReady>;
  loadgen: Child;
  progress(message: string): void;
}

export const runLoad = (ctx: BenchContext, run: LoadRun) => ctx.loadgen.call<LoadSample[]>("run", run);

// ---- bodies -------------------------------------------------------------------------------------

export function commandRequest(
  ctx: BenchContext,
  id: string,
  team: number,
  text: string,
  userId = "U0001",
): LoadRequest {
  return {
    id,
    body: slashCommandBody({
      text,
      teamId: teamFor(team),
      userId,
      responseUrl: ctx.slack.responseUrl(id),
      triggerId: `trigger-${id}`,
    }),
  };
}

/** A signed block_actions click on a button of ours (Block/Allow/Clear, Approve ...). */
export function clickRequest(
  ctx: BenchContext,
  id: string,
  team: number,
  userId: string,
  actionId: string,
  value: string,
  channelId = "C0001",
): LoadRequest {
  const teamId = teamFor(team);
  return {
    id,
    body: interactionBody({
      type: "block_actions",
      user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: teamId },
      api_app_id: "A0001",
      token: "legacy",
      container: {
        type: "message",
        message_ts: "1700000000.000100",
        channel_id: channelId,
        is_ephemeral: true,
      },
      trigger_id: `trigger-${id}`,
      team: { id: teamId, domain: "acme" },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: channelId, name: "incident-42" },
      message: { ts: "1700000000.000100", type: "message", text: "", blocks: [] },
      response_url: ctx.slack.responseUrl(id),
      actions: [
        {
          type: "button",
          action_id: actionId,
          block_id: "b1",
          value,
          text: { type: "plain_text", text: "button" },
          action_ts: String(Date.now() / 1000),
        },
      ],
    }),
  };
}

// ---- compiling ---------------------------------------------------------------------------------

const repoRoot = fileURLToPath(new URL("..", import.meta.url));

/**
 * Compile the bot process and the bare Bolt app (and the src/ they import) to JavaScript, as the
 * production image runs it: tsx costs ~40 MiB of resident memory that production does not pay.
 */
export async function compileForBench(workDir: string): Promise<string> {
  const out = join(workDir, "compiled");
  mkdirSync(out, { recursive: true });
  const tsconfig = join(workDir, "tsconfig.bench.json");
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(repoRoot, "tsconfig.json"),
      compilerOptions: {
        rootDir: repoRoot,
        outDir: out,
        noEmit: false,
        noCheck: true,
        sourceMap: false,
        incremental: false,
        typeRoots: [join(repoRoot, "node_modules/@types")],
      },
      files: [join(repoRoot, "bench/bot-process.ts"), join(repoRoot, "bench/bare-bolt.ts")],
      include: [],
    }),
  );
  await promisify(execFile)(process.execPath, [
    join(repoRoot, "node_modules/typescript/bin/tsc"),
    "-p",
    tsconfig,
  ]);
  // src/edge/request.ts reads ../../package.json; packages resolve from node_modules.
  copyFileSync(join(repoRoot, "package.json"), join(out, "package.json"));
  symlinkSync(join(repoRoot, "node_modules"), join(out, "node_modules"), "dir");
  return out;
}

// ---- the bot ------------------------------------------------------------------------------------

export interface BotOptions {
  name: string;
  /** Workspaces 0..n-1 get their own stored Edge API key (distinct per-key queues). */
  workspaces: number;
  /** PostgreSQL instead of SQLite. */
  databaseUrl?: string;
  exposeGc?: boolean;
  env?: Record<string, string>;
  /** Store the workspace keys before starting (default true; replicas sharing one database seed once). */
  seedKeys?: boolean;
  /** More to store before the bot starts (watches, history), with the bot's environment. */
  seed?: (env: Record<string, string>) => Promise<void>;
}

export interface BotProcess {
  child: Child<{ port: number }>;
  origin: string;
  dataDir: string;
  logFile: string;
}

/** Store each workspace's own key (encrypted, as /edge key does) before the bot starts. */
export async function seedKeys(env: Record<string, string>, workspaces: number): Promise<void> {
  const config = loadConfig(env);
  const store = await openStore({ clock: systemClock, config, logger: createLogger({ level: "silent" }) });
  try {
    const batch = 50;
    for (let i = 0; i < workspaces; i += batch) {
      const jobs: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(workspaces, i + batch); j++) {
        jobs.push(store.keys.set(teamFor(j), keyFor(j), "U0001"));
      }
      await Promise.all(jobs);
    }
  } finally {
    await store.close();
  }
}

/** The node flags production runs the bot with: package.json's start:prod (the Dockerfile's CMD is tested equal). */
export const PRODUCTION_NODE_FLAGS: readonly string[] =
  (
    JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }
  ).scripts["start:prod"]
    ?.split(/\s+/)
    .filter((arg) => arg.startsWith("--")) ?? [];

export async function startBotProcess(ctx: BenchContext, o: BotOptions): Promise<BotProcess> {
  const dataDir = mkdtempSync(join(ctx.workDir, `${o.name}-`));
  const env: Record<string, string> = {
    NODE_ENV: "production",
    LOG_LEVEL: "info",
    EDGE_API_URL: ctx.sim.ready.url,
    // The fallback for a workspace without its own key; every benchmark workspace has its own.
    EDGE_API_KEY: keyFor(0),
    DATA_DIR: dataDir,
    ENCRYPTION_KEY,
    SLACK_API_URL: ctx.slack.apiUrl,
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    PORT: "0",
    ...(o.databaseUrl ? { DATABASE_URL: o.databaseUrl } : {}),
    ...o.env,
  };
  if (o.seedKeys !== false) {
    ctx.progress(`${o.name}: storing ${o.workspaces} workspace keys`);
    await seedKeys(env, o.workspaces);
  }
  await o.seed?.(env);
  const logFile = join(dataDir, "bot.log");
  const execArgv = [
    ...PRODUCTION_NODE_FLAGS,
    ...(o.exposeGc ? ["--expose-gc"] : []),
    ...(ctx.profileDir ? ["--cpu-prof", `--cpu-prof-dir=${join(ctx.profileDir, o.name)}`] : []),
  ];
  const child = await spawnChild<{ port: number }>("bot-process.ts", {
    env,
    execArgv,
    logFile,
    compiledDir: ctx.compiledDir,
  });
  return { child, origin: `http://127.0.0.1:${child.ready.port}`, dataDir, logFile };
}

// ---- PostgreSQL ---------------------------------------------------------------------------------

/** A throwaway database on the test server (startBot has no schema option; a database is as isolated). */
export async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const name = `edgeops_bench_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000 });
  try {
    await admin.connect();
    await admin.query(`create database "${name}"`);
  } catch {
    await admin.end().catch(() => undefined);
    return undefined;
  }
  await admin.end();
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
