import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { AnyMiddlewareArgs, Middleware } from "@slack/bolt";
import { buildBot } from "../../src/app/bot.js";
import { type Clock, systemClock } from "../../src/clock.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { Deps } from "../../src/deps.js";
import { RETRY_FAST, type RetryPolicy } from "../../src/edge/queue.js";
import { createLogger } from "../../src/log.js";
import type { SlackApp } from "../../src/slack/app.js";
import type { Store, StoreStatement } from "../../src/store/index.js";
import { type Simulator, startSimulator } from "../../tools/simulator/index.js";
import { type FakeSlack, type SlackFault, startFakeSlack } from "./fake-slack.js";
import { TEST_DATABASE_URL } from "./helpers.js";
import { interactionBody, postSigned, type SignedPostResult, slashCommandBody } from "./slack-signer.js";

export const SIGNING_SECRET = "test-signing-secret-0123456789";
export const BOT_TOKEN = "xoxb-test-bot-token-0000";
/** The Edge API key the simulator accepts in these tests (the store refuses keys shorter than 8). */
export const TEST_EDGE_KEY = "sim-test-key-7f3a9c2e51d8";
const OAUTH = {
  clientId: "111.222",
  clientSecret: "oauth-client-secret-x",
  stateSecret: "oauth-state-secret-x",
} as const;
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString("base64");

/** What every test bot is configured with: the simulator, the fake Slack, its data folder and the test secrets. */
export function testBotEnv(sim: Simulator, slack: FakeSlack, dataDir: string): Record<string, string> {
  return {
    EDGE_API_URL: sim.url,
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    SLACK_API_URL: slack.apiUrl,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
  };
}

/** An Events API envelope of `event` in `teamId`, as Slack posts it: a fresh event id, sent now. */
export function eventCallback(teamId: string, event: Record<string, unknown>) {
  return {
    token: "legacy",
    team_id: teamId,
    api_app_id: "A0001",
    type: "event_callback",
    event_id: `Ev${Math.random().toString(36).slice(2, 12).toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
    event,
  };
}

/** Captured JSON log lines, for tests where logging is the behaviour (and for secret searches). */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join("\n");
  }
}

export interface Harness {
  sim: Simulator;
  slack: FakeSlack;
  store: Store;
  deps: Deps;
  app: SlackApp;
  logs: LogCapture;
  config: Config;
  eventsUrl: string;
  baseUrl: string;
  dataDir: string;
  /** Move the bot's clock (deps.clock.now) forward, e.g. past an approval's expiry. */
  advanceClock(ms: number): void;
  /** Send `/edge <text>` signed as Slack does; returns the receiver's HTTP answer and the response_url id. */
  command(
    text: string,
    who?: { userId?: string; teamId?: string; channelId?: string },
  ): Promise<SignedPostResult & { responseId: string }>;
  /**
   * A Workflow Builder step of this app runs: the function_executed event, signed as Slack sends it,
   * with a fresh execution id (or the one given, for a redelivery) and the execution's own token.
   */
  functionExecuted(
    callbackId: string,
    inputs: Record<string, unknown>,
    options?: { executionId?: string; teamId?: string; token?: string },
  ): Promise<SignedPostResult & { executionId: string; token: string }>;
  /** Send an interactivity payload (block_actions, view_submission ...) signed as Slack does. */
  interact(payload: unknown): Promise<SignedPostResult>;
  /** A block_actions payload for clicking a button found in a previous answer. */
  click(
    button: { action_id: string; value?: string; block_id?: string },
    who?: {
      userId?: string;
      teamId?: string;
      channelId?: string;
      responseId?: string;
      messageTs?: string;
      /** The clicked message's blocks, as Slack sends them (default none). */
      messageBlocks?: unknown[];
    },
  ): Promise<SignedPostResult & { responseId: string }>;
  /**
   * Resolves once the bot is quiet: no listener running, no Edge call waiting or in flight, no request open
   * at the simulator or the fake Slack, and nothing new recorded, over several probes in a row (each a turn
   * of the event loop and a store round trip). For "and nothing more happens" after an event was awaited:
   * it waits for work to end, never for time to pass. A request it never saw start is not waited for: after an
   * Events API event, whose listener starts after the acknowledgement, wait for that first (events-handled.ts).
   */
  settled(): Promise<void>;
  /** The bot's clock (the one given, moved by advanceClock). */
  clock: Clock;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Seed the workspace T0001 with the simulator's key (default true). */
  seedKey?: boolean;
  /** Reuse this data folder (and keep it on close): a restart of the bot over the same SQLite file. */
  dataDir?: string;
  /** Use PostgreSQL (TEST_DATABASE_URL) in this schema instead of SQLite. */
  pgSchema?: string;
  /** Reuse a running simulator (a restart keeps the Edge API's state). */
  sim?: Simulator;
  /** The simulator the harness starts runs on `clock` too (its time, its latency): one clock for both sides. */
  simulatorOnClock?: boolean;
  admins?: string[];
  /** Multi-workspace OAuth install (SLACK_CLIENT_ID ...) instead of a single bot token. */
  oauth?: boolean;
  /**
   * With oauth: store an installation (bot token `xoxb-installed-<team>`) for each of these workspaces.
   * A single-token install serves only its token's workspace (T0001), so tests of several use OAuth.
   */
  installs?: string[];
  /** The bot's one clock (default the real one), e.g. for schedules' next runs; advanceClock adds to its now. */
  clock?: Clock;
  /** Global Bolt middleware (createSlackApp's own option), run after authorize and before the listeners. */
  middleware?: Middleware<AnyMiddlewareArgs>[];
  /** Faults of the fake Slack in place before the bot starts (e.g. a slow auth.test). */
  slackFaults?: SlackFault[];
  /** Reuse a running fake Slack (another replica's: both draw the same messages); left open on close. */
  slack?: FakeSlack;
  /**
   * The Edge client's timeout per attempt (default 2 s). Tests that count requests at the simulator set it long:
   * on a loaded machine a slow answer past it is sent again (a retry), and counted twice.
   */
  edgeTimeoutMs?: number;
  /** The Edge client's retry policy (default RETRY_FAST). */
  edgeRetry?: RetryPolicy;
  /** Told of every statement the bot's store runs (the store's onStatement): what a flow costs in SQL. */
  onStoreStatement?: (statement: StoreStatement) => void;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const sim =
    options.sim ??
    (await startSimulator({
      scanDurationMs: 50,
      apiKeys: [TEST_EDGE_KEY],
      ...(options.simulatorOnClock && options.clock ? { clock: options.clock } : {}),
    }));
  const slack = options.slack ?? (await startFakeSlack());
  for (const f of options.slackFaults ?? []) slack.addFault(f);
  slack.users.set("U0001", { id: "U0001", name: "alice", is_admin: true });
  slack.users.set("U0002", { id: "U0002", name: "bob" });
  slack.users.set("U0003", { id: "U0003", name: "carol", is_owner: true });
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "edgeops-test-"));
  const config = loadConfig({
    ...testBotEnv(sim, slack, dataDir),
    // As a deployment is configured: OAuth's three variables instead of a bot token.
    ...(options.oauth
      ? {
          SLACK_CLIENT_ID: OAUTH.clientId,
          SLACK_CLIENT_SECRET: OAUTH.clientSecret,
          SLACK_STATE_SECRET: OAUTH.stateSecret,
        }
      : { SLACK_BOT_TOKEN: BOT_TOKEN }),
    PORT: "0",
    LOG_LEVEL: "debug",
    // The per-key pacing is specified by the queue's own tests (test/edge/queue.flow.test.ts); here it would
    // only make a flow of many Edge calls wait out real seconds. A test about pacing sets its own rate.
    EDGE_API_RATE_PER_SEC: "1000",
    ...(options.pgSchema ? { DATABASE_URL: TEST_DATABASE_URL } : {}),
    ...(options.admins ? { ADMIN_USER_IDS: options.admins.join(",") } : {}),
    ...options.env,
  });
  const logs = new LogCapture();
  const logger = createLogger({ level: "debug", destination: logs });
  let clockOffset = 0;
  let listenerWork = 0;
  const countListenerWork: Middleware<AnyMiddlewareArgs> = async ({ next }) => {
    listenerWork++;
    try {
      await next();
    } finally {
      listenerWork--;
    }
  };
  // One clock for the bot, its store and its Edge client, as in production (src/app/compose.ts), its
  // time of day moved by advanceClock.
  const base = options.clock ?? systemClock;
  const clock: Clock = { ...base, now: () => base.now() + clockOffset };
  const bot = await buildBot({
    config,
    logger,
    clock,
    processMetrics: false,
    ...(options.pgSchema ? { pgSchema: options.pgSchema } : {}),
    ...(options.onStoreStatement ? { onStoreStatement: options.onStoreStatement } : {}),
    edgeOptions: { timeoutMs: options.edgeTimeoutMs ?? 2000, retry: options.edgeRetry ?? RETRY_FAST },
    transport: {
      kind: "http",
      signingSecret: SIGNING_SECRET,
      auth: options.oauth ? { kind: "oauth", ...OAUTH } : { kind: "single", botToken: BOT_TOKEN },
    },
    port: 0,
    middleware: [countListenerWork, ...(options.middleware ?? [])],
  });
  const { deps, slack: app } = bot;
  const { store } = deps;
  if (options.seedKey !== false) await store.keys.set("T0001", TEST_EDGE_KEY, "U0001");
  for (const teamId of options.installs ?? []) await installWorkspace(store, teamId);
  const { port } = await app.start();
  const baseUrl = `http://127.0.0.1:${port}`;
  const eventsUrl = `${baseUrl}/slack/events`;

  const harness: Harness = {
    sim,
    slack,
    store,
    deps,
    app,
    logs,
    config,
    eventsUrl,
    baseUrl,
    dataDir,
    clock,
    advanceClock: (ms) => {
      clockOffset += ms;
    },
    async settled() {
      let quietProbes = 0;
      let seen = "";
      for (let probe = 0; probe < 5_000; probe++) {
        await new Promise((resolve) => setImmediate(resolve));
        await store.ping();
        const queue = deps.edge.queueStats();
        const busy = listenerWork + queue.waiting + queue.inFlight + sim.inFlight() + slack.inFlight();
        const now = `${slack.calls.length}/${slack.responses.length}/${sim.requests.length}`;
        quietProbes = busy === 0 && now === seen ? quietProbes + 1 : 0;
        seen = now;
        if (quietProbes >= 5) return;
      }
      throw new Error("the bot did not settle: work kept arriving or never ended");
    },
    async command(text, who = {}) {
      const responseId = `cmd-${Math.random().toString(36).slice(2)}`;
      const body = slashCommandBody({
        text,
        responseUrl: slack.responseUrl(responseId),
        ...(who.userId ? { userId: who.userId } : {}),
        ...(who.teamId ? { teamId: who.teamId } : {}),
        ...(who.channelId ? { channelId: who.channelId } : {}),
      });
      const res = await postSigned(eventsUrl, body, SIGNING_SECRET);
      return { ...res, responseId };
    },
    interact: (payload) => postSigned(eventsUrl, interactionBody(payload), SIGNING_SECRET),
    async functionExecuted(callbackId, inputs, options = {}) {
      const executionId = options.executionId ?? `Fx${Math.random().toString(36).slice(2, 12).toUpperCase()}`;
      const token = options.token ?? `xwfp-test-${executionId}-secret`;
      const teamId = options.teamId ?? "T0001";
      const body = JSON.stringify({
        ...eventCallback(teamId, {
          type: "function_executed",
          function: {
            id: `Fn${callbackId.toUpperCase()}`,
            callback_id: callbackId,
            title: callbackId,
            type: "app",
            input_parameters: [],
            output_parameters: [],
            app_id: "A0001",
            date_created: 1_700_000_000,
            date_updated: 1_700_000_000,
            date_deleted: 0,
          },
          inputs,
          function_execution_id: executionId,
          workflow_execution_id: `Wf${executionId.slice(2)}`,
          event_ts: String(Date.now() / 1000),
          bot_access_token: token,
        }),
        authorizations: [{ team_id: teamId, user_id: "UBOT", is_bot: true, is_enterprise_install: false }],
      });
      const res = await postSigned(eventsUrl, body, SIGNING_SECRET, { contentType: "application/json" });
      return { ...res, executionId, token };
    },
    async click(button, who = {}) {
      const responseId = who.responseId ?? `act-${Math.random().toString(36).slice(2)}`;
      const userId = who.userId ?? "U0001";
      const teamId = who.teamId ?? "T0001";
      const channelId = who.channelId ?? "C0001";
      const payload = {
        type: "block_actions",
        user: { id: userId, username: userId.toLowerCase(), name: userId.toLowerCase(), team_id: teamId },
        api_app_id: "A0001",
        token: "legacy",
        container: {
          type: "message",
          message_ts: who.messageTs ?? "1700000000.000100",
          channel_id: channelId,
          is_ephemeral: true,
        },
        trigger_id: `trigger-${Math.random().toString(36).slice(2)}`,
        team: { id: teamId, domain: "acme" },
        enterprise: null,
        is_enterprise_install: false,
        channel: { id: channelId, name: "incident-42" },
        message: {
          ts: who.messageTs ?? "1700000000.000100",
          type: "message",
          text: "",
          blocks: who.messageBlocks ?? [],
        },
        response_url: slack.responseUrl(responseId),
        actions: [
          {
            type: "button",
            action_id: button.action_id,
            block_id: button.block_id ?? "b1",
            value: button.value,
            text: { type: "plain_text", text: "button" },
            action_ts: String(Date.now() / 1000),
          },
        ],
      };
      const res = await postSigned(eventsUrl, interactionBody(payload), SIGNING_SECRET);
      return { ...res, responseId };
    },
    async close() {
      await bot.close();
      if (!options.sim) await sim.close();
      if (!options.slack) await slack.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** The installation OAuth would store for `teamId`: bot token `xoxb-installed-<team>`, bot user UBOT. */
export async function installWorkspace(store: Store, teamId: string): Promise<void> {
  await store.installations.storeInstallation({
    team: { id: teamId, name: teamId },
    enterprise: undefined,
    user: { id: "U0001", token: undefined, scopes: undefined },
    bot: {
      id: `B${teamId}`,
      userId: "UBOT",
      token: `xoxb-installed-${teamId.toLowerCase()}`,
      scopes: ["commands", "chat:write"],
    },
    tokenType: "bot",
    isEnterpriseInstall: false,
    appId: "A0001",
  });
}

/** Find every button in a message's blocks (actions elements and section accessories). */
export function findButtons(
  blocks: unknown,
): { action_id: string; value?: string; text: string; block_id?: string; confirm?: unknown }[] {
  const out: { action_id: string; value?: string; text: string; block_id?: string; confirm?: unknown }[] = [];
  for (const b of (blocks as Record<string, unknown>[] | undefined) ?? []) {
    const candidates = [
      ...(((b.elements as unknown[]) ?? []) as Record<string, unknown>[]),
      ...(b.accessory ? [b.accessory as Record<string, unknown>] : []),
    ];
    for (const el of candidates) {
      if (el.type !== "button") continue;
      out.push({
        action_id: String(el.action_id),
        text: String((el.text as { text?: string } | undefined)?.text ?? ""),
        ...(el.value !== undefined ? { value: String(el.value) } : {}),
        ...(b.block_id ? { block_id: String(b.block_id) } : {}),
        ...(el.confirm ? { confirm: el.confirm } : {}),
      });
    }
  }
  return out;
}

/** All the visible text of a message's blocks, for assertions on what a user reads. */
export function blocksText(blocks: unknown): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if ((o.type === "mrkdwn" || o.type === "plain_text") && typeof o.text === "string") parts.push(o.text);
      for (const [k, child] of Object.entries(o)) if (k !== "text" || typeof child !== "string") walk(child);
    }
  };
  walk(blocks);
  return parts.join("\n");
}

/** `/edge <text>` typed by `userId` in `channelId`: the answer posted to response_url, its text and buttons. */
export function answerTo(h: Harness, text: string, userId: string, channelId = "C0001") {
  return commandAnswer(h, text, { userId, channelId });
}

/** What a placeholder answer says of itself (the answer then replaces it at the same response_url). */
export const REPLACED_LATER = "this message is replaced when";

/** `/edge <text>` sent as `who`: its answer at the response_url (body, text, buttons), once acked with 200. */
export async function commandAnswer(
  h: Harness,
  text: string,
  who: { userId?: string; teamId?: string; channelId?: string } = {},
) {
  const res = await h.command(text, who);
  if (res.status !== 200) throw new Error(`the receiver answered ${res.status} to /edge ${text}`);
  const first = await h.slack.waitForResponse(res.responseId);
  // An answer sent first with what is known (e.g. /edge zones reading this minute's metrics) says it will be
  // replaced: the answer is what replaces it.
  const answer = blocksText(first.body.blocks).includes(REPLACED_LATER)
    ? await h.slack.waitForResponse(res.responseId, (r) => r !== first)
    : first;
  return {
    body: answer.body,
    text: blocksText(answer.body.blocks),
    buttons: findButtons(answer.body.blocks),
  };
}

/** The next chat.update of a card whose text satisfies `predicate`. */
export const cardUpdate = (h: Harness, predicate: (text: string) => boolean, timeoutMs?: number) =>
  h.slack.waitForCall("chat.update", (c) => predicate(blocksText(c.args.blocks)), timeoutMs);
