import { expect } from "vitest";
import { ACTIONS } from "../../src/slack/ids.js";
import type { StoreStatement } from "../../src/store/index.js";
import { SIM_IDS } from "../../tools/simulator/index.js";
import { describeOnBothStores } from "../support/both-stores.js";
import { answerTo, blocksText, cardUpdate, findButtons } from "../support/harness.js";
import { BOB, CAROL } from "../support/users.js";
import { startWorld } from "../support/world.js";

const ZONE = SIM_IDS.firstShieldZone;

/**
 * What one Approve click costs the bot, counted where it happens: the store's statements (its onStatement),
 * the Edge API calls at the simulator and the Slack calls at the fake Slack. The approvals benchmark's CPU
 * per approval follows these counts; a change that adds to them must raise the limits here, and say why.
 */
const LIMITS = {
  /** Statements on tables (begin and commit not counted), from the click to the settled card. */
  statements: 14,
  transactions: 1,
  /** Reads of the workspace's Edge API key (each one decrypts it). */
  keyReads: 1,
};

/**
 * On PostgreSQL every statement is a round trip, begin and commit too: the move to applied and its
 * target's owner row are one statement there (SQLite's transaction costs no round trip).
 */
const POSTGRES_LIMITS = { ...LIMITS, statements: 13, transactions: 0 };

describeOnBothStores(
  "one Approve click on a bot category change costs at most its limits in store statements and key reads, three Edge calls and two Slack calls",
  async (options) => {
    const statements: StoreStatement[] = [];
    let counting = false;
    const w = await startWorld({
      ...options,
      onStoreStatement: (s) => {
        if (counting) statements.push(s);
      },
    });
    try {
      // Bob asks to block category 1 (no action set now); its card waits for an approver.
      const group = w.sim.state.botCategories.get(ZONE)!.find((g) => g.category === 1)!;
      group.categoryAction = 0;
      const bots = await answerTo(w, `bots ${ZONE}`, BOB);
      const block = bots.buttons.find((b) => b.text === "Block" && JSON.parse(b.value!).c === 1)!;
      await w.click(block, { userId: BOB });
      const post = await w.slack.waitForCall("chat.postMessage", (c) =>
        blocksText(c.args.blocks).includes("Approval needed"),
      );
      const approve = findButtons(post.args.blocks).find((b) => b.action_id === ACTIONS.approve)!;
      expect(approve).toBeDefined();
      await w.settled();

      const edgeBefore = w.sim.requests.length;
      const slackBefore = w.slack.calls.length;
      counting = true;
      await w.click(approve, { userId: CAROL });
      await cardUpdate(w, (t) => t.includes("is in effect"));
      await w.settled();
      counting = false;

      // The harness's settled() pings the store (`select 1`, no table): not the approval's.
      const onTables = statements.filter((s) => s.table !== undefined);
      const named = onTables.map(
        (s) => `${s.operation} ${s.table}${s.inTransaction ? " (in transaction)" : ""}`,
      );
      const transactions = statements.filter((s) => s.operation === "begin").length;
      const keyReads = onTables.filter((s) => s.operation === "select" && s.table === "api_keys").length;
      const limits = options.pgSchema === undefined ? LIMITS : POSTGRES_LIMITS;
      expect(onTables.length, named.join("\n")).toBeLessThanOrEqual(limits.statements);
      expect(transactions).toBeLessThanOrEqual(limits.transactions);
      expect(keyReads, named.join("\n")).toBeLessThanOrEqual(limits.keyReads);

      const edge = w.sim.requests.slice(edgeBefore).map((r) => r.method);
      expect(edge).toEqual(["GET", "PUT", "GET"]);
      // The card once, and the requester's thread hears the outcome. Carol is an owner in the admin list the
      // card was drawn from a moment ago, so her click asks no users.info.
      const slack = w.slack.calls.slice(slackBefore).map((c) => c.method);
      expect(slack.sort()).toEqual(["chat.postMessage", "chat.update"]);
    } finally {
      await w.close();
    }
  },
);
