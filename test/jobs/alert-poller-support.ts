import { afterEach, expect } from "vitest";
import { createPoller, type Poller } from "../../src/jobs/alerts.js";
import { type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { steppedClock } from "../support/clock.js";
import type { SlackCall } from "../support/fake-slack.js";
import { blocksText, findButtons, type Harness, startHarness, TEST_EDGE_KEY } from "../support/harness.js";
import { dropSchema, randomSchema } from "../support/helpers.js";

export const MIN = 60_000;
export const T0 = Date.UTC(2026, 7, 20, 10, 0, 30);

export interface RigOptions {
  env?: Record<string, string>;
  /** Reuse a running simulator (a restart keeps the Edge API's state). */
  sim?: Simulator;
  dataDir?: string;
  /** The store on PostgreSQL, in a fresh schema dropped after the test. */
  postgres?: boolean;
  /** The key's polling budget follows the controlled clock too, so minutes passing here refill it. */
  budgetOnClock?: boolean;
}

/**
 * One controlled clock (`now`) shared by the bot, its store, the Edge API simulator and the alert poller, on
 * which minutes pass in milliseconds; what `start` opens is closed after each test.
 */
export function usePollerRig() {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const rig = {
    now: T0,
    /** Run `c` after this test, before what was opened earlier is closed. */
    defer(c: () => Promise<void>) {
      cleanups.push(c);
    },
    /** A simulator (or the one given), the bot on it, and its alert poller, all on `now`. */
    async start(o: RigOptions = {}) {
      const sim =
        o.sim ??
        (await startSimulator({
          scanDurationMs: 50,
          apiKeys: [TEST_EDGE_KEY],
          clock: steppedClock(() => rig.now),
        }));
      if (!o.sim) cleanups.push(() => sim.close());
      let pgSchema: string | undefined;
      if (o.postgres) {
        const schema = randomSchema();
        pgSchema = schema;
        cleanups.push(() => dropSchema(schema));
      }
      const h = await startHarness({
        sim,
        clock: steppedClock(() => rig.now),
        ...(pgSchema ? { pgSchema } : {}),
        ...(o.env ? { env: o.env } : {}),
        ...(o.dataDir ? { dataDir: o.dataDir } : {}),
      });
      cleanups.push(() => h.close());
      const poller = createPoller({
        deps: h.deps,
        clientFor: h.app.env.clientFor,
        clock: steppedClock(() => rig.now),
        ...(o.budgetOnClock ? { budgetClock: () => rig.now } : {}),
      });
      cleanups.push(() => poller.stop());
      return { sim, h, poller };
    },
    /** Move `now` one minute at a time, evaluating due watches after each, until `until` holds. */
    async minutes(n: number, pollers: Poller | Poller[], until?: () => boolean): Promise<void> {
      for (let i = 0; i < n; i++) {
        rig.now += MIN;
        await Promise.all([pollers].flat().map((p) => p.tick()));
        if (until?.()) return;
      }
    },
  };
  return rig;
}

/** Alert parents posted in `channel` (not thread replies). */
export const parents = (h: Harness, channel = "C0001") =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel && !c.args.thread_ts);
export const replies = (h: Harness, ts: string) =>
  h.slack.callsTo("chat.postMessage").filter((c) => c.args.thread_ts === ts);
export const updatesOf = (h: Harness, ts: string) =>
  h.slack.callsTo("chat.update").filter((c) => c.args.ts === ts);
export const text = (c: SlackCall | undefined) => blocksText(c?.args.blocks);

/** `userId` clicks the button labelled `label` on the alert message `message` (posted at `ts` in C0001). */
export async function clickOn(
  h: Harness,
  message: SlackCall | undefined,
  label: string,
  userId: string,
  ts: string,
) {
  const button = findButtons(message?.args.blocks).find((b) => b.text === label);
  if (!button) throw new Error(`no ${label} on ${text(message)}`);
  const res = await h.click(button, { userId, channelId: "C0001", messageTs: ts });
  expect(res.status).toBe(200);
  return res;
}
