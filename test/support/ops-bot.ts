import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RunningBot, type StartOptions, startBot } from "../../src/app/bot.js";
import type { Clock } from "../../src/clock.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { type FakeSlack, startFakeSlack } from "./fake-slack.js";
import { BOT_TOKEN, LogCapture, SIGNING_SECRET, TEST_EDGE_KEY, testBotEnv } from "./harness.js";
import { postSigned, type SignedPostResult, slashCommandBody } from "./slack-signer.js";

/** The real composition root (startBot) in HTTP mode against the simulator and the fake Slack API. */
export interface OpsBot {
  bot: RunningBot;
  sim: Simulator;
  slack: FakeSlack;
  logs: LogCapture;
  baseUrl: string;
  command(text: string, userId?: string): Promise<SignedPostResult & { responseId: string }>;
  get(path: string): Promise<{ status: number; body: string; contentType: string | null }>;
  close(): Promise<void>;
}

export async function startOpsBot(
  env: Record<string, string> = {},
  options: {
    waitUntilReady?: boolean;
    beforeStart?: (slack: FakeSlack) => void;
    onFatal?: StartOptions["onFatal"];
    /** The bot's clock (its shutdown deadline, jobs, Edge timeouts); default the real one. */
    clock?: Clock;
  } = {},
): Promise<OpsBot> {
  const sim = await startSimulator({ scanDurationMs: 50, apiKeys: [TEST_EDGE_KEY] });
  const slack = await startFakeSlack();
  slack.users.set("U0001", { id: "U0001", name: "alice", is_admin: true });
  options.beforeStart?.(slack);
  const dataDir = mkdtempSync(join(tmpdir(), "edgeops-ops-"));
  const config = loadConfig({
    ...testBotEnv(sim, slack, dataDir),
    SLACK_BOT_TOKEN: BOT_TOKEN,
    PORT: "0",
    LOG_LEVEL: "debug",
    ...env,
  });
  const logs = new LogCapture();
  const logger = createLogger({ level: "debug", destination: logs });
  let bot: RunningBot;
  try {
    bot = await startBot({
      config,
      logger,
      ...(options.onFatal ? { onFatal: options.onFatal } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
  } catch (err) {
    await sim.close();
    await slack.close();
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  await bot.deps.store.keys.set("T0001", TEST_EDGE_KEY, "U0001");
  const baseUrl = `http://127.0.0.1:${bot.port}`;
  // startBot listens at once and checks the bot token in the background: the fake Slack answers it at once.
  if (options.waitUntilReady !== false) await readyOnceTokenChecked(slack, baseUrl);
  let stopped = false;
  return {
    bot,
    sim,
    slack,
    logs,
    baseUrl,
    async command(text, userId = "U0001") {
      const responseId = `cmd-${Math.random().toString(36).slice(2)}`;
      const body = slashCommandBody({ text, userId, responseUrl: slack.responseUrl(responseId) });
      const res = await postSigned(`${baseUrl}/slack/events`, body, SIGNING_SECRET);
      return { ...res, responseId };
    },
    async get(path) {
      const res = await fetch(`${baseUrl}${path}`);
      return { status: res.status, body: await res.text(), contentType: res.headers.get("content-type") };
    },
    async close() {
      if (!stopped) {
        stopped = true;
        await bot.stop().catch(() => undefined);
      }
      await sim.close();
      await slack.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * /readyz answers 200 once the token check is through: wait for the fake Slack to be asked (auth.test),
 * then ask /readyz until it says ready, a bounded number of times (each ask is a round trip, not a sleep).
 */
async function readyOnceTokenChecked(slack: FakeSlack, baseUrl: string): Promise<void> {
  await slack.waitForCall("auth.test");
  let last = "";
  for (let ask = 0; ask < 500; ask++) {
    const res = await fetch(`${baseUrl}/readyz`);
    last = await res.text();
    if (res.status === 200) return;
  }
  throw new Error(`not ready once the token was checked: ${last}`);
}
