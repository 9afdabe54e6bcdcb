import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Installation } from "@slack/bolt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ChangeRequest,
  type Engine,
  openStore,
  type Store,
  StoreError,
  storeInternals,
} from "../../src/store/index.js";
import { MIGRATIONS } from "../../src/store/migrations.js";
import { rotateAll } from "../../src/store/rotate.js";
import { steppedClock } from "../support/clock.js";
import { captureLogger, configFor, masterKeyB64 } from "../support/helpers.js";

/** One empty database for one test. */
export interface Location {
  env: Record<string, string>;
  pgSchema?: string;
  dataDir: string;
  cleanup(): Promise<void>;
}

export interface EngineHarness {
  engine: Engine;
  fresh(): Promise<Location>;
}

const PLAIN_KEY = "edge-7f3c9a1e-PLAINTEXT-SECRET-c0ffee42beef";
const PLAIN_KEY_2 = "edge-0b9d2e77-OTHER-SECRET-deadbeef9001";
const BOT_TOKEN = "xoxb-1111-2222-PLAINTEXTBOTTOKEN";
const USER_TOKEN = "xoxp-3333-4444-PLAINTEXTUSERTOKEN";

/** An approval request in T1's C1 by U1, as the store is given one. */
const BOT_CATEGORY_REQUEST = {
  teamId: "T1",
  channelId: "C1",
  requesterId: "U1",
  kind: "bot_category",
  params: { shieldZoneId: 4242, category: 3, action: 1 },
  observed: 0,
  expiresAt: 1_700_000_000_000 + 30 * 60_000,
};

/** A daily DNS schedule in T1's C1 by U1, first due a minute after the test clock starts. */
const DNS_SCHEDULE = {
  teamId: "T1",
  channelId: "C1",
  createdBy: "U1",
  kind: "dns" as const,
  target: "zone-1",
  spec: "every day at 09:00",
  timezone: "Europe/Ljubljana",
  nextRunAt: 1_700_000_060_000,
};

function installation(teamId: string, botToken = BOT_TOKEN): Installation<"v2", false> {
  return {
    team: { id: teamId, name: "Acme" },
    enterprise: undefined,
    user: { token: USER_TOKEN, scopes: ["chat:write"], id: "U0INSTALLER" },
    bot: { token: botToken, scopes: ["commands", "chat:write"], id: "B0BOT", userId: "U0BOT" },
    appId: "A0APP",
    tokenType: "bot",
    isEnterpriseInstall: false,
    authVersion: "v2",
  };
}

/** Every byte of every file in the data dir (SQLite file, WAL, SHM). */
async function dataDirBytes(dir: string): Promise<Buffer> {
  const names = await readdir(dir);
  return Buffer.concat(await Promise.all(names.map((n) => readFile(join(dir, n)))));
}

/** Every row of every table, as text. */
/** Writes the api_keys row of `from` over that of `to`, as a copied database row would. */
async function copyKeyCiphertext(store: Store, from: string, to: string): Promise<void> {
  const db = storeInternals(store).rawDb;
  const row = await db
    .selectFrom("api_keys")
    .select("ciphertext")
    .where("team_id", "=", from)
    .executeTakeFirstOrThrow();
  await db.updateTable("api_keys").set({ ciphertext: row.ciphertext }).where("team_id", "=", to).execute();
}

async function allRowsText(store: Store): Promise<string> {
  const db = storeInternals(store).rawDb;
  const tables = [
    "api_keys",
    "installations",
    "policies",
    "approval_requests",
    "schedules",
    "audit_log",
    "watches",
    "alert_episodes",
    "function_executions",
  ] as const;
  const parts: string[] = [];
  for (const t of tables) parts.push(JSON.stringify(await db.selectFrom(t).selectAll().execute()));
  return parts.join("\n");
}

export function storeContract(h: EngineHarness): void {
  describe(`store contract (${h.engine})`, () => {
    let loc: Location;
    let opened: Store[] = [];
    let clock = 1_700_000_000_000;
    const now = () => clock;

    async function open(env: Record<string, string> = {}, logger = captureLogger().logger): Promise<Store> {
      const store = await openStore({
        config: configFor({ ...loc.env, ...env }),
        logger,
        clock: steppedClock(now),
        ...(loc.pgSchema ? { pgSchema: loc.pgSchema } : {}),
      });
      opened.push(store);
      return store;
    }

    beforeEach(async () => {
      clock = 1_700_000_000_000;
      loc = await h.fresh();
      loc.env.ENCRYPTION_KEY = masterKeyB64();
    });

    afterEach(async () => {
      await Promise.all(opened.map((s) => s.close()));
      opened = [];
      await loc.cleanup();
    });

    describe("migrations", () => {
      it("run once, are idempotent, and two stores starting at once do not both migrate", async () => {
        const stores = await Promise.all([open(), open(), open()]);
        expect(stores.map((s) => s.engine)).toEqual([h.engine, h.engine, h.engine]);
        const again = await open();
        const db = storeInternals(again).rawDb;
        const rows = await db.selectFrom("edgeops_migrations").select("version").execute();
        expect(rows.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((m) => m.version));
        await again.ping();
      });
    });

    describe("Edge API keys", () => {
      it("set, get (decrypted), info (no decrypt), replace, remove", async () => {
        const store = await open();
        expect(await store.keys.get("T1")).toBeUndefined();
        const info = await store.keys.set("T1", PLAIN_KEY, "U1");
        expect(info.fingerprint).toBe("…beef");
        clock += 1000;
        expect(await store.keys.get("T1")).toMatchObject({
          apiKey: PLAIN_KEY,
          fingerprint: "…beef",
          setBy: "U1",
          setAt: 1_700_000_000_000,
          rotatedAt: null,
        });
        expect(await store.keys.info("T1")).toEqual({
          fingerprint: "…beef",
          setBy: "U1",
          setAt: 1_700_000_000_000,
          rotatedAt: null,
          masterKeyId: store.vault.currentKeyId,
        });
        await store.keys.set("T1", PLAIN_KEY_2, "U2");
        expect(await store.keys.get("T1")).toMatchObject({ apiKey: PLAIN_KEY_2, setBy: "U2", setAt: clock });
        expect(await store.keys.remove("T1")).toBe(true);
        expect(await store.keys.remove("T1")).toBe(false);
        expect(await store.keys.info("T1")).toBeUndefined();
      });

      it("a key set by another replica is read as the new one, even right after this one read the old", async () => {
        const store = await open();
        await store.keys.set("T1", PLAIN_KEY, "U1");
        expect((await store.keys.get("T1"))?.apiKey).toBe(PLAIN_KEY);
        // Another replica's set: the same row, a new envelope, written without this store knowing.
        await storeInternals(store)
          .rawDb.updateTable("api_keys")
          .set({ ciphertext: store.vault.seal("T1", "edge_api_key", PLAIN_KEY_2) })
          .where("team_id", "=", "T1")
          .execute();
        expect((await store.keys.get("T1"))?.apiKey).toBe(PLAIN_KEY_2);
        await storeInternals(store).rawDb.deleteFrom("api_keys").where("team_id", "=", "T1").execute();
        expect(await store.keys.get("T1")).toBeUndefined();
      });

      it("encrypts with a fresh nonce each time (same key, two workspaces, different ciphertexts)", async () => {
        const store = await open();
        await store.keys.set("T1", PLAIN_KEY, "U1");
        await store.keys.set("T2", PLAIN_KEY, "U1");
        const db = storeInternals(store).rawDb;
        const rows = await db
          .selectFrom("api_keys")
          .select(["team_id", "ciphertext"])
          .orderBy("team_id")
          .execute();
        expect(rows).toHaveLength(2);
        expect(rows[0]!.ciphertext).not.toBe(rows[1]!.ciphertext);
        expect(rows[0]!.ciphertext).toMatch(
          /^v1:[A-Za-z0-9_.-]+:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{22}$/,
        );
      });

      it("a ciphertext copied into another workspace's row fails to decrypt, naming that workspace", async () => {
        const cap = captureLogger();
        const store = await open({}, cap.logger);
        await store.keys.set("T1", PLAIN_KEY, "U1");
        await store.keys.set("T2", PLAIN_KEY_2, "U2");
        await copyKeyCiphertext(store, "T1", "T2");

        const err = await store.keys.get("T2").then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(StoreError);
        const se = err as StoreError;
        expect(se.kind).toBe("decrypt_failed");
        expect(se.teamId).toBe("T2");
        expect(se.message).toContain("T2");
        expect(se.message).not.toContain(PLAIN_KEY);
        expect(se.userMessage).not.toContain(PLAIN_KEY);
        // The row it came from still works and the store stays up.
        expect((await store.keys.get("T1"))?.apiKey).toBe(PLAIN_KEY);
        await store.ping();
        // An installation ciphertext is bound to its purpose too.
        await store.installations.storeInstallation(installation("T1"));
        const db = storeInternals(store).rawDb;
        const inst = await db.selectFrom("installations").select("ciphertext").executeTakeFirstOrThrow();
        await db
          .updateTable("api_keys")
          .set({ ciphertext: inst.ciphertext })
          .where("team_id", "=", "T1")
          .execute();
        await expect(store.keys.get("T1")).rejects.toMatchObject({ kind: "decrypt_failed", teamId: "T1" });
      });

      it("a corrupted ciphertext gives a clear decrypt error naming the workspace", async () => {
        const store = await open();
        await store.keys.set("T1", PLAIN_KEY, "U1");
        const db = storeInternals(store).rawDb;
        const row = await db.selectFrom("api_keys").select("ciphertext").executeTakeFirstOrThrow();
        const parts = row.ciphertext.split(":");
        const ct = parts[3]!;
        parts[3] = (ct[0] === "A" ? "B" : "A") + ct.slice(1);
        await db
          .updateTable("api_keys")
          .set({ ciphertext: parts.join(":") })
          .execute();
        await expect(store.keys.get("T1")).rejects.toMatchObject({
          kind: "decrypt_failed",
          teamId: "T1",
          message: expect.stringContaining("workspace T1"),
        });
        await db.updateTable("api_keys").set({ ciphertext: "garbage" }).execute();
        await expect(store.keys.get("T1")).rejects.toMatchObject({ kind: "decrypt_failed", teamId: "T1" });
        // info() does not decrypt, so it still answers.
        expect((await store.keys.info("T1"))?.fingerprint).toBe("…beef");
      });

      it("a master key that does not match gives a clear error naming the workspace, and the store stays up", async () => {
        const first = await open();
        await first.keys.set("T1", PLAIN_KEY, "U1");
        await first.close();
        const other = await open({ ENCRYPTION_KEY: masterKeyB64() });
        const err = (await other.keys.get("T1").catch((e: unknown) => e)) as StoreError;
        expect(err).toBeInstanceOf(StoreError);
        expect(err.kind).toBe("decrypt_failed");
        expect(err.message).toMatch(/workspace T1/);
        expect(err.message).toMatch(/not configured/);
        expect(err.message).not.toContain(loc.env.ENCRYPTION_KEY!);
        await other.ping();
        await other.keys.set("T2", PLAIN_KEY_2, "U1");
        expect((await other.keys.get("T2"))?.apiKey).toBe(PLAIN_KEY_2);
      });

      it("never writes a plaintext key or token to the database or the log", async () => {
        const cap = captureLogger("trace");
        const store = await open({}, cap.logger);
        await store.keys.set("T1", PLAIN_KEY, "U1");
        await store.keys.set("T2", PLAIN_KEY_2, "U1");
        await store.installations.storeInstallation(installation("T1"));
        await store.keys.get("T1");
        await store.installations.fetchInstallation({
          teamId: "T1",
          enterpriseId: undefined,
          isEnterpriseInstall: false,
        });
        await store.audit.append({
          teamId: "T1",
          userId: "U1",
          action: "key.set",
          target: "workspace",
          outcome: "ok",
          details: { apiKey: PLAIN_KEY, fingerprint: "…beef" },
        });
        // Errors on the way must not leak either.
        const db = storeInternals(store).rawDb;
        await db
          .updateTable("api_keys")
          .set({ ciphertext: "v1:zz:AAAA:BBBB:CCCC" })
          .where("team_id", "=", "T2")
          .execute();
        const e = (await store.keys.get("T2").catch((x: unknown) => x)) as StoreError;
        cap.logger.error({ err: e }, "decrypt failed");
        await rotateAll(store);

        const rows = await allRowsText(store);
        for (const secret of [PLAIN_KEY, PLAIN_KEY_2, BOT_TOKEN, USER_TOKEN, loc.env.ENCRYPTION_KEY!]) {
          expect(rows).not.toContain(secret);
          expect(cap.text()).not.toContain(secret);
          expect(JSON.stringify({ m: e.message, u: e.userMessage })).not.toContain(secret);
        }
        if (h.engine === "sqlite") {
          await store.close();
          const bytes = await dataDirBytes(loc.dataDir);
          expect(bytes.length).toBeGreaterThan(4096);
          for (const secret of [PLAIN_KEY, PLAIN_KEY_2, BOT_TOKEN, USER_TOKEN]) {
            expect(bytes.includes(Buffer.from(secret))).toBe(false);
          }
          // ...while a non-secret written at the same time is there (the search can find things).
          expect(bytes.includes(Buffer.from("key.set"))).toBe(true);
        }
      });
    });

    describe("master key rotation", () => {
      it("re-encrypts every secret under the newest key while the bot keeps working", async () => {
        const oldKey = loc.env.ENCRYPTION_KEY!;
        const newKey = masterKeyB64();
        const before = await open();
        await before.keys.set("T1", PLAIN_KEY, "U1");
        await before.keys.set("T2", PLAIN_KEY_2, "U2");
        await before.installations.storeInstallation(installation("T1"));
        const oldId = before.vault.currentKeyId;

        const both = { ENCRYPTION_KEY: "", ENCRYPTION_KEYS: `new:${newKey},old:${oldKey}` };
        const bot = await open(both); // the running bot, already configured with both keys
        const rotator = await open(both);
        clock += 60_000;
        const rotating = rotateAll(rotator);
        // The bot reads and writes during rotation.
        const during = await Promise.all([
          bot.keys.get("T1"),
          bot.keys.get("T2"),
          bot.keys.set("T3", PLAIN_KEY, "U3"),
        ]);
        expect(during[0]?.apiKey).toBe(PLAIN_KEY);
        expect(during[1]?.apiKey).toBe(PLAIN_KEY_2);
        const result = await rotating;
        expect(result.failed).toEqual([]);
        // T1, T2 and the installation were under the old key; T3 may have been sealed under the new one already.
        expect(result.reEncrypted).toBe(3);
        expect(await rotateAll(rotator)).toMatchObject({ reEncrypted: 0, alreadyCurrent: 4 });

        const info = await bot.keys.info("T1");
        expect(info?.masterKeyId).toBe("new");
        expect(info?.rotatedAt).toBe(clock);
        expect(info?.setAt).toBe(1_700_000_000_000);
        expect(oldId).not.toBe("new");

        // After rotation the old key can be dropped.
        const onlyNew = await open({ ENCRYPTION_KEY: "", ENCRYPTION_KEYS: `new:${newKey}` });
        expect((await onlyNew.keys.get("T1"))?.apiKey).toBe(PLAIN_KEY);
        expect((await onlyNew.keys.get("T2"))?.apiKey).toBe(PLAIN_KEY_2);
        expect((await onlyNew.keys.get("T3"))?.apiKey).toBe(PLAIN_KEY);
        const inst = await onlyNew.installations.fetchInstallation({
          teamId: "T1",
          enterpriseId: undefined,
          isEnterpriseInstall: false,
        });
        expect(inst.bot?.token).toBe(BOT_TOKEN);
        // ...and the old key alone no longer reads them.
        const oldOnly = await open({ ENCRYPTION_KEY: oldKey });
        await expect(oldOnly.keys.get("T1")).rejects.toMatchObject({ kind: "decrypt_failed" });
      });

      it("reports secrets it cannot decrypt and leaves them alone", async () => {
        const store = await open();
        await store.keys.set("T1", PLAIN_KEY, "U1");
        await store.keys.set("T2", PLAIN_KEY_2, "U1");
        await copyKeyCiphertext(store, "T1", "T2");
        const rotated = await open({
          ENCRYPTION_KEY: "",
          ENCRYPTION_KEYS: `b:${masterKeyB64()},a:${loc.env.ENCRYPTION_KEY}`,
        });
        const r = await rotateAll(rotated);
        expect(r.reEncrypted).toBe(1);
        expect(r.failed).toEqual([
          { table: "api_keys", teamId: "T2", message: expect.stringContaining("T2") },
        ]);
        expect((await rotated.keys.get("T1"))?.apiKey).toBe(PLAIN_KEY);
      });
    });

    describe("Slack installations (Bolt InstallationStore)", () => {
      it("stores encrypted, fetches decrypted, deletes; keyed by team or enterprise", async () => {
        const store = await open();
        const q = { teamId: "T1", enterpriseId: undefined, isEnterpriseInstall: false } as const;
        await expect(store.installations.fetchInstallation(q)).rejects.toBeInstanceOf(StoreError);
        await store.installations.storeInstallation(installation("T1"));
        expect(await store.installations.fetchInstallation(q)).toEqual(installation("T1"));
        await store.installations.storeInstallation(installation("T1", "xoxb-NEW-TOKEN-123456"));
        expect((await store.installations.fetchInstallation(q)).bot?.token).toBe("xoxb-NEW-TOKEN-123456");
        expect((await store.installations.findByTeam("T1"))?.team?.id).toBe("T1");
        expect(await store.installations.findByTeam("T9")).toBeUndefined();

        const org: Installation<"v2", true> = {
          team: undefined,
          enterprise: { id: "E1", name: "Org" },
          user: { token: undefined, scopes: undefined, id: "U1" },
          bot: { token: BOT_TOKEN, scopes: ["commands"], id: "B1", userId: "U0BOT" },
          isEnterpriseInstall: true,
          authVersion: "v2",
        };
        await store.installations.storeInstallation(org);
        const orgQ = { teamId: undefined, enterpriseId: "E1", isEnterpriseInstall: true } as const;
        expect((await store.installations.fetchInstallation(orgQ)).enterprise?.id).toBe("E1");
        expect(await store.installations.count()).toBe(2);

        await store.installations.deleteInstallation(q);
        await expect(store.installations.fetchInstallation(q)).rejects.toMatchObject({ kind: "invalid" });
        expect(await store.installations.count()).toBe(1);
      });

      it("an installation copied to another team's row does not decrypt", async () => {
        const store = await open();
        await store.installations.storeInstallation(installation("T1"));
        await store.installations.storeInstallation(installation("T2"));
        const db = storeInternals(store).rawDb;
        const t1 = await db
          .selectFrom("installations")
          .select("ciphertext")
          .where("id", "=", "T:T1")
          .executeTakeFirstOrThrow();
        await db
          .updateTable("installations")
          .set({ ciphertext: t1.ciphertext })
          .where("id", "=", "T:T2")
          .execute();
        await expect(
          store.installations.fetchInstallation({
            teamId: "T2",
            enterpriseId: undefined,
            isEnterpriseInstall: false,
          }),
        ).rejects.toMatchObject({ kind: "decrypt_failed", message: expect.stringContaining("T2") });
      });
    });

    describe("policies", () => {
      it("merges channel over workspace over defaults and says where each value came from", async () => {
        const store = await open();
        expect(await store.policies.getEffective("T1", "C1")).toEqual({
          approvals: "required",
          approvers: { kind: "admins" },
          expiryMinutes: 30,
          approvalsNeeded: 1,
          approvalsFor: ["*"],
          source: {
            approvals: "default",
            approvers: "default",
            expiryMinutes: "default",
            approvalsNeeded: "default",
            approvalsFor: "default",
          },
        });
        await store.policies.setWorkspace("T1", { expiryMinutes: 60, approvalsNeeded: 2, updatedBy: "U1" });
        await store.policies.setWorkspace("T1", { approvalsFor: ["restart", "purge", "restart"] });
        await store.policies.setChannel("T1", "C1", {
          approvals: "off",
          approvers: { kind: "list", users: ["U2", "U2"], usergroups: ["S1"] },
        });
        await store.policies.setWorkspace("T1", {
          approvers: { kind: "list", users: ["U9"], usergroups: [] },
        });
        expect(await store.policies.getEffective("T1", "C1")).toEqual({
          approvals: "off",
          approvers: { kind: "list", users: ["U2"], usergroups: ["S1"] },
          expiryMinutes: 60,
          approvalsNeeded: 2,
          approvalsFor: ["purge", "restart"],
          source: {
            approvals: "channel",
            approvers: "channel",
            expiryMinutes: "workspace",
            approvalsNeeded: "workspace",
            approvalsFor: "workspace",
          },
        });
        expect(await store.policies.getEffective("T1", "C2")).toMatchObject({
          approvals: "required",
          approvers: { kind: "list", users: ["U9"], usergroups: [] },
          source: { approvals: "default", approvers: "workspace", expiryMinutes: "workspace" },
        });
        expect((await store.policies.getWorkspace("T1"))?.expiryMinutes).toBe(60);
        expect(await store.policies.getEffective("T2", "C1")).toMatchObject({
          source: { approvals: "default" },
        });
        // null clears one field; clearChannel removes the overrides.
        await store.policies.setChannel("T1", "C1", { approvals: null });
        expect((await store.policies.getEffective("T1", "C1")).source.approvals).toBe("default");
        expect((await store.policies.listChannels("T1")).map((r) => r.channelId)).toEqual(["C1"]);
        expect(await store.policies.clearChannel("T1", "C1")).toBe(true);
        expect(await store.policies.clearChannel("T1", "C1")).toBe(false);
        expect((await store.policies.getEffective("T1", "C1")).source.approvers).toBe("workspace");
      });

      it("refuses invalid values with a user sentence", async () => {
        const store = await open();
        await expect(store.policies.setWorkspace("T1", { approvalsNeeded: 11 })).rejects.toMatchObject({
          kind: "invalid",
        });
        await expect(store.policies.setWorkspace("T1", { expiryMinutes: 0 })).rejects.toMatchObject({
          kind: "invalid",
          userMessage: expect.stringContaining("minutes"),
        });
        await expect(
          store.policies.setChannel("T1", "C1", { approvers: { kind: "list", users: [], usergroups: [] } }),
        ).rejects.toMatchObject({ kind: "invalid" });
        await expect(
          store.policies.setWorkspace("T1", { approvals: "maybe" as unknown as "off" }),
        ).rejects.toMatchObject({ kind: "invalid" });
      });
    });

    describe("approval requests", () => {
      const base = BOT_CATEGORY_REQUEST;

      it("create, get, setMessage, the full lifecycle, and refused moves", async () => {
        const store = await open();
        const r = await store.changeRequests.create(base);
        expect(r.id).toMatch(/^[A-Za-z0-9_-]{16,}$/);
        expect(r).toMatchObject({
          state: "pending",
          attempts: 0,
          decidedBy: null,
          lastError: null,
          messageTs: null,
        });
        expect(await store.changeRequests.get(r.id)).toEqual(r);
        expect(await store.changeRequests.setMessage(r.id, "C1", "1700000000.000100")).toBe(true);
        clock += 5_000;
        const approved = await store.changeRequests.transition(r.id, "pending", "approved", {
          decidedBy: "U2",
          decidedAt: clock,
        });
        expect(approved).toMatchObject({
          state: "approved",
          decidedBy: "U2",
          decidedAt: clock,
          updatedAt: clock,
        });
        expect(approved?.messageTs).toBe("1700000000.000100");
        const failed = await store.changeRequests.transition(r.id, "approved", "failed", {
          incrementAttempts: true,
          lastError: { kind: "http", status: 502, errorKey: "upstream", message: "Bad gateway" },
        });
        expect(failed).toMatchObject({
          state: "failed",
          attempts: 1,
          lastError: { status: 502, errorKey: "upstream" },
        });
        expect(await store.changeRequests.transition(r.id, "failed", "approved")).toMatchObject({
          state: "approved",
        });
        const applied = await store.changeRequests.transition(r.id, ["approved"], "applied", {
          incrementAttempts: true,
          lastError: null,
        });
        expect(applied).toMatchObject({ state: "applied", attempts: 2, lastError: null });
        // A lost compare-and-set resolves to undefined; an impossible move is refused.
        expect(await store.changeRequests.transition(r.id, "pending", "rejected")).toBeUndefined();
        expect(await store.changeRequests.transition("nope", "pending", "rejected")).toBeUndefined();
        await expect(store.changeRequests.transition(r.id, "applied", "pending")).rejects.toMatchObject({
          kind: "invalid",
        });
        await expect(store.changeRequests.create({ ...base, kind: "Not A Kind" })).rejects.toMatchObject({
          kind: "invalid",
        });
        await expect(store.changeRequests.create({ ...base, params: undefined })).rejects.toMatchObject({
          kind: "invalid",
        });
      });

      it("keeps a kind's params and observed value as JSON, and fills the legacy columns for bot categories", async () => {
        const store = await open();
        const policy = await store.changeRequests.create({
          ...base,
          kind: "policy",
          params: { channelId: null, set: { approvals: "off" } },
          observed: { approvals: "required", approvers: null, expiryMinutes: null },
        });
        expect(await store.changeRequests.get(policy.id)).toMatchObject({
          kind: "policy",
          params: { channelId: null, set: { approvals: "off" } },
          observed: { approvals: "required", approvers: null, expiryMinutes: null },
          failedAt: null,
        });
        const bot = await store.changeRequests.create(base);
        expect(await store.changeRequests.get(bot.id)).toMatchObject({
          kind: "bot_category",
          params: { shieldZoneId: 4242, category: 3, action: 1 },
          observed: 0,
        });
      });

      it("one pending request per twin key and workspace; decided or released, the key is free again", async () => {
        const store = await open();
        const first = await store.changeRequests.create({ ...base, twinKey: "same-change" });
        expect(first.twinKey).toBe("same-change");
        await expect(store.changeRequests.create({ ...base, twinKey: "same-change" })).rejects.toBeInstanceOf(
          StoreError,
        );
        // Another workspace, another key, or no key at all: not the same change.
        await store.changeRequests.create({ ...base, teamId: "T2", twinKey: "same-change" });
        await store.changeRequests.create({ ...base, twinKey: "other-change" });
        await store.changeRequests.create(base);
        await store.changeRequests.create(base);
        // Decided: a new request for the same change may wait.
        await store.changeRequests.transition(first.id, "pending", "rejected");
        const second = await store.changeRequests.create({ ...base, twinKey: "same-change" });
        // Released while pending (an expired request the sweeper has not moved yet): free too.
        expect(
          (await store.changeRequests.annotate(second.id, "pending", { twinKey: null }))?.twinKey,
        ).toBeNull();
        expect((await store.changeRequests.create({ ...base, twinKey: "same-change" })).state).toBe(
          "pending",
        );
      });

      it("reads a row written before change kinds existed as a bot-category change", async () => {
        const store = await open();
        const db = storeInternals(store).rawDb;
        await db
          .insertInto("approval_requests")
          .values({
            id: "legacy-row-0123456789",
            team_id: "T1",
            channel_id: "C1",
            requester_id: "U1",
            shield_zone_id: 77,
            category: 2,
            requested_action: 2,
            previous_action: 1,
            state: "pending",
            decided_by: null,
            decided_at: null,
            expires_at: base.expiresAt,
            message_channel: null,
            message_ts: null,
            attempts: 0,
            last_error: null,
            created_at: clock,
            updated_at: clock,
          } as never)
          .execute();
        expect(await store.changeRequests.get("legacy-row-0123456789")).toMatchObject({
          kind: "bot_category",
          params: { shieldZoneId: 77, category: 2, action: 2 },
          observed: 1,
          failedAt: null,
        });
      });

      it("each target remembers its last writer per workspace; a request's replaced value and note round-trip", async () => {
        const store = await open();
        expect(await store.changeRequests.targetOwner("T1", "zone 1/ddos")).toBeUndefined();
        await store.changeRequests.setTargetOwner("T1", "zone 1/ddos", "req-a");
        await store.changeRequests.setTargetOwner("T1", "zone 1/ddos", "req-b");
        await store.changeRequests.setTargetOwner("T2", "zone 1/ddos", "req-c");
        expect((await store.changeRequests.targetOwner("T1", "zone 1/ddos"))?.requestId).toBe("req-b");
        expect((await store.changeRequests.targetOwner("T2", "zone 1/ddos"))?.requestId).toBe("req-c");
        expect(typeof (await store.changeRequests.targetOwner("T1", "zone 1/ddos"))?.since).toBe("number");
        const note = {
          kind: "conflicts" as const,
          with: [{ id: "x", userId: "U1", channelId: "C1", change: "c" }],
        };
        const r = await store.changeRequests.create({ ...base, note });
        expect(r.note).toEqual(note);
        expect((await store.changeRequests.get(r.id))?.replaced).toBeNull();
        const noted = await store.changeRequests.annotate(r.id, "pending", {
          replaced: { value: null },
          note: null,
        });
        expect(noted?.replaced).toEqual({ value: null });
        expect((await store.changeRequests.get(r.id))?.note).toBeNull();
      });

      it("the move to applied makes the request its target's last writer, the loser of the move none", async () => {
        const store = await open();
        const a = await store.changeRequests.create(base);
        const b = await store.changeRequests.create({ ...base, twinKey: null });
        await store.changeRequests.setTargetOwner("T1", "zone 1/bots", "earlier");
        for (const r of [a, b]) await store.changeRequests.transition(r.id, "pending", "approved");
        const own = { teamId: "T1", targetKey: "zone 1/bots" };
        const first = await store.changeRequests.transitionToOwner(
          a.id,
          "approved",
          { undoAt: 123 },
          {},
          own,
        );
        expect(first.moved).toMatchObject({ id: a.id, state: "applied", undoAt: 123 });
        expect(first.takenOver).toBeUndefined();
        expect((await store.changeRequests.targetOwner("T1", "zone 1/bots"))?.requestId).toBe(a.id);
        // Moved already: the compare-and-set loses, and the owner stays whoever won.
        expect(await store.changeRequests.transitionToOwner(a.id, "approved", {}, {}, own)).toEqual({});
        await store.changeRequests.setTargetOwner("T1", "zone 1/bots", "later");
        expect(await store.changeRequests.transitionToOwner(a.id, "approved", {}, {}, own)).toEqual({});
        expect((await store.changeRequests.targetOwner("T1", "zone 1/bots"))?.requestId).toBe("later");
        // A move whose guard does not hold loses too, and records nothing.
        expect(
          await store.changeRequests.transitionToOwner(
            b.id,
            "approved",
            {},
            { approvedBy: ["U0NOBODY"] },
            own,
          ),
        ).toEqual({});
        expect((await store.changeRequests.targetOwner("T1", "zone 1/bots"))?.requestId).toBe("later");
        const second = await store.changeRequests.transitionToOwner(b.id, "approved", {}, {}, own);
        expect(second.moved?.id).toBe(b.id);
        expect((await store.changeRequests.targetOwner("T1", "zone 1/bots"))?.requestId).toBe(b.id);
        expect((await store.changeRequests.get(b.id))?.state).toBe("applied");
      });

      it("an approval's compare-and-set refuses a request whose expiry has passed", async () => {
        const store = await open();
        const r = await store.changeRequests.create(base);
        expect(
          await store.changeRequests.transition(
            r.id,
            "pending",
            "approved",
            {},
            { notExpiredAt: base.expiresAt },
          ),
        ).toBeUndefined();
        expect((await store.changeRequests.get(r.id))?.state).toBe("pending");
        expect(
          await store.changeRequests.transition(
            r.id,
            "pending",
            "approved",
            {},
            { notExpiredAt: base.expiresAt - 1 },
          ),
        ).toMatchObject({ state: "approved" });
      });

      it("the same move with other values writes and compares each call's own values", async () => {
        const store = await open();
        const cr = store.changeRequests;
        const a = await cr.create({ ...base, expiresAt: clock + 1_000 });
        const b = await cr.create({ ...base, expiresAt: clock + 9_000 });
        const approve = (id: string, by: string[], user: string, lease: number) =>
          cr.transition(
            id,
            "pending",
            "approved",
            { approvedBy: [...by, user], decidedBy: user, leaseUntil: lease },
            { notExpiredAt: clock, approvedBy: by },
          );
        expect(await approve(a.id, [], "U1", 111)).toMatchObject({ approvedBy: ["U1"], decidedBy: "U1" });
        expect(await approve(b.id, ["U0"], "U2", 222)).toBeUndefined();
        clock += 5_000;
        expect(await approve(a.id, [], "U3", 333)).toBeUndefined();
        expect(await approve(b.id, [], "U2", 222)).toMatchObject({ approvedBy: ["U2"], decidedBy: "U2" });
        expect((await cr.get(a.id))?.decidedBy).toBe("U1");
        expect(await cr.renewLease(a.id, "approved", 222, 444)).toBe(false);
        expect(await cr.renewLease(b.id, "approved", 222, 444)).toBe(true);
        expect(await cr.renewLease(a.id, "approved", 111, 444)).toBe(true);
        expect(await cr.renewLease(b.id, "approved", 222, 555)).toBe(false);
      });

      it("annotates only in the given state, and lists approved requests left since a given time", async () => {
        const store = await open();
        const r = await store.changeRequests.create(base);
        expect(
          await store.changeRequests.annotate(r.id, "approved", { lastError: { kind: "x", message: "m" } }),
        ).toBe(undefined);
        await store.changeRequests.transition(r.id, "pending", "approved");
        const at = clock;
        const noted = await store.changeRequests.annotate(r.id, "approved", {
          lastError: { kind: "unknown", message: "checking" },
          incrementAttempts: true,
        });
        expect(noted).toMatchObject({ state: "approved", attempts: 1, lastError: { kind: "unknown" } });
        expect(await store.changeRequests.listStaleApproved(at - 1)).toEqual([]);
        expect((await store.changeRequests.listStaleApproved(at)).map((x) => x.id)).toEqual([r.id]);
        const failed = await store.changeRequests.transition(r.id, "approved", "failed", {
          failedAt: at + 7,
        });
        expect(failed?.failedAt).toBe(at + 7);
        expect(await store.changeRequests.listStaleApproved(at + 1_000_000)).toEqual([]);
        expect(await store.changeRequests.transition(r.id, "failed", "cancelled")).toMatchObject({
          state: "cancelled",
        });
      });

      it("temporary changes: undo_at set on apply, listed when due, claimed once by applied → undoing", async () => {
        const store = await open();
        const r = await store.changeRequests.create({ ...base, undoAfterMs: 30 * 60_000 });
        expect(r).toMatchObject({ undoAfterMs: 30 * 60_000, undoAt: null });
        await store.changeRequests.transition(r.id, "pending", "approved", { decidedBy: "U9" });
        const applied = await store.changeRequests.transition(r.id, "approved", "applied", {
          undoAt: clock + 1000,
        });
        expect(applied?.undoAt).toBe(clock + 1000);
        expect(await store.changeRequests.listDueUndo(clock + 999)).toEqual([]);
        expect((await store.changeRequests.listDueUndo(clock + 1000)).map((x) => x.id)).toEqual([r.id]);
        // Not due yet: the due-by guard refuses the claim.
        expect(
          await store.changeRequests.transition(r.id, "applied", "undoing", {}, { undoDueBy: clock + 999 }),
        ).toBeUndefined();
        const stores = [store, await open(), await open()];
        const claims = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            stores[i % 3]!.changeRequests.transition(
              r.id,
              "applied",
              "undoing",
              {},
              { undoDueBy: clock + 1000 },
            ),
          ),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect(
          (await store.changeRequests.listStaleApproved(Number.MAX_SAFE_INTEGER, 10, {}, "undoing")).map(
            (x) => x.id,
          ),
        ).toEqual([r.id]);
        const undone = await store.changeRequests.transition(r.id, "undoing", "undone", { undoAt: null });
        expect(undone).toMatchObject({ state: "undone", undoAt: null });
        await expect(store.changeRequests.transition(r.id, "undone", "applied")).rejects.toThrow(
          /cannot go from undone/,
        );
      });

      it("20 parallel approvals from several connections: exactly one wins", async () => {
        const stores = [await open(), await open(), await open()];
        const r = await stores[0]!.changeRequests.create(base);
        const attempts = Array.from({ length: 20 }, (_, i) =>
          stores[i % stores.length]!.changeRequests.transition(
            r.id,
            "pending",
            i % 2 ? "approved" : "rejected",
            {
              decidedBy: `U${100 + i}`,
              decidedAt: clock,
            },
          ),
        );
        const results = await Promise.all(attempts);
        const winners = results.filter((x): x is ChangeRequest => x !== undefined);
        expect(winners).toHaveLength(1);
        const stored = await stores[0]!.changeRequests.get(r.id);
        expect(stored?.decidedBy).toBe(winners[0]!.decidedBy);
        expect(stored?.state).toBe(winners[0]!.state);
      });

      it("lists pending per team, expired pending, and counts by state", async () => {
        const store = await open();
        const a = await store.changeRequests.create(base);
        const b = await store.changeRequests.create({ ...base, expiresAt: base.expiresAt + 60_000 });
        await store.changeRequests.create({ ...base, teamId: "T2" });
        const c = await store.changeRequests.create(base);
        await store.changeRequests.transition(c.id, "pending", "cancelled");
        expect((await store.changeRequests.listPending("T1")).map((x) => x.id).sort()).toEqual(
          [a.id, b.id].sort(),
        );
        expect(await store.changeRequests.listExpiredPending(base.expiresAt - 1)).toEqual([]);
        expect(
          (await store.changeRequests.listExpiredPending(base.expiresAt)).map((x) => x.teamId).sort(),
        ).toEqual(["T1", "T2"]);
        expect(await store.changeRequests.listExpiredPending(base.expiresAt + 60_000)).toHaveLength(3);
        expect(await store.changeRequests.countByState()).toEqual({
          pending: 3,
          approved: 0,
          applied: 0,
          undoing: 0,
          undone: 0,
          failed: 0,
          rejected: 0,
          expired: 0,
          cancelled: 1,
        });
        expect((await store.changeRequests.countByState("T2")).pending).toBe(1);
      });

      it("lists a page of pending requests by channel, kind or twin key (newest first when asked), and counts them", async () => {
        const store = await open();
        const made: { id: string }[] = [];
        for (let i = 0; i < 5; i++) {
          clock += 1000;
          made.push(
            await store.changeRequests.create({
              ...base,
              channelId: i < 3 ? "C1" : "G2",
              ...(i === 4 ? { kind: "purge", twinKey: "k4" } : {}),
            }),
          );
        }
        await store.changeRequests.create({ ...base, teamId: "T2" });
        const ids = (rs: { id: string }[]) => rs.map((r) => r.id);
        const at = (...i: number[]) => i.map((n) => made[n]?.id);
        expect(ids(await store.changeRequests.listPending("T1", { channelIds: ["C1"] }))).toEqual(
          at(0, 1, 2),
        );
        expect(
          ids(
            await store.changeRequests.listPending("T1", {
              channelIds: ["C1", "G2"],
              limit: 2,
              newestFirst: true,
            }),
          ),
        ).toEqual(at(4, 3));
        expect(await store.changeRequests.listPending("T1", { channelIds: [] })).toEqual([]);
        expect(ids(await store.changeRequests.listPending("T1", { kind: "purge" }))).toEqual(at(4));
        expect(ids(await store.changeRequests.listPending("T1", { twinKey: "k4" }))).toEqual(at(4));
        expect(await store.changeRequests.countPending("T1")).toBe(5);
        expect(await store.changeRequests.countPending("T1", { channelIds: ["G2"] })).toBe(2);
        expect(await store.changeRequests.countPending("T1", { channelIds: [] })).toBe(0);
      });
    });

    describe("workflow steps waiting on requests (function executions)", () => {
      const STEP_TOKEN = "xwfp-5555-PLAINTEXT-WORKFLOW-TOKEN";
      const request = BOT_CATEGORY_REQUEST;

      it("stores the token sealed, keeps the first of two deliveries, claims once, completes, releases for later", async () => {
        const store = await open();
        const step = {
          id: "Fx1",
          teamId: "T1",
          callbackId: "request_block",
          requestId: "R1",
          token: STEP_TOKEN,
        };
        const created = await store.functionExecutions.create(step);
        expect(created).toMatchObject({ state: "waiting", hasToken: true, attempts: 0, retryAt: clock });
        // A redelivery keeps the row as it is.
        expect(await store.functionExecutions.create({ ...step, requestId: "R2" })).toMatchObject({
          requestId: "R1",
        });
        expect(await store.functionExecutions.token("Fx1")).toBe(STEP_TOKEN);
        expect(await allRowsText(store)).not.toContain(STEP_TOKEN);
        if (h.engine === "sqlite") expect((await dataDirBytes(loc.dataDir)).includes(STEP_TOKEN)).toBe(false);

        const claimed = await store.functionExecutions.claim("Fx1", 60_000);
        expect(claimed).toMatchObject({ state: "completing", attempts: 1, leaseUntil: clock + 60_000 });
        expect(await store.functionExecutions.claim("Fx1", 60_000)).toBeUndefined();
        // Released until later: not claimable before then.
        expect(await store.functionExecutions.release("Fx1", clock + 30_000)).toBe(true);
        expect(await store.functionExecutions.claim("Fx1", 60_000)).toBeUndefined();
        clock += 30_000;
        expect(await store.functionExecutions.claim("Fx1", 60_000)).toMatchObject({ attempts: 2 });
        // A lapsed lease (the claimer died) can be taken over.
        clock += 60_000;
        expect(await store.functionExecutions.claim("Fx1", 60_000)).toMatchObject({ attempts: 3 });
        expect(await store.functionExecutions.complete("Fx1", { outputs: { final_state: "applied" } })).toBe(
          true,
        );
        expect(await store.functionExecutions.complete("Fx1", { error: "again" })).toBe(false);
        expect(await store.functionExecutions.get("Fx1")).toMatchObject({
          state: "completed",
          outcome: { outputs: { final_state: "applied" } },
        });
        expect(await store.functionExecutions.claim("Fx1", 60_000)).toBeUndefined();
        expect(await store.functionExecutions.listWaitingOn("R1")).toEqual([]);
      });

      it("lists the steps whose request settled (and only those), in the scope", async () => {
        const store = await open();
        const pending = await store.changeRequests.create(request);
        const rejected = await store.changeRequests.create(request);
        const other = await store.changeRequests.create({ ...request, teamId: "T2" });
        await store.changeRequests.transition(rejected.id, "pending", "rejected", { decidedBy: "U2" });
        await store.changeRequests.transition(other.id, "pending", "expired", {});
        for (const [id, r] of [
          ["FxP", pending],
          ["FxR", rejected],
          ["FxO", other],
        ] as const)
          await store.functionExecutions.create({
            id,
            teamId: r.teamId,
            callbackId: "request_block",
            requestId: r.id,
          });
        expect((await store.functionExecutions.listSettleable()).map((e) => e.id).sort()).toEqual([
          "FxO",
          "FxR",
        ]);
        expect(
          (await store.functionExecutions.listSettleable(50, { teamIds: ["T1"] })).map((e) => e.id),
        ).toEqual(["FxR"]);
        expect(await store.functionExecutions.listSettleable(50, { teamIds: [] })).toEqual([]);
        expect((await store.functionExecutions.listWaitingOn(pending.id)).map((e) => e.id)).toEqual(["FxP"]);
        // Claimed (leased) steps are not listed until the lease lapses.
        await store.functionExecutions.claim("FxR", 60_000);
        expect((await store.functionExecutions.listSettleable()).map((e) => e.id)).toEqual(["FxO"]);
        // A step with no request to wait on is listed once its completion was released with the result.
        await store.functionExecutions.create({
          id: "FxE",
          teamId: "T1",
          callbackId: "c",
          requestId: "none",
        });
        expect((await store.functionExecutions.listSettleable()).map((e) => e.id)).toEqual(["FxO"]);
        await store.functionExecutions.claim("FxE", 60_000);
        await store.functionExecutions.release("FxE", clock + 30_000, { error: "No key." });
        expect((await store.functionExecutions.listSettleable()).map((e) => e.id)).toEqual(["FxO"]);
        clock += 30_000;
        const listed = await store.functionExecutions.listSettleable();
        expect(listed.map((e) => e.id).sort()).toEqual(["FxE", "FxO"]);
        expect(listed.find((e) => e.id === "FxE")?.outcome).toEqual({ error: "No key." });
      });

      it("20 parallel claims from several connections: exactly one wins", async () => {
        const stores = [await open(), await open(), await open()];
        await stores[0]!.functionExecutions.create({
          id: "FxRace",
          teamId: "T1",
          callbackId: "c",
          requestId: "R",
        });
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            stores[i % stores.length]!.functionExecutions.claim("FxRace", 60_000),
          ),
        );
        expect(results.filter((x) => x !== undefined)).toHaveLength(1);
      });

      it("key rotation re-seals the tokens of steps still waiting", async () => {
        const oldKey = loc.env.ENCRYPTION_KEY!;
        const before = await open();
        await before.functionExecutions.create({
          id: "FxK",
          teamId: "T1",
          callbackId: "c",
          requestId: "R",
          token: STEP_TOKEN,
        });
        const both = { ENCRYPTION_KEY: "", ENCRYPTION_KEYS: `new:${masterKeyB64()},old:${oldKey}` };
        const rotator = await open(both);
        expect(await rotateAll(rotator)).toMatchObject({ reEncrypted: 1, failed: [] });
        const newOnly = await open({
          ENCRYPTION_KEY: "",
          ENCRYPTION_KEYS: both.ENCRYPTION_KEYS.split(",")[0]!,
        });
        expect(await newOnly.functionExecutions.token("FxK")).toBe(STEP_TOKEN);
      });
    });

    describe("schedules", () => {
      const base = DNS_SCHEDULE;

      it("create, list, get, due, record runs, failing, remove only within the team", async () => {
        const store = await open();
        const s = await store.schedules.create(base);
        const s2 = await store.schedules.create({
          ...base,
          channelId: "C2",
          nextRunAt: base.nextRunAt + 1000,
        });
        const t2 = await store.schedules.create({ ...base, teamId: "T2", nextRunAt: base.nextRunAt + 5000 });
        expect(s).toMatchObject({ failing: false, lastRunAt: null, snapshot: null, createdAt: clock });
        // Both were created at the same instant (the test clock), so only the set is defined.
        expect((await store.schedules.list("T1")).map((x) => x.id).sort()).toEqual([s.id, s2.id].sort());
        expect((await store.schedules.list("T1", "C2")).map((x) => x.id)).toEqual([s2.id]);
        expect(await store.schedules.listDue(base.nextRunAt - 1, 10)).toEqual([]);
        expect((await store.schedules.listDue(base.nextRunAt + 1000, 2)).map((x) => x.id)).toEqual([
          s.id,
          s2.id,
        ]);
        // Round-robin across workspaces: T2's first comes before T1's second.
        expect((await store.schedules.listDue(base.nextRunAt + 5000, 3)).map((x) => x.id)).toEqual([
          s.id,
          t2.id,
          s2.id,
        ]);
        const snapshot = { records: [{ name: "www", type: "A", value: "1.2.3.4" }] };
        expect(await store.schedules.recordRun(s.id, { at: clock, outcome: "ok", snapshot })).toBe(true);
        expect(await store.schedules.get(s.id)).toMatchObject({
          lastRunAt: clock,
          lastOutcome: "ok",
          snapshot,
        });
        await store.schedules.recordRun(s.id, { at: clock + 1, outcome: "error", error: "Edge API 500" });
        expect(await store.schedules.get(s.id)).toMatchObject({
          lastOutcome: "error",
          lastError: "Edge API 500",
          snapshot,
        });
        await store.schedules.markFailing(s.id, "key removed");
        expect(await store.schedules.get(s.id)).toMatchObject({ failing: true, lastError: "key removed" });
        await store.schedules.clearFailing(s.id);
        expect((await store.schedules.get(s.id))?.failing).toBe(false);
        expect(await store.schedules.remove("T2", s.id)).toBe(false);
        expect(await store.schedules.remove("T1", s.id)).toBe(true);
        expect(await store.schedules.get(s.id)).toBeUndefined();
      });

      it("lists due schedules round-robin across workspaces, so a backlog cannot fill the batch", async () => {
        const store = await open();
        const big: string[] = [];
        for (let i = 0; i < 30; i++)
          big.push(
            (await store.schedules.create({ ...base, teamId: "TBIG", nextRunAt: base.nextRunAt + i })).id,
          );
        const lone = await store.schedules.create({
          ...base,
          teamId: "TLONE",
          nextRunAt: base.nextRunAt + 99,
        });
        const pair = await store.schedules.create({
          ...base,
          teamId: "TPAIR",
          nextRunAt: base.nextRunAt + 50,
        });
        const pair2 = await store.schedules.create({
          ...base,
          teamId: "TPAIR",
          nextRunAt: base.nextRunAt + 60,
        });
        await store.schedules.create({ ...base, teamId: "TLATE", nextRunAt: base.nextRunAt + 100_000 });
        const due = (await store.schedules.listDue(base.nextRunAt + 1000, 6)).map((x) => x.id);
        expect(due).toEqual([big[0], pair.id, lone.id, big[1], pair2.id, big[2]]);
        expect(await store.schedules.listDue(base.nextRunAt + 1000, 100)).toHaveLength(33);
      });

      it("createIfRoom: the same schedule once, then at most perChannel and perWorkspace", async () => {
        const store = await open();
        const limits = { perChannel: 2, perWorkspace: 3 };
        const first = await store.schedules.createIfRoom(base, limits);
        expect(first.kind).toBe("created");
        const again = await store.schedules.createIfRoom({ ...base, createdBy: "U2" }, limits);
        expect(again).toEqual({ kind: "exists", schedule: first.kind === "created" ? first.schedule : null });
        expect((await store.schedules.createIfRoom({ ...base, target: "zone-2" }, limits)).kind).toBe(
          "created",
        );
        expect(await store.schedules.createIfRoom({ ...base, target: "zone-3" }, limits)).toEqual({
          kind: "full",
          scope: "channel",
          limit: 2,
        });
        expect(
          (await store.schedules.createIfRoom({ ...base, channelId: "C2", target: "zone-3" }, limits)).kind,
        ).toBe("created");
        expect(
          await store.schedules.createIfRoom({ ...base, channelId: "C3", target: "zone-4" }, limits),
        ).toEqual({ kind: "full", scope: "workspace", limit: 3 });
        // Other workspaces have their own room; a full channel still recognises its existing schedule.
        expect((await store.schedules.createIfRoom({ ...base, teamId: "T2" }, limits)).kind).toBe("created");
        expect((await store.schedules.createIfRoom(base, limits)).kind).toBe("exists");
        expect(await store.schedules.list("T1")).toHaveLength(3);
        await expect(
          store.schedules.createIfRoom({ ...base, nextRunAt: Number.NaN }, limits),
        ).rejects.toThrow(StoreError);
      });

      it("30 parallel createIfRoom (from several connections on PostgreSQL) never exceed the limits", async () => {
        // PostgreSQL: three replicas' pools. SQLite serves one process through one connection (docs/scaling.md:
        // one process per DATA_DIR), so its racers share that connection.
        const stores = h.engine === "postgres" ? [await open(), await open(), await open()] : [await open()];
        const limits = { perChannel: 4, perWorkspace: 7 };
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            stores[i % stores.length]!.schedules.createIfRoom(
              { ...base, channelId: `C${i % 3}`, target: `zone-${i}` },
              limits,
            ),
          ),
        );
        expect(results.filter((r) => r.kind === "created")).toHaveLength(7);
        expect(results.filter((r) => r.kind === "full")).toHaveLength(23);
        const stored = await stores[0]!.schedules.list("T1");
        expect(stored).toHaveLength(7);
        for (const channel of ["C0", "C1", "C2"])
          expect(stored.filter((x) => x.channelId === channel).length).toBeLessThanOrEqual(4);
      });

      it("20 parallel claims of one occurrence from several connections: exactly one wins", async () => {
        const stores = [await open(), await open(), await open()];
        const s = await stores[0]!.schedules.create(base);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            stores[i % stores.length]!.schedules.claim(s.id, base.nextRunAt, base.nextRunAt + 86_400_000),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        expect((await stores[1]!.schedules.get(s.id))?.nextRunAt).toBe(base.nextRunAt + 86_400_000);
        expect(await stores[2]!.schedules.claim(s.id, base.nextRunAt, base.nextRunAt + 1)).toBe(false);
      });

      it("leases: a claimed run is not due while its lease holds; once it ends one of 20 racers takes it over", async () => {
        const stores = h.engine === "postgres" ? [await open(), await open(), await open()] : [await open()];
        const [store] = stores as [Store];
        const s = await store.schedules.create(base);
        const t0 = base.nextRunAt;
        const next = t0 + 86_400_000;
        // Claimed at t0 with a 60 s lease: the occurrence is running, not due (nor is it due again at t0 + 1 s).
        expect(await store.schedules.claim(s.id, t0, next, {}, { expected: null, until: t0 + 60_000 })).toBe(
          true,
        );
        expect(await store.schedules.get(s.id)).toMatchObject({ nextRunAt: next, leaseUntil: t0 + 60_000 });
        expect(await store.schedules.listDue(t0 + 1_000, 10)).toEqual([]);
        // Renewed by its holder before it ends; a stale lease time or an ended lease is refused.
        expect(await store.schedules.renewLease(s.id, t0 + 60_000, t0 + 80_000, t0 + 20_000)).toBe(true);
        expect(await store.schedules.renewLease(s.id, t0 + 60_000, t0 + 90_000, t0 + 30_000)).toBe(false);
        expect(await store.schedules.renewLease(s.id, t0 + 80_000, t0 + 150_000, t0 + 80_000)).toBe(false);
        expect(await store.schedules.listDue(t0 + 79_999, 10)).toEqual([]);
        // The holder died: at the lease's end the occurrence is due again, though next_run_at is a day away.
        const [lost] = await store.schedules.listDue(t0 + 80_000, 10);
        expect(lost).toMatchObject({ id: s.id, leaseUntil: t0 + 80_000, nextRunAt: next });
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            stores[i % stores.length]!.schedules.claim(
              s.id,
              next,
              next,
              {},
              {
                expected: t0 + 80_000,
                until: t0 + 140_000 + i,
              },
            ),
          ),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = (await store.schedules.get(s.id))?.leaseUntil ?? 0;
        expect(winner).toBeGreaterThanOrEqual(t0 + 140_000);
        // The late first holder cannot record (nor release) a run it no longer owns; the winner can.
        expect(await store.schedules.recordRun(s.id, { at: t0, outcome: "ok" }, t0 + 80_000)).toBe(false);
        expect(await store.schedules.get(s.id)).toMatchObject({ lastRunAt: null, leaseUntil: winner });
        expect(await store.schedules.recordRun(s.id, { at: t0 + 81_000, outcome: "ok" }, winner)).toBe(true);
        expect(await store.schedules.get(s.id)).toMatchObject({ lastRunAt: t0 + 81_000, leaseUntil: null });
        // Released: not due again until its next occurrence.
        expect(await store.schedules.listDue(t0 + 200_000, 10)).toEqual([]);
        expect((await store.schedules.listDue(next, 10)).map((x) => x.id)).toEqual([s.id]);
        // A claim that expects no lease fails on a leased row.
        expect(
          await store.schedules.claim(s.id, next, next + 1, {}, { expected: null, until: next + 60_000 }),
        ).toBe(true);
        expect(await store.schedules.claim(s.id, next + 1, next + 2)).toBe(false);
      });
    });

    describe("watches and alert episodes", () => {
      const zone = {
        teamId: "T1",
        channelId: "C1",
        createdBy: "U1",
        kind: "zone" as const,
        target: "4242",
        options: { sensitivity: "normal" as const, label: "shop.example" },
        nextPollAt: 1_700_000_060_000,
      };
      const apps = { ...zone, kind: "apps" as const, target: "", options: { statuses: ["failing"] } };
      const limits = { perChannel: 2, perWorkspace: 3 };

      it("createIfRoom once per (channel, kind, target), capped per channel and workspace; list, mute, remove", async () => {
        const store = await open();
        const first = await store.watches.createIfRoom(zone, limits);
        expect(first.kind).toBe("created");
        if (first.kind !== "created") return;
        expect(first.item).toMatchObject({
          ...zone,
          failing: false,
          mutedUntil: null,
          state: null,
          createdAt: clock,
        });
        expect(await store.watches.createIfRoom({ ...zone, createdBy: "U2" }, limits)).toEqual({
          kind: "exists",
          item: first.item,
        });
        expect((await store.watches.createIfRoom(apps, limits)).kind).toBe("created");
        expect(await store.watches.createIfRoom({ ...zone, target: "7" }, limits)).toEqual({
          kind: "full",
          scope: "channel",
          limit: 2,
        });
        expect((await store.watches.createIfRoom({ ...zone, channelId: "C2" }, limits)).kind).toBe("created");
        expect(await store.watches.createIfRoom({ ...zone, channelId: "C3" }, limits)).toEqual({
          kind: "full",
          scope: "workspace",
          limit: 3,
        });
        // Schedules and watches are capped separately.
        expect(
          (
            await store.schedules.createIfRoom(
              { ...zone, kind: "dns", spec: "daily", timezone: "UTC", nextRunAt: zone.nextPollAt },
              limits,
            )
          ).kind,
        ).toBe("created");
        expect(await store.watches.count("T1")).toBe(3);
        expect(await store.watches.count("T2")).toBe(0);
        expect((await store.watches.list("T1", "C2")).map((w) => w.channelId)).toEqual(["C2"]);
        expect(await store.watches.mute("T2", first.item.id, clock + 3_600_000)).toBe(false);
        expect(await store.watches.mute("T1", first.item.id, clock + 3_600_000)).toBe(true);
        expect((await store.watches.get(first.item.id))?.mutedUntil).toBe(clock + 3_600_000);
        expect(await store.watches.mute("T1", first.item.id, null)).toBe(true);
        expect((await store.watches.get(first.item.id))?.mutedUntil).toBeNull();
        await expect(store.watches.createIfRoom({ ...zone, nextPollAt: Number.NaN }, limits)).rejects.toThrow(
          StoreError,
        );
        await expect(
          store.watches.createIfRoom({ ...zone, kind: "dns" as unknown as "zone" }, limits),
        ).rejects.toThrow(StoreError);
        const e = await store.episodes.open({
          watchId: first.item.id,
          teamId: "T1",
          channelId: "C1",
          subject: "4242",
          seq: 1,
          kind: "attack",
          details: {},
        });
        expect(e).toBeDefined();
        expect(await store.watches.remove("T2", first.item.id)).toBe(false);
        expect(await store.watches.remove("T1", first.item.id)).toBe(true);
        expect(await store.watches.get(first.item.id)).toBeUndefined();
        // The alert stays history, closed at the removal and marked so; a workspace's removal forgets it.
        expect(await store.episodes.get(e!.id)).toMatchObject({
          status: "resolved",
          resolvedAt: expect.any(Number),
          details: { closedBy: "watch_removed" },
        });
        expect(await store.episodes.listOpen("T1")).toEqual([]);
        const again = await store.watches.createIfRoom(zone, limits);
        if (again.kind !== "created") throw new Error(again.kind);
        const kept = await store.episodes.open({ ...e!, watchId: again.item.id, details: {} });
        expect(await store.watches.remove("T1", again.item.id, "forget")).toBe(true);
        expect(await store.episodes.get(kept!.id)).toBeUndefined();
      });

      it("due watches round-robin across workspaces, one claim per evaluation, polls recorded with state", async () => {
        const stores = [await open(), await open(), await open()];
        const store = stores[0]!;
        const made = async (w: typeof zone) => {
          const r = await store.watches.createIfRoom(w, { perChannel: 100, perWorkspace: 100 });
          if (r.kind !== "created") throw new Error(r.kind);
          return r.item;
        };
        const a1 = await made(zone);
        const a2 = await made({ ...zone, target: "2", nextPollAt: zone.nextPollAt + 10 });
        const b1 = await made({ ...zone, teamId: "T2", nextPollAt: zone.nextPollAt + 20 });
        await made({ ...zone, teamId: "T3", nextPollAt: zone.nextPollAt + 100_000 });
        expect((await store.watches.listDue(zone.nextPollAt + 50, 10)).map((w) => w.id)).toEqual([
          a1.id,
          b1.id,
          a2.id,
        ]);
        expect(await store.watches.listDue(zone.nextPollAt + 50, 10, { teamIds: ["T2"] })).toHaveLength(1);
        expect(await store.watches.listDue(zone.nextPollAt + 50, 10, { teamIds: [] })).toEqual([]);
        const wins = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            stores[i % 3]!.watches.claim(a1.id, a1.nextPollAt, a1.nextPollAt + 60_000),
          ),
        );
        expect(wins.filter(Boolean)).toHaveLength(1);
        expect(await store.watches.claim(b1.id, b1.nextPollAt, b1.nextPollAt + 1, { teamIds: ["T1"] })).toBe(
          false,
        );
        const state = { samples: [{ at: 1, counts: { ddos: 3 } }] };
        expect(await store.watches.recordPoll(a1.id, { at: clock, state })).toBe(true);
        expect(await stores[1]!.watches.get(a1.id)).toMatchObject({
          lastPolledAt: clock,
          lastError: null,
          state,
          nextPollAt: a1.nextPollAt + 60_000,
        });
        await store.watches.recordPoll(a1.id, { at: clock + 1, error: "Edge API 500" });
        expect(await store.watches.get(a1.id)).toMatchObject({ state, lastError: "Edge API 500" });
        await store.watches.markFailing(a1.id, "not_in_channel");
        expect(await store.watches.get(a1.id)).toMatchObject({ failing: true, lastError: "not_in_channel" });
        await store.watches.clearFailing(a1.id);
        expect((await store.watches.get(a1.id))?.failing).toBe(false);
      });

      it("an episode opens once per (watch, subject, seq) across connections; parent and acknowledgement recorded once; version CAS", async () => {
        const stores = [await open(), await open(), await open()];
        const store = stores[0]!;
        const base = {
          watchId: "W1",
          teamId: "T1",
          channelId: "C1",
          subject: "app-1",
          kind: "failing",
          details: { status: "Failing" },
        };
        const opened = await Promise.all(
          Array.from({ length: 12 }, (_, i) => stores[i % 3]!.episodes.open({ ...base, seq: 1 })),
        );
        const winners = opened.filter((e) => e !== undefined);
        expect(winners).toHaveLength(1);
        const e = winners[0]!;
        expect(e).toMatchObject({ status: "firing", messageTs: null, version: 1, openedAt: clock });
        await expect(store.episodes.open({ ...base, seq: 0 })).rejects.toThrow(StoreError);
        expect(await store.episodes.latest("W1", "app-1")).toEqual(e);
        expect(await store.episodes.latest("W1", "app-2")).toBeUndefined();

        const ts = await Promise.all([
          stores[0]!.episodes.setMessage(e.id, "1.1"),
          stores[1]!.episodes.setMessage(e.id, "2.2"),
          stores[2]!.episodes.setMessage(e.id, "3.3"),
        ]);
        expect(ts.filter(Boolean)).toHaveLength(1);
        const posted = (await store.episodes.get(e.id))!;
        expect(["1.1", "2.2", "3.3"]).toContain(posted.messageTs);

        clock += 5_000;
        const moved = await store.episodes.update(e.id, 1, { details: { status: "Failing", n: 2 } });
        expect(moved).toMatchObject({ version: 2, updatedAt: clock, details: { status: "Failing", n: 2 } });
        expect(await stores[1]!.episodes.update(e.id, 1, { status: "resolved" })).toBeUndefined();
        const acks = await Promise.all([
          stores[0]!.episodes.acknowledge(e.id, "U1"),
          stores[1]!.episodes.acknowledge(e.id, "U2"),
        ]);
        expect(acks.filter(Boolean)).toHaveLength(1);
        expect((await store.episodes.get(e.id))?.acknowledgedAt).toBe(clock);

        const other = await store.episodes.open({ ...base, channelId: "C2", subject: "app-2", seq: 1 });
        const third = await store.episodes.open({ ...base, teamId: "T2", subject: "app-3", seq: 1 });
        // The posted one is delivered; the other two still wait for their parent.
        expect((await store.episodes.listUndelivered("W1")).map((x) => x.id).sort()).toEqual(
          [other!.id, third!.id].sort(),
        );
        expect((await store.episodes.listOpen("T1")).map((x) => x.id).sort()).toEqual(
          [e.id, other!.id].sort(),
        );
        expect((await store.episodes.listOpen("T1", ["C2"])).map((x) => x.id)).toEqual([other!.id]);
        expect(await store.episodes.listOpen("T1", [])).toEqual([]);

        const resolved = await store.episodes.update(e.id, 2, { status: "resolved", resolvedAt: clock });
        expect(resolved).toMatchObject({ status: "resolved", resolvedAt: clock, version: 3 });
        expect((await store.episodes.listOpen("T1")).map((x) => x.id)).toEqual([other!.id]);
        // What Slack last showed: a resolved parent is refreshed until Slack took its last version.
        expect((await store.episodes.listToRefresh("W1")).map((x) => x.id)).toEqual([e.id]);
        expect(await store.episodes.setShown(e.id, 3, "d3")).toBe(true);
        expect(await stores[1]!.episodes.setShown(e.id, 2, "d2")).toBe(false);
        expect(await store.episodes.get(e.id)).toMatchObject({ shownVersion: 3, shownDigest: "d3" });
        expect(await store.episodes.listToRefresh("W1")).toEqual([]);
        const next = await store.episodes.open({ ...base, seq: 2 });
        expect((await store.episodes.latest("W1", "app-1"))?.id).toBe(next!.id);
        expect((await store.episodes.listForWatch("W1")).map((x) => [x.subject, x.seq])).toEqual([
          ["app-1", 1],
          ["app-1", 2],
          ["app-2", 1],
          ["app-3", 1],
        ]);
      });
    });

    describe("work scopes (the local console claims only its own workspace's work)", () => {
      const approval = { ...BOT_CATEGORY_REQUEST, expiresAt: 1_700_000_000_000 + 60_000 };
      const schedule = DNS_SCHEDULE;

      it("due schedules and their claims: only the scope's workspaces; no scope: every workspace", async () => {
        const store = await open();
        const mine = await store.schedules.create({ ...schedule, teamId: "TCONSOLE" });
        const real = await store.schedules.create({ ...schedule, teamId: "TREAL" });
        const due = schedule.nextRunAt + 1;
        const scope = { teamIds: ["TCONSOLE"] };
        expect((await store.schedules.listDue(due, 10, scope)).map((x) => x.id)).toEqual([mine.id]);
        expect((await store.schedules.listDue(due, 10)).map((x) => x.id).sort()).toEqual(
          [mine.id, real.id].sort(),
        );
        expect(await store.schedules.listDue(due, 10, { teamIds: [] })).toEqual([]);
        // A claim outside the scope changes nothing, even with the right expected time.
        expect(await store.schedules.claim(real.id, schedule.nextRunAt, due + 86_400_000, scope)).toBe(false);
        expect((await store.schedules.get(real.id))?.nextRunAt).toBe(schedule.nextRunAt);
        expect(await store.schedules.claim(real.id, schedule.nextRunAt, due + 1, { teamIds: [] })).toBe(
          false,
        );
        expect(await store.schedules.claim(mine.id, schedule.nextRunAt, due + 86_400_000, scope)).toBe(true);
        expect(await store.schedules.claim(real.id, schedule.nextRunAt, due + 86_400_000)).toBe(true);
      });

      it("expired pending and stale approved requests: only the scope's workspaces", async () => {
        const store = await open();
        const mine = await store.changeRequests.create({ ...approval, teamId: "TCONSOLE" });
        const real = await store.changeRequests.create({ ...approval, teamId: "TREAL" });
        const scope = { teamIds: ["TCONSOLE"] };
        const expired = approval.expiresAt;
        expect((await store.changeRequests.listExpiredPending(expired, 10, scope)).map((x) => x.id)).toEqual([
          mine.id,
        ]);
        expect((await store.changeRequests.listExpiredPending(expired, 10)).map((x) => x.id).sort()).toEqual(
          [mine.id, real.id].sort(),
        );
        expect(await store.changeRequests.listExpiredPending(expired, 10, { teamIds: [] })).toEqual([]);

        await store.changeRequests.transition(mine.id, "pending", "approved");
        await store.changeRequests.transition(real.id, "pending", "approved");
        expect((await store.changeRequests.listStaleApproved(clock, 10, scope)).map((x) => x.id)).toEqual([
          mine.id,
        ]);
        expect((await store.changeRequests.listStaleApproved(clock, 10)).map((x) => x.id).sort()).toEqual(
          [mine.id, real.id].sort(),
        );
        expect(await store.changeRequests.listStaleApproved(clock, 10, { teamIds: [] })).toEqual([]);
      });
    });

    describe("audit log", () => {
      it("appends and lists newest first, per team, with secret-named details censored", async () => {
        const store = await open();
        for (let i = 0; i < 5; i++) {
          clock += 1000;
          await store.audit.append({
            teamId: "T1",
            userId: "U1",
            action: `a${i}`,
            target: "zone-1",
            outcome: "ok",
          });
        }
        await store.audit.append({
          at: 1,
          teamId: "T1",
          userId: "U2",
          action: "key.set",
          target: "workspace",
          outcome: "ok",
          details: { fingerprint: "…beef", apiKey: PLAIN_KEY, nested: { n: 1 } },
        });
        await store.audit.append({ teamId: "T2", userId: "U1", action: "x", target: "y", outcome: "denied" });
        const list = await store.audit.list("T1", 3);
        expect(list.map((e) => e.action)).toEqual(["a4", "a3", "a2"]);
        const all = await store.audit.list("T1", 100);
        expect(all).toHaveLength(6);
        expect(all.at(-1)).toMatchObject({
          at: 1,
          userId: "U2",
          details: { fingerprint: "…beef", apiKey: "[redacted]", nested: { n: 1 } },
        });
        // No update or delete by id: rows leave only by age.
        expect(Object.keys(store.audit).sort()).toEqual(["append", "list", "prune"]);
      });

      it("lists one reader's channels (details.channelId) and prunes by age in batches, oldest first", async () => {
        const store = await open();
        const add = (teamId: string, at: number, channelId?: string) =>
          store.audit.append({
            at,
            teamId,
            userId: "U1",
            action: `a${at}`,
            target: "t",
            outcome: "ok",
            ...(channelId ? { details: { channelId } } : {}),
          });
        for (let at = 1; at <= 7; at++) await add("T1", at, at % 2 ? "C1" : "G2");
        await add("T1", 8);
        await add("T2", 2, "C1");
        expect((await store.audit.list("T1", 10, { channelIds: ["G2"] })).map((e) => e.at)).toEqual([
          6, 4, 2,
        ]);
        expect((await store.audit.list("T1", 2, { channelIds: ["C1", "G2"] })).map((e) => e.at)).toEqual([
          7, 6,
        ]);
        expect(await store.audit.list("T1", 10, { channelIds: [] })).toEqual([]);

        expect(await store.audit.prune(4, 2)).toBe(2);
        expect(await store.audit.prune(4, 2)).toBe(1);
        expect(await store.audit.prune(4, 2)).toBe(0);
        expect((await store.audit.list("T1", 10)).map((e) => e.at)).toEqual([8, 7, 6, 5, 4]);
        // A scope prunes only its workspaces' rows.
        expect(await store.audit.prune(100, 10, { teamIds: ["T2"] })).toBe(1);
        expect(await store.audit.prune(100, 10, { teamIds: [] })).toBe(0);
        expect(await store.audit.list("T1", 10)).toHaveLength(5);
      });

      it("appends made at once are all stored in the order made, and a row that can't be stored fails alone", async () => {
        const store = await open();
        const appends = Array.from({ length: 120 }, (_, i) =>
          store.audit.append({
            at: 1_000 + i,
            teamId: "T1",
            // Row 70 breaks a NOT NULL constraint: only its append may fail.
            userId: i === 70 ? (null as unknown as string) : `U${i}`,
            action: `a${i}`,
            target: "zone-1",
            outcome: "ok",
          }),
        );
        const settled = await Promise.allSettled(appends);
        const failed = settled.flatMap((r, i) => (r.status === "rejected" ? [i] : []));
        expect(failed).toEqual([70]);
        expect((settled[70] as PromiseRejectedResult).reason).toMatchObject({ kind: "invalid" });
        const all = await store.audit.list("T1", 500);
        expect(all).toHaveLength(119);
        // Newest first, ids in the order the appends were made.
        expect(all.map((e) => e.action).reverse()).toEqual(
          Array.from({ length: 120 }, (_, i) => `a${i}`).filter((a) => a !== "a70"),
        );
        expect(all.every((e, i) => i === 0 || (all[i - 1] as { id: number }).id > e.id)).toBe(true);
      });
    });

    describe("target locks", () => {
      it("one holder at a time; a lease that ended is taken over; renew and release only by the holder", async () => {
        const store = await open();
        const t = store.targetLocks;
        expect(await t.take("k:zone:1", "a", 2_000, 1_000)).toBe(true);
        expect(await t.take("k:zone:1", "b", 2_500, 1_500)).toBe(false);
        expect(await t.take("k:zone:2", "b", 2_500, 1_500)).toBe(true);
        expect(await t.renew("k:zone:1", "b", 2_000, 3_000)).toBe(false);
        expect(await t.renew("k:zone:1", "a", 2_000, 3_000)).toBe(true);
        // a's renewed lease still holds at 2 500; once it has ended (a died), b takes it.
        expect(await t.take("k:zone:1", "b", 3_500, 2_500)).toBe(false);
        expect(await t.take("k:zone:1", "b", 4_000, 3_001)).toBe(true);
        await t.release("k:zone:1", "a");
        expect(await t.renew("k:zone:1", "a", 3_000, 5_000)).toBe(false);
        expect(await t.take("k:zone:1", "c", 4_500, 3_500)).toBe(false);
        await t.release("k:zone:1", "b");
        expect(await t.take("k:zone:1", "c", 4_500, 3_500)).toBe(true);
      });
    });

    describe("zone readings", () => {
      it("one claim per key, zone and minute; only its reader records; rows of other keys and minutes apart; old minutes pruned", async () => {
        const store = await open();
        const r = store.zoneReadings;
        expect(await r.claim("k1", 18401, 60_000, "a", 60_100)).toBe(true);
        // Another replica asking in the same minute loses the claim; another minute or key is another row.
        expect(await r.claim("k1", 18401, 60_000, "b", 60_200)).toBe(false);
        expect(await r.claim("k1", 18401, 120_000, "b", 120_100)).toBe(true);
        expect(await r.claim("k2", 18401, 60_000, "b", 60_300)).toBe(true);
        expect(await r.list("k1", [18401, 18402], 60_000)).toEqual([
          { zoneId: 18401, reader: "a", claimedAt: 60_100, readAt: null, reading: null },
        ]);
        await r.record("k1", 18401, 60_000, "b", '{"state":"usual"}', 60_400);
        expect((await r.list("k1", [18401], 60_000))[0]?.reading).toBeNull();
        await r.record("k1", 18401, 60_000, "a", '{"state":"unusual"}', 60_500);
        expect(await r.list("k1", [18401], 60_000)).toEqual([
          { zoneId: 18401, reader: "a", claimedAt: 60_100, readAt: 60_500, reading: '{"state":"unusual"}' },
        ]);
        expect(await r.list("k1", [], 60_000)).toEqual([]);
        await r.prune("k1", 120_000);
        expect(await r.list("k1", [18401], 60_000)).toEqual([]);
        expect(await r.list("k1", [18401], 120_000)).toHaveLength(1);
        expect(await r.list("k2", [18401], 60_000)).toHaveLength(1);
      });
    });

    describe("temporary changes' undo times (Make permanent, Extend, the heads-up before an undo)", () => {
      /** A request applied as a temporary change, undone at `undoAt`. */
      async function appliedUntil(store: Store, undoAt: number, params = BOT_CATEGORY_REQUEST.params) {
        const r = await store.changeRequests.create({ ...BOT_CATEGORY_REQUEST, params, undoAfterMs: 60_000 });
        await store.changeRequests.transition(r.id, "pending", "approved", { decidedAt: clock });
        return (await store.changeRequests.transition(r.id, "approved", "applied", { undoAt }))!;
      }

      it("an undo time moves only from the one it was read as (undoAtIs), and only while applied", async () => {
        const store = await open();
        const r = await appliedUntil(store, clock + 600_000);
        const cr = store.changeRequests;
        expect(
          await cr.annotate(r.id, "applied", { undoAt: clock + 1 }, { undoAtIs: clock + 5 }),
        ).toBeUndefined();
        const extended = await cr.annotate(
          r.id,
          "applied",
          { undoAt: clock + 900_000 },
          { undoAtIs: clock + 600_000 },
        );
        expect(extended?.undoAt).toBe(clock + 900_000);
        // A second press decided on the old undo time loses.
        expect(
          await cr.annotate(r.id, "applied", { undoAt: null }, { undoAtIs: clock + 600_000 }),
        ).toBeUndefined();
        const permanent = await cr.annotate(r.id, "applied", { undoAt: null }, { undoAtIs: clock + 900_000 });
        expect(permanent?.undoAt).toBeNull();
        expect((await cr.annotate(r.id, "applied", {}, { undoAtIs: null }))?.id).toBe(r.id);
        expect(await cr.listDueUndo(clock + 10_000_000)).toEqual([]);
      });

      it("lists the applied changes undone within a window, soonest first, in the scope", async () => {
        const store = await open();
        const late = await appliedUntil(store, clock + 400_000);
        const soon = await appliedUntil(store, clock + 200_000);
        await appliedUntil(store, clock + 100_000);
        const ids = (await store.changeRequests.listUndoSoon(clock + 100_000, clock + 400_000)).map(
          (r) => r.id,
        );
        expect(ids).toEqual([soon.id, late.id]);
        expect(
          await store.changeRequests.listUndoSoon(clock, clock + 400_000, 10, { teamIds: ["T9"] }),
        ).toEqual([]);
      });

      it("a zone's changes in force, whatever their age: applied or being undone, not the others", async () => {
        const store = await open();
        const inForce = await appliedUntil(store, clock + 600_000);
        const other = await appliedUntil(store, clock + 600_000, {
          ...BOT_CATEGORY_REQUEST.params,
          shieldZoneId: 7,
        });
        await store.changeRequests.create(BOT_CATEGORY_REQUEST);
        clock += 90 * 24 * 60 * 60_000;
        const read = await store.timeline.inForceOnZone("T1", 4242, 10);
        expect(read.map((r) => r.id)).toEqual([inForce.id]);
        expect((await store.timeline.inForceOnZone("T1", 7, 10)).map((r) => r.id)).toEqual([other.id]);
      });

      it("a heads-up is claimed once per request, undo time and alert, across stores; released, it can be claimed again", async () => {
        const a = await open();
        const b = await open();
        const key = { requestId: "R1", undoAt: 5_000, episodeId: "E1" };
        const claims = await Promise.all(
          Array.from({ length: 8 }, (_, i) => [a, b][i % 2]!.undoHeadsUps.claim(key, "T1", clock)),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
        // Extended: a new undo time is a new heads-up.
        expect(await b.undoHeadsUps.claim({ ...key, undoAt: 9_000 }, "T1", clock)).toBe(true);
        expect(await a.undoHeadsUps.claim({ ...key, episodeId: "E2" }, "T1", clock)).toBe(true);
        await a.undoHeadsUps.release(key);
        expect(await b.undoHeadsUps.claim(key, "T1", clock)).toBe(true);
        expect(await a.undoHeadsUps.pruneBefore(6_000)).toBe(2);
        expect(await a.undoHeadsUps.claim({ ...key, undoAt: 9_000 }, "T1", clock)).toBe(false);
      });
    });

    describe("health", () => {
      it("ping resolves while open and rejects with 'unavailable' once closed", async () => {
        const store = await open();
        await store.ping();
        await store.close();
        await expect(store.ping()).rejects.toMatchObject({ kind: "unavailable" });
        const err = (await store.keys.get("T1").catch((e: unknown) => e)) as StoreError;
        expect(err).toBeInstanceOf(StoreError);
        expect(err.kind).toBe("unavailable");
        expect(err.userMessage).toMatch(/storage is unavailable/i);
      });
    });
  });
}
