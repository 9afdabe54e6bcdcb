import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startBot } from "../../../src/app/bot.js";
import { loadConfig } from "../../../src/config.js";
import { TransportError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/log.js";
import { startConsole, TEST_ENCRYPTION_KEY } from "./support.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "edgeops-console-proc-"));
  dirs.push(d);
  return d;
};

/** The environment of a fresh machine: nothing of Slack, the Edge API or a database set. */
function freshEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(SLACK_|EDGE_API_|DATABASE_URL|NODE_ENV|ADMIN_USER_IDS|ENCRYPTION_KEY|VITEST|TEST)/.test(k))
      continue;
    env[k] = v;
  }
  return { ...env, DATA_DIR: dataDir, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };
}

function run(entry: string, stdin: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", entry], { cwd: process.cwd(), env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

describe("the console as a process", () => {
  it("`printf '/edge apps\\n' | npm run console` prints plain text and exits 0 at the end of input", async () => {
    const r = await run("tools/console/main.ts", "/edge apps\n", freshEnv(tempDir()));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("edgeops local console");
    expect(r.stdout).toContain(
      "alice in #general> /edge apps\n--- #general · edgeops · only visible to alice ---",
    );
    expect(r.stdout).toContain("== Magic Containers applications ==");
    expect(r.stdout).toMatch(/\[1\] Next page/);
    // Plain text only: no colour codes, no JSON log lines on stdout.
    expect(r.stdout).not.toContain("\u001b[");
    expect(r.stdout).not.toMatch(/^\{"level"/m);
  });

  it("`npm start` with no Slack credentials opens the console, naming the variables that connect it", async () => {
    const r = await run("tools/start.ts", "/edge zones\n/quit\n", freshEnv(tempDir()));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No Slack workspace is connected");
    expect(r.stdout).toContain("SLACK_APP_TOKEN and SLACK_BOT_TOKEN for Socket Mode");
    expect(r.stdout).toContain("== Shield zones ==");
  });
});

describe("the console's own master key", () => {
  it("`npm run console` with Slack variables set and no ENCRYPTION_KEY still starts, on DATA_DIR/master.key", async () => {
    const dataDir = tempDir();
    const c = await startConsole({
      dataDir,
      keepDataDir: true,
      env: { ENCRYPTION_KEY: "", SLACK_BOT_TOKEN: "xoxb-unused-0000", SLACK_SIGNING_SECRET: "unused" },
    });
    try {
      expect(c.output).toContain("(Slack credentials are set; the console does not use them.)");
      expect(existsSync(join(dataDir, "master.key"))).toBe(true);
    } finally {
      await c.close();
    }
  });
});

describe("start-up without a console", () => {
  it("fails in production without Slack credentials, and names missing ones when some are set", async () => {
    const dataDir = tempDir();
    await expect(
      startBot({ config: loadConfig({ NODE_ENV: "production", DATA_DIR: dataDir }), logger: silentLogger }),
    ).rejects.toThrow(/NODE_ENV=production has no local console.*SLACK_APP_TOKEN/s);
    const partial = startBot({
      config: loadConfig({ SLACK_SIGNING_SECRET: "s3cret", DATA_DIR: dataDir }),
      logger: silentLogger,
    });
    await expect(partial).rejects.toBeInstanceOf(TransportError);
    await expect(partial).rejects.toThrow(/SLACK_BOT_TOKEN is missing/);
  });

  it("the built bot (src/app/bot.ts) without Slack credentials names what to set: the console is not part of it", async () => {
    const started = startBot({ config: loadConfig({ DATA_DIR: tempDir() }), logger: silentLogger });
    await expect(started).rejects.toBeInstanceOf(TransportError);
    await expect(started).rejects.toThrow(
      /No Slack credentials are set.*SLACK_APP_TOKEN and SLACK_BOT_TOKEN/s,
    );
  });

  it("with Slack credentials and no ENCRYPTION_KEY, `npm start` stops with a sentence outside production too, generating no master.key", async () => {
    const dataDir = tempDir();
    const { ENCRYPTION_KEY: _none, ...env } = freshEnv(dataDir);
    const r = await run("tools/start.ts", "", {
      ...env,
      NODE_ENV: "development",
      SLACK_SIGNING_SECRET: "signing-secret-for-this-test",
      SLACK_BOT_TOKEN: "xoxb-this-test-0000",
      SLACK_API_URL: "http://127.0.0.1:9/api/",
      PORT: "0",
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^edgeops: ENCRYPTION_KEY is not set: Slack credentials are set/);
    expect(r.stderr).toContain("openssl rand -base64 32");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr + r.stdout).not.toContain("xoxb-this-test-0000");
    expect(existsSync(join(dataDir, "master.key"))).toBe(false);
  });
});
