import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ACTIONS } from "../../src/slack/ids.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { FROZEN_LOOP_MS, watchEventLoop } from "../support/event-loop.js";
import { blocksText, findButtons, type Harness, startHarness } from "../support/harness.js";
import { dropSchema, IN_CI, pgReachable, randomSchema, TEST_DATABASE_URL } from "../support/helpers.js";
import { tcpProxy } from "../support/tcp-proxy.js";
import { BOB, CAROL } from "../support/users.js";

/**
 * An approval decided while the database is held up: by another process's SQLite write lock, or by a
 * PostgreSQL connection that stopped answering. Either way the click is answered in bounded time and
 * nothing else in the bot freezes.
 */

const ZONE = SIM_IDS.firstShieldZone;

const puts = (h: Harness) =>
  h.sim.requests.filter((r) => r.method === "PUT" && r.path.includes("/bot-categorization/categories/"));

/**
 * Bob asks to block the AI scraper category; returns the Approve button of the card in the channel, once the
 * card's impact preview has been filled in (a chat.update of its own that would otherwise land mid-test).
 */
async function requestChange(h: Harness) {
  const group = h.sim.state.botCategories.get(ZONE)!.find((g) => g.category === 2)!;
  group.categoryAction = 0;
  const bots = await h.command(`bots ${ZONE}`, { userId: BOB });
  const block = findButtons((await h.slack.waitForResponse(bots.responseId)).body.blocks).find(
    (b) => b.text === "Block" && JSON.parse(b.value!).c === 2,
  )!;
  const click = await h.click(block, { userId: BOB });
  await h.slack.waitForResponse(click.responseId);
  const card = await h.slack.waitForCall("chat.postMessage", (c) =>
    blocksText(c.args.blocks).includes("Approval needed"),
  );
  await h.settled();
  return findButtons(card.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
}

/**
 * Resolves `met` when a statement of the bot (any connection but `holder`) finds the database locked
 * (SQLITE_BUSY): the moment the bot is waiting for the lock `holder` keeps. `restore` unwraps the driver.
 */
function botFindsLocked(holder: BetterSqlite3.Database) {
  const proto = Object.getPrototypeOf(holder.prepare("select 1")) as Record<string, unknown>;
  const originals = new Map<string, unknown>();
  let found = () => {};
  const met = new Promise<void>((resolve) => (found = resolve));
  for (const name of ["run", "get", "all", "iterate"]) {
    const original = proto[name] as (this: BetterSqlite3.Statement, ...args: unknown[]) => unknown;
    originals.set(name, original);
    proto[name] = function (this: BetterSqlite3.Statement, ...args: unknown[]) {
      try {
        return original.apply(this, args);
      } catch (e) {
        if (this.database !== holder && (e as { code?: string }).code === "SQLITE_BUSY") found();
        throw e;
      }
    };
  }
  return {
    met,
    restore: () => {
      for (const [name, original] of originals) proto[name] = original;
    },
  };
}

const pgUp = await pgReachable();
const harnesses: Harness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

describe("an approval while the database is held up", () => {
  it("SQLite: another process holds the write lock; the approval waits for it with the event loop free, then applies once", async () => {
    const h = await startHarness();
    harnesses.push(h);
    const approve = await requestChange(h);
    h.sim.clearRequests();

    const other = new BetterSqlite3(join(h.dataDir, "edgeops.sqlite"));
    other.exec("begin immediate");
    const locked = botFindsLocked(other);
    const loop = watchEventLoop();
    try {
      const click = await h.click(approve, { userId: CAROL });
      expect(click.status).toBe(200);
      // The approval's statement met the lock and waits for it (asynchronously, retrying).
      await locked.met;
      // While the approval waits for the lock, another user's command is still answered.
      const help = await h.command("help", { userId: "U0001" });
      await h.slack.waitForResponse(help.responseId);
      const decided = h.slack
        .callsTo("chat.update")
        .filter((c) => blocksText(c.args.blocks).includes("Approved by"));
      expect(decided).toHaveLength(0);
      expect(puts(h)).toHaveLength(0);
    } finally {
      other.exec("commit");
      other.close();
      locked.restore();
    }
    const update = await h.slack.waitForCall("chat.update", (c) =>
      blocksText(c.args.blocks).includes("Approved by"),
    );
    const stall = loop.stop();
    expect(blocksText(update.args.blocks)).toContain("is in effect");
    await h.settled();
    expect(puts(h)).toHaveLength(1);
    expect(stall).toBeLessThan(FROZEN_LOOP_MS);
  });

  it.runIf(pgUp || IN_CI)(
    "PostgreSQL: its connections stop answering; the approver is told storage is unavailable within seconds, nothing is applied, and approving again works",
    async () => {
      const schema = randomSchema();
      const proxy = tcpProxy(new URL(TEST_DATABASE_URL));
      const url = new URL(TEST_DATABASE_URL);
      url.host = `127.0.0.1:${await proxy.start()}`;
      try {
        const h = await startHarness({
          pgSchema: schema,
          env: { DATABASE_URL: url.toString(), DATABASE_STATEMENT_TIMEOUT_MS: "300" },
        });
        harnesses.push(h);
        const approve = await requestChange(h);
        h.sim.clearRequests();
        h.slack.clear();

        proxy.stall();
        const started = performance.now();
        const click = await h.click(approve, { userId: CAROL });
        expect(click.status).toBe(200);
        const answer = await h.slack.waitForResponse(click.responseId);
        expect(performance.now() - started).toBeLessThan(5_000);
        expect(blocksText(answer.body.blocks) || String(answer.body.text)).toContain(
          "Storage is unavailable right now, so nothing was changed",
        );
        expect(puts(h)).toHaveLength(0);
        expect(h.slack.callsTo("chat.update")).toHaveLength(0);

        proxy.resume();
        await h.click(approve, { userId: CAROL });
        const update = await h.slack.waitForCall("chat.update", (c) =>
          blocksText(c.args.blocks).includes("Approved by"),
        );
        expect(blocksText(update.args.blocks)).toContain("is in effect");
        expect(puts(h)).toHaveLength(1);
      } finally {
        proxy.resume();
        await Promise.all(harnesses.splice(0).map((h) => h.close()));
        await proxy.cut();
        await dropSchema(schema).catch(() => undefined);
      }
    },
  );
});
