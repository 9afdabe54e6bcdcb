import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import { openStore } from "../../src/store/index.js";
import { type ProcessWorld, startProcessWorld, waitUntilReady } from "./process-support.js";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry & { devDependencies?: Record<string, string> }>;
};

/** The lock entry a package `name` required from `from` resolves to (node_modules lookup upwards). */
function resolveIn(from: string, name: string): string | undefined {
  let at = from;
  for (;;) {
    const candidate = `${at ? `${at}/` : ""}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!at) return undefined;
    const i = at.lastIndexOf("/node_modules/");
    at = i >= 0 ? at.slice(0, i) : "";
  }
}

/** Every lock entry `npm ci --omit=dev` installs: reachable from the root without a dev edge. */
function productionClosure(): Set<string> {
  const seen = new Set<string>();
  const visit = (from: string, names: Iterable<string>) => {
    for (const name of names) {
      const to = resolveIn(from, name);
      if (!to || seen.has(to)) continue;
      seen.add(to);
      const e = lock.packages[to] ?? {};
      const peers = Object.keys(e.peerDependencies ?? {}).filter(
        (p) => !e.peerDependenciesMeta?.[p]?.optional,
      );
      visit(to, [
        ...Object.keys(e.dependencies ?? {}),
        ...Object.keys(e.optionalDependencies ?? {}),
        ...peers,
      ]);
    }
  };
  visit("", Object.keys(pkg.dependencies));
  return seen;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
  );
}

describe("production runs compiled code on production dependencies", () => {
  it("tsx is a dev dependency, and the lock's dev flags match what production installs", () => {
    expect(pkg.dependencies.tsx).toBeUndefined();
    expect(pkg.devDependencies.tsx).toBeDefined();
    const rootEntry = lock.packages[""];
    expect(rootEntry?.dependencies).toEqual(pkg.dependencies);
    expect(rootEntry?.devDependencies).toEqual(pkg.devDependencies);
    const production = productionClosure();
    for (const name of ["tsx", "esbuild", "typescript", "vitest"])
      expect(production.has(`node_modules/${name}`), name).toBe(false);
    const wrong = Object.entries(lock.packages)
      .filter(([loc]) => loc !== "")
      .filter(([loc, e]) => Boolean(e.dev) === production.has(loc))
      .map(([loc, e]) => `${loc}: dev=${Boolean(e.dev)}`);
    expect(wrong).toEqual([]);
  });

  it("src imports only node built-ins, its own files and production dependencies", () => {
    const problems: string[] = [];
    for (const file of sourceFiles(join(root, "src"))) {
      const text = readFileSync(file, "utf8");
      // `import type` is erased by the compiler; every other import is loaded at run time.
      const specifiers = [
        ...text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s+"([^"]+)"/gm),
        ...text.matchAll(/^import\s+"([^"]+)"/gm),
        ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
      ].map((m) => m[1] ?? "");
      for (const spec of specifiers) {
        if (spec.startsWith(".") || spec.startsWith("node:")) continue;
        const name = spec.startsWith("@")
          ? spec.split("/").slice(0, 2).join("/")
          : (spec.split("/")[0] ?? "");
        if (!pkg.dependencies[name]) problems.push(`${relative(root, file)} imports ${spec}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("the scripts: npm start and start:prod exec node (signals reach it); keys:rotate:prod runs the compiled script", () => {
    expect(pkg.scripts.start).toBe("exec node --import tsx tools/start.ts");
    expect(pkg.scripts["start:prod"]).toBe("exec node dist/main.js");
    expect(pkg.scripts["keys:rotate:prod"]).toBe("node dist/rotate-keys.js");
    expect(existsSync(join(root, "src/rotate-keys.ts"))).toBe(true);
  });
});

describe("the compiled build (tsconfig.build.json), laid out as in the image", () => {
  // /app/package.json, /app/node_modules, /app/dist, as the Dockerfile's runtime stage copies them.
  let app = "";
  let world: ProcessWorld | undefined;
  beforeAll(async () => {
    app = mkdtempSync(join(tmpdir(), "edgeops-app-"));
    await run("npx", ["tsc", "-p", "tsconfig.build.json", "--outDir", join(app, "dist")], {
      cwd: root,
      timeout: 170_000,
    });
    cpSync(join(root, "package.json"), join(app, "package.json"));
    symlinkSync(join(root, "node_modules"), join(app, "node_modules"));
  }, 180_000);
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });
  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it("dist/ is the bot alone: the console and the simulator (tools/) are not compiled into it", () => {
    const files = readdirSync(join(app, "dist"), { recursive: true, encoding: "utf8" });
    expect(files).toContain("main.js");
    expect(files.filter((f) => /console|simulator/.test(f))).toEqual([]);
  });

  it("`node dist/main.js` without Slack variables names what to set and exits 1 (no console, no stack)", async () => {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (!/^(SLACK_|EDGE_API_|DATABASE_URL|NODE_ENV|VITEST|TEST)/.test(k)) env[k] = v;
    }
    const dataDir = mkdtempSync(join(tmpdir(), "edgeops-noslack-"));
    try {
      const failed = await run(process.execPath, ["dist/main.js"], {
        cwd: app,
        env: { ...env, DATA_DIR: dataDir, NODE_ENV: "development" },
      }).then(
        () => undefined,
        (e: { code?: number; stderr?: string }) => e,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toMatch(
        /^edgeops: No Slack credentials are set\. Set SLACK_APP_TOKEN and SLACK_BOT_TOKEN/,
      );
      expect(failed?.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);

  it("`npm run keys:rotate:prod` re-encrypts the stored secrets under the newest master key", async () => {
    world = await startProcessWorld();
    const oldKey = Buffer.alloc(32, 1).toString("base64");
    const newKey = Buffer.alloc(32, 2).toString("base64");
    const store = await openStore({
      clock: systemClock,
      config: loadConfig({ DATA_DIR: world.dataDir, ENCRYPTION_KEY: oldKey }),
      logger: silentLogger,
    });
    await store.keys.set("T0001", "edge-key-rotate-0001", "U0001");
    await store.close();
    const env = world.env({ ENCRYPTION_KEYS: `new:${newKey},old:${oldKey}` });
    delete env.ENCRYPTION_KEY;
    const { stdout } = await run("npm", ["run", "--silent", "keys:rotate:prod"], { cwd: app, env });
    expect(stdout).toBe('Re-encrypted 1 secret under master key "new" (0 already current).\n');
    const after = await openStore({
      clock: systemClock,
      config: loadConfig({ DATA_DIR: world.dataDir, ENCRYPTION_KEYS: `new:${newKey}` }),
      logger: silentLogger,
    });
    expect((await after.keys.get("T0001"))?.apiKey).toBe("edge-key-rotate-0001");
    await after.close();
  }, 60_000);

  it("`npm run start:prod` serves, and SIGTERM to the process npm runs stops it with exit 0", async () => {
    world = await startProcessWorld();
    const bot = world.spawn("npm", ["run", "start:prod"], {
      cwd: app,
      env: world.env({ NODE_ENV: "production" }),
    });
    await waitUntilReady(`http://127.0.0.1:${await bot.port()}`, 10_000);
    process.kill(bot.childOfNpm(), "SIGTERM");
    expect((await bot.exited).code).toBe(0);
    await bot.waitForLog("edgeops stopped");
  }, 60_000);
});
