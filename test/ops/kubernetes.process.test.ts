import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BOT_TOKEN, SIGNING_SECRET, TEST_ENCRYPTION_KEY } from "../support/harness.js";
import { pgReachable, TEST_DATABASE_URL } from "../support/helpers.js";
import { type K8sObject, renderKustomization } from "../support/kustomize.js";
import { withoutPostgres } from "../support/postgres-required.js";
import { type ProcessWorld, startProcessWorld, waitFor, waitUntilReady } from "./process-support.js";

/**
 * The pods deploy/kubernetes/ describes, as processes: the compiled bot laid out as in the image, with the
 * rendered Deployment's environment and a Secret's values, on PostgreSQL and Redis, and with no file
 * writable: Node's permission model refuses every write, as the read-only root filesystem would. Only
 * where Slack and the Edge API are (loopback fakes) and PORT (0: free on a shared machine) differ.
 */

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const PG = await pgReachable();
const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const PERMISSION_FLAG =
  Number(process.versions.node.split(".")[0]) >= 23 ? "--permission" : "--experimental-permission";

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef: { key: string } };
}

function deploymentEnv(overlay: string, secret: Record<string, string>): Record<string, string> {
  const d = renderKustomization(`${root}deploy/kubernetes/overlays/${overlay}`).find(
    (o) => o.kind === "Deployment",
  ) as K8sObject & { spec: { template: { spec: { containers: { env: EnvVar[] }[] } } } };
  const env: Record<string, string> = {};
  for (const e of d.spec.template.spec.containers[0]?.env ?? []) {
    const v = e.value ?? secret[e.valueFrom?.secretKeyRef.key ?? ""];
    if (v !== undefined) env[e.name] = v;
  }
  return env;
}

if (!PG) withoutPostgres("deploy/kubernetes as processes", "the Kubernetes process test");
else
  describe("deploy/kubernetes as processes: the rendered environment, nothing writable", () => {
    let app = "";
    let database = "";
    let world: ProcessWorld | undefined;
    beforeAll(async () => {
      app = mkdtempSync(join(tmpdir(), "edgeops-k8s-app-"));
      await run("npx", ["tsc", "-p", "tsconfig.build.json", "--outDir", join(app, "dist")], {
        cwd: root,
        timeout: 170_000,
      });
      cpSync(join(root, "package.json"), join(app, "package.json"));
      symlinkSync(join(root, "node_modules"), join(app, "node_modules"));
      database = `edgeops_k8s_${Math.random().toString(36).slice(2, 10)}`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`create database "${database}"`).finally(() => admin.end());
    }, 180_000);
    afterEach(async () => {
      await world?.close();
      world = undefined;
    });
    afterAll(async () => {
      if (app) rmSync(app, { recursive: true, force: true });
      if (!database) return;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`drop database if exists "${database}" with (force)`).finally(() => admin.end());
    });

    const secret = () => {
      const url = new URL(TEST_DATABASE_URL);
      url.pathname = `/${database}`;
      return {
        DATABASE_URL: url.toString(),
        REDIS_URL,
        ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_APP_TOKEN: "xapp-1-test-app-token",
      };
    };

    const start = async (overlay: string) => {
      world = await startProcessWorld();
      const base = world.env();
      const env: NodeJS.ProcessEnv = {
        PATH: base.PATH,
        // The image's DATA_DIR, absent here: writing there is refused like everything else.
        DATA_DIR: join(app, "data"),
        ...deploymentEnv(overlay, secret()),
        SLACK_API_URL: base.SLACK_API_URL,
        EDGE_API_URL: base.EDGE_API_URL,
        PORT: "0",
      };
      const bot = world.spawn(
        process.execPath,
        [PERMISSION_FLAG, "--allow-fs-read=*", "--allow-worker", "--allow-addons", "dist/main.js"],
        { cwd: app, env },
      );
      return { bot, base: `http://127.0.0.1:${await bot.port()}` };
    };

    it("http: ready on PostgreSQL and Redis, answers a signed command, drains on SIGTERM and exits 0", async () => {
      const { bot, base } = await start("http");
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      await waitUntilReady(base, 20_000);
      const ready = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, string> };
      expect(ready.checks).toMatchObject({ store: "ok", slack: "ok", redis: "ok" });
      const { status, responseId } = await bot.command("help");
      expect(status).toBe(200);
      await waitFor(
        () => world!.slack.responsesTo(responseId).length > 0,
        20_000,
        "the answer to /edge help",
      );
      bot.child.kill("SIGTERM");
      expect((await bot.exited).code).toBe(0);
      expect(bot.output()).not.toMatch(/ERR_ACCESS_DENIED|EROFS|EACCES/);
    }, 60_000);

    it("socket-mode: starts on PostgreSQL and Redis, serves the probes on PORT, exits 0 on SIGTERM", async () => {
      const { bot, base } = await start("socket-mode");
      expect((await bot.waitForLog("edgeops is running")).mode).toBe("socket");
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      // The loopback fake Slack has no WebSocket, so /readyz names slack; the store and Redis answer.
      const ready = (await (await fetch(`${base}/readyz`)).json()) as { checks: Record<string, string> };
      expect(ready.checks).toMatchObject({ store: "ok", redis: "ok" });
      bot.child.kill("SIGTERM");
      expect((await bot.exited).code).toBe(0);
      expect(bot.output()).not.toMatch(/ERR_ACCESS_DENIED|EROFS|EACCES/);
    }, 60_000);

    it("without DATABASE_URL a pod could not fall back to SQLite: it stops, saying why", async () => {
      const { DATABASE_URL: _unset, ...env } = deploymentEnv("http", secret());
      const failed = await run(
        process.execPath,
        [PERMISSION_FLAG, "--allow-fs-read=*", "--allow-worker", "--allow-addons", "dist/main.js"],
        { cwd: app, env: { PATH: process.env.PATH, DATA_DIR: join(app, "data"), ...env, PORT: "0" } },
      ).then(
        () => undefined,
        (e: { code?: number; stderr?: string }) => e,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toMatch(/^edgeops: Cannot open the SQLite database .*edgeops\.sqlite/m);
    }, 30_000);
  });
