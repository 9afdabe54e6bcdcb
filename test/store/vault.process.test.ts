import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { decrypt, encrypt, parseMasterKeys } from "../../src/store/crypto.js";
import { openStore, StoreError } from "../../src/store/index.js";
import { captureLogger, configFor, masterKeyB64, tempDir } from "../support/helpers.js";

const run = promisify(execFile);

function catchErr(f: () => unknown): StoreError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError);
    return e as StoreError;
  }
  throw new Error("expected a StoreError");
}

describe("parseMasterKeys", () => {
  it("is undefined when neither variable is set", () => {
    expect(parseMasterKeys({})).toBeUndefined();
    expect(parseMasterKeys({ encryptionKey: "  ", encryptionKeys: "" })).toBeUndefined();
  });

  it("reads ENCRYPTION_KEY and ENCRYPTION_KEYS (the first encrypts, all decrypt)", () => {
    const a = masterKeyB64();
    const b = randomBytes(32).toString("base64url");
    const single = parseMasterKeys({ encryptionKey: a })!;
    expect(single.keys).toHaveLength(1);
    expect(single.primary.id).toMatch(/^k[0-9a-f]{8}$/);
    expect(parseMasterKeys({ encryptionKey: a })!.primary.id).toBe(single.primary.id);
    const multi = parseMasterKeys({ encryptionKeys: `2025:${b}, 2024:${a}` })!;
    expect(multi.primary.id).toBe("2025");
    expect(multi.keys.map((k) => k.id)).toEqual(["2025", "2024"]);
  });

  it("refuses malformed and wrong-length keys, naming the variable and never the value", () => {
    const short = randomBytes(16).toString("base64");
    const e1 = catchErr(() => parseMasterKeys({ encryptionKey: short }));
    expect(e1.kind).toBe("master_key");
    expect(e1.message).toMatch(
      /ENCRYPTION_KEY must be base64 of exactly 32 bytes \(it decodes to 16 bytes\)/,
    );
    expect(e1.message).not.toContain(short);
    const junk = "not base64 at all!!";
    const e2 = catchErr(() => parseMasterKeys({ encryptionKey: junk }));
    expect(e2.message).toMatch(/ENCRYPTION_KEY/);
    expect(e2.message).not.toContain(junk);
    expect(catchErr(() => parseMasterKeys({ encryptionKeys: `a:${short}` })).message).toMatch(
      /ENCRYPTION_KEYS \(id "a"\)/,
    );
    expect(catchErr(() => parseMasterKeys({ encryptionKeys: masterKeyB64() })).message).toMatch(/id:base64/);
    const k = masterKeyB64();
    expect(catchErr(() => parseMasterKeys({ encryptionKeys: `a:${k},a:${k}` })).message).toMatch(/twice/);
    expect(catchErr(() => parseMasterKeys({ encryptionKey: k, encryptionKeys: `a:${k}` })).message).toMatch(
      /only one of ENCRYPTION_KEY or ENCRYPTION_KEYS/,
    );
  });
});

describe("AES-256-GCM envelopes", () => {
  const ring = parseMasterKeys({ encryptionKeys: `new:${masterKeyB64()},old:${masterKeyB64()}` })!;
  const ctx = { teamId: "T1", purpose: "edge_api_key" };

  it("round-trips with a fresh 96-bit nonce every time", () => {
    const a = encrypt(ring, ctx, "secret-value");
    const b = encrypt(ring, ctx, "secret-value");
    expect(a).not.toBe(b);
    expect(a.split(":")[0]).toBe("v1");
    expect(a.split(":")[1]).toBe("new");
    expect(Buffer.from(a.split(":")[2]!, "base64url")).toHaveLength(12);
    expect(decrypt(ring, ctx, a)).toBe("secret-value");
    expect(a).not.toContain("secret-value");
  });

  it("binds the ciphertext to the workspace and the purpose", () => {
    const env = encrypt(ring, ctx, "secret-value");
    const e = catchErr(() => decrypt(ring, { teamId: "T2", purpose: "edge_api_key" }, env));
    expect(e).toMatchObject({ kind: "decrypt_failed", teamId: "T2" });
    expect(e.message).toContain("workspace T2");
    expect(e.message).not.toContain("secret-value");
    expect(catchErr(() => decrypt(ring, { teamId: "T1", purpose: "installation" }, env)).kind).toBe(
      "decrypt_failed",
    );
  });

  it("decrypts with older keys in the ring and names a missing key id", () => {
    const oldOnly = parseMasterKeys({ encryptionKeys: `old:${masterKeyB64()}` })!;
    const env = encrypt(ring, ctx, "x-secret");
    expect(catchErr(() => decrypt(oldOnly, ctx, env)).message).toMatch(
      /master key "new", which is not configured/,
    );
  });
});

describe("master key resolution at start", () => {
  const dirs: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of dirs.splice(0)) await c();
  });

  it("outside production with no key, generates DATA_DIR/master.key (0600) with a warning, then reuses it", async () => {
    const { dir, cleanup } = await tempDir();
    dirs.push(cleanup);
    const cap = captureLogger();
    const store = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir }),
      logger: cap.logger,
    });
    await store.keys.set("T1", "edge-key-abcdefgh", "U1");
    await store.close();
    const file = join(dir, "master.key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const key = (await readFile(file, "utf8")).trim();
    expect(Buffer.from(key, "base64")).toHaveLength(32);
    const warn = cap.lines().find((l) => l.level === "warn");
    expect(String(warn?.msg)).toMatch(/generated a new development master key into .*master\.key/);
    expect(cap.text()).not.toContain(key);

    const again = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir }),
      logger: captureLogger().logger,
    });
    expect((await again.keys.get("T1"))?.apiKey).toBe("edge-key-abcdefgh");
    await again.close();
    expect((await readFile(file, "utf8")).trim()).toBe(key);
  });

  it("in production with no key, refuses to start naming the variable", async () => {
    const { dir, cleanup } = await tempDir();
    dirs.push(cleanup);
    const err = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir, NODE_ENV: "production" }),
      logger: captureLogger().logger,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({
      kind: "master_key",
      message: expect.stringContaining("ENCRYPTION_KEY is not set"),
    });
    await expect(stat(join(dir, "master.key"))).rejects.toThrow();
  });

  it("with any Slack credential set, refuses without ENCRYPTION_KEY whatever NODE_ENV says, and writes no master.key", async () => {
    const credentials = [
      { SLACK_BOT_TOKEN: "xoxb-1" },
      { SLACK_SIGNING_SECRET: "signing" },
      { SLACK_APP_TOKEN: "xapp-1" },
      { SLACK_CLIENT_ID: "111.222" },
      { SLACK_CLIENT_SECRET: "client-secret" },
    ];
    for (const credential of credentials) {
      for (const NODE_ENV of ["development", "test", "staging"]) {
        const { dir, cleanup } = await tempDir();
        dirs.push(cleanup);
        const [name, value] = Object.entries(credential)[0]!;
        const err = await openStore({
          clock: systemClock,
          config: configFor({ DATA_DIR: dir, NODE_ENV, ...credential }),
          logger: captureLogger().logger,
        }).catch((e: unknown) => e);
        expect(err, `${name} with NODE_ENV=${NODE_ENV}`).toBeInstanceOf(StoreError);
        expect(err).toMatchObject({ kind: "master_key" });
        const message = (err as StoreError).message;
        expect(message).toContain("ENCRYPTION_KEY is not set");
        expect(message).toContain(`Slack credentials are set (${name})`);
        expect(message).toContain("openssl rand -base64 32");
        expect(message).not.toContain(value);
        await expect(stat(join(dir, "master.key"))).rejects.toThrow();
      }
    }
  });

  it("with Slack credentials, an existing console master.key is not used, and the sentence says how to keep it", async () => {
    const { dir, cleanup } = await tempDir();
    dirs.push(cleanup);
    const consoleStore = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir }),
      logger: captureLogger().logger,
    });
    await consoleStore.close();
    const keyText = await readFile(join(dir, "master.key"), "utf8");
    const err = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir, SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s" }),
      logger: captureLogger().logger,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "master_key" });
    expect((err as Error).message).toContain(
      `${join(dir, "master.key")} belongs to the local console and is not used here`,
    );
    expect((err as Error).message).not.toContain(keyText.trim());
    // With the key in the environment, the same store opens.
    const deployed = await openStore({
      clock: systemClock,
      config: configFor({ DATA_DIR: dir, SLACK_BOT_TOKEN: "xoxb-1", ENCRYPTION_KEY: keyText.trim() }),
      logger: captureLogger().logger,
    });
    await deployed.close();
  });

  it("refuses a malformed key at start", async () => {
    const { dir, cleanup } = await tempDir();
    dirs.push(cleanup);
    await expect(
      openStore({
        clock: systemClock,
        config: configFor({ DATA_DIR: dir, ENCRYPTION_KEY: "abcd" }),
        logger: captureLogger().logger,
      }),
    ).rejects.toMatchObject({
      kind: "master_key",
      message: expect.stringMatching(/ENCRYPTION_KEY must be base64/),
    });
    await writeFile(join(dir, "master.key"), "short\n");
    await expect(
      openStore({ clock: systemClock, config: configFor({ DATA_DIR: dir }), logger: captureLogger().logger }),
    ).rejects.toMatchObject({ kind: "master_key" });
  });
});

describe("npm run keys:rotate", () => {
  it("re-encrypts under the newest key and prints how many", async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const oldKey = masterKeyB64();
      const store = await openStore({
        clock: systemClock,
        config: configFor({ DATA_DIR: dir, ENCRYPTION_KEY: oldKey }),
        logger: captureLogger().logger,
      });
      await store.keys.set("T1", "edge-key-11111111", "U1");
      await store.keys.set("T2", "edge-key-22222222", "U1");
      await store.close();
      const newKey = masterKeyB64();
      const env = { PATH: process.env.PATH, DATA_DIR: dir, ENCRYPTION_KEYS: `new:${newKey},old:${oldKey}` };
      const { stdout } = await run("node", ["--import", "tsx", "src/rotate-keys.ts"], {
        env,
        timeout: 20_000,
      });
      expect(stdout).toMatch(/Re-encrypted 2 secrets under master key "new"/);
      expect(stdout).not.toContain("edge-key-");
      const { stdout: again } = await run("node", ["--import", "tsx", "src/rotate-keys.ts"], {
        env,
        timeout: 20_000,
      });
      expect(again).toMatch(/Re-encrypted 0 secrets/);
      const after = await openStore({
        clock: systemClock,
        config: configFor({ DATA_DIR: dir, ENCRYPTION_KEYS: `new:${newKey}` }),
        logger: captureLogger().logger,
      });
      expect((await after.keys.get("T2"))?.apiKey).toBe("edge-key-22222222");
      await after.close();
    } finally {
      await cleanup();
    }
  });
});
