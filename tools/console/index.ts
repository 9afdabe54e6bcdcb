/**
 * The local console: the whole bot in a terminal, with no Slack workspace and no API key. The same
 * Bolt app and listeners as behind Slack, fed by a receiver of its own; an in-process stand-in for
 * the Slack Web API and response_url renders what the app sends.
 */
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import pino from "pino";
import { buildBot, type RunningBot, type StartOptions } from "../../src/app/bot.js";
import { startJobs } from "../../src/app/compose.js";
import { type Clock, systemClock } from "../../src/clock.js";
import { type Config, ConfigError } from "../../src/config.js";
import type { RetryPolicy } from "../../src/edge/queue.js";
import { createLogger, type Logger } from "../../src/log.js";
import { MCP_PATH, mcpRoute } from "../../src/mcp/server.js";
import { CONNECT_HINT } from "../../src/slack/transport/transport.js";
import type { Simulator, SimulatorOptions } from "../simulator/index.js";
import { createConsoleClock } from "./console-clock.js";
import { startConsoleEdge } from "./edge.js";
import { LineInput } from "./input.js";
import { ConsoleReceiver } from "./receiver.js";
import { COLOUR, PLAIN } from "./render.js";
import { ConsoleSaver, loadConsoleState } from "./saved-state.js";
import { Screen } from "./screen.js";
import { META_HELP, Session } from "./session.js";
import { type StandIn, startStandIn } from "./standin.js";
import { CONSOLE_BOT_TOKEN, CONSOLE_TEAM, type ConsoleUser, World } from "./world.js";

export { CONSOLE_BOT_TOKEN, CONSOLE_TEAM } from "./world.js";

export interface ConsoleOptions {
  config: Config;
  /** Default: JSON lines to DATA_DIR/console.log, so the terminal shows only the conversation. */
  logger?: Logger;
  /** The bot's one clock; default the real one. */
  clock?: Clock;
  input?: Readable;
  output?: Writable;
  /** Terminal mode (prompt, colour, no echo). Default: both streams are TTYs. */
  tty?: boolean;
  /** Options for the built-in Edge API simulator (tests shorten scans). */
  simulator?: SimulatorOptions;
  /** Edge API retry policy (tests use a fast one). */
  edgeRetry?: RetryPolicy;
  users?: readonly ConsoleUser[];
  /** PostgreSQL schema with CONSOLE_ALLOW_DATABASE_URL=1 (tests use their own); default "public". */
  pgSchema?: string;
  quietMs?: number;
  maxWaitMs?: number;
}

export interface ConsoleHandle extends RunningBot {
  readonly sim: Simulator | undefined;
  readonly standIn: StandIn;
  readonly screen: Screen;
  readonly session: Session;
  readonly world: World;
  readonly input: LineInput;
  /** Resolves when the person types /quit or the input ends. */
  readonly done: Promise<void>;
}

/** A copy of the frozen configuration with some sections changed, frozen again. */
function withOverrides(
  config: Config,
  patch: { edge?: Partial<Config["edge"]>; slack?: Partial<Config["slack"]> },
): Config {
  const edge = Object.freeze({ ...config.edge, ...patch.edge });
  const slack = Object.freeze({ ...config.slack, ...patch.slack });
  return Object.freeze({ ...config, edge, slack });
}

function fileLogger(config: Config): Logger {
  return createLogger({
    level: config.logLevel,
    destination: pino.destination({
      dest: join(config.store.dataDir, "console.log"),
      mkdir: true,
      sync: false,
    }),
  });
}

const CONSOLE_DATABASE_URL_REFUSED =
  "DATABASE_URL is set, and the local console does not share a database that real workspaces may use: unset DATABASE_URL to keep the console's data in SQLite in DATA_DIR, or set CONSOLE_ALLOW_DATABASE_URL=1 if that database is the console's alone.";

/** Start the console on the given streams; the returned handle's `done` resolves when the person leaves. */
export async function runConsole(o: ConsoleOptions): Promise<ConsoleHandle> {
  if (o.config.store.databaseUrl && !o.config.console.allowDatabaseUrl)
    throw new ConfigError([CONSOLE_DATABASE_URL_REFUSED]);
  const input = o.input ?? process.stdin;
  const output = o.output ?? process.stdout;
  const tty = o.tty ?? Boolean((input as { isTTY?: boolean }).isTTY && (output as { isTTY?: boolean }).isTTY);
  const paint = tty ? COLOUR : PLAIN;
  // With the simulator and no clock of the caller's, the console's own clock, which `/sim clock` moves
  // (the real Edge API's time cannot be moved: then the real clock).
  const simulated = o.config.edge.defaultApiKey === undefined;
  // What an earlier console left in DATA_DIR: the simulator's state, the channels, how far /sim clock moved time.
  const saved = loadConsoleState(o.config.store.dataDir, { simulated, seed: o.simulator?.seed ?? 1 });
  let saver: ConsoleSaver | undefined;
  const ownClock =
    o.clock === undefined && simulated
      ? createConsoleClock({ aheadMs: saved.clockAheadMs, onMove: () => saver?.saveSoon() })
      : undefined;
  const clock = o.clock ?? ownClock ?? systemClock;
  const logger = o.logger ?? fileLogger(o.config);

  const lines = new LineInput(input, output, tty);
  const world = new World(o.users, saved.channels);
  const screen = new Screen(world, { print: (l) => lines.print(l.join("\n")) }, paint);
  screen.onModal = () => lines.wake();
  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  // Pushed first, so it runs last: whatever waits on the console's timers while closing still sees time pass.
  cleanups.push(async () => ownClock?.stop());
  cleanups.push(async () => lines.close());

  try {
    const standIn = await startStandIn(screen, logger.child({ component: "console-slack" }), {
      filesDir: join(o.config.store.dataDir, "files"),
    });
    cleanups.push(() => standIn.close());
    const consoleEdge = await startConsoleEdge({
      config: o.config,
      logger,
      clock,
      simulator: {
        ...o.simulator,
        ...(saved.simulator ? { state: saved.simulator } : {}),
        onStateChange: () => saver?.saveSoon(),
      },
      ...(o.edgeRetry ? { retry: o.edgeRetry } : {}),
    });
    cleanups.push(() => consoleEdge.close(o.config.shutdownTimeoutMs));
    const sim = consoleEdge.sim;
    // Busy while the simulator holds a call or the bot's Edge client has one out (started by a timer just fired).
    if (sim) ownClock?.settleOn(() => sim.inFlight() > 0 || consoleEdge.edge.queueStats().inFlight > 0);
    const persistence = new ConsoleSaver({
      dataDir: o.config.store.dataDir,
      clock,
      channels: () => world.channels,
      simulator: sim ? () => sim.state : undefined,
      clockAheadMs: ownClock && sim ? () => ownClock.ahead() : undefined,
      warn: (line) => lines.print(line),
    });
    saver = persistence;
    world.onChannelsChange = () => persistence.saveSoon();
    // Runs after the bot, its jobs and the simulator have stopped (cleanups run last first): their last writes too.
    cleanups.splice(2, 0, async () => persistence.saveNow());
    const config = withOverrides(o.config, {
      edge: { baseUrl: consoleEdge.defaultBaseUrl, defaultApiKey: consoleEdge.defaultApiKey },
      slack: {
        apiUrl: standIn.apiUrl,
        // The console's bot token lives in its transport: its configuration holds no Slack credential,
        // so its store may use DATA_DIR/master.key (src/store/vault.ts).
        botToken: undefined,
        appToken: undefined,
        signingSecret: undefined,
        clientId: undefined,
        clientSecret: undefined,
        stateSecret: undefined,
      },
    });
    const receiver = new ConsoleReceiver(logger.child({ component: "console-receiver" }));
    const bot = await buildBot({
      config,
      logger,
      clock,
      edge: consoleEdge.edge,
      processMetrics: false,
      ...(o.pgSchema ? { pgSchema: o.pgSchema } : {}),
      transport: { kind: "console", receiver, botToken: CONSOLE_BOT_TOKEN },
      port: 0,
    });
    const { deps, slack } = bot;
    const { store } = deps;
    cleanups.push(() => bot.close());
    await slack.start();
    // Bolt checks its token with auth.test as it is built, and nobody awaits that call: let it finish
    // before anything can close the stand-in under it.
    await standIn.waitForCall("auth.test", 3_000);
    // Background work runs here as in every transport: scheduled DNS summaries post into the console's
    // channels, and approval requests expire. Only the console's own workspace's: a shared database
    // must never have a real workspace's schedule or approval claimed by a terminal.
    const jobs = startJobs({ env: slack.env, scope: { teamIds: [CONSOLE_TEAM.id] } });
    cleanups.push(() => jobs.stop(o.config.shutdownTimeoutMs));

    // AI agents (MCP_ENABLED=1): the console's bot answers MCP at http://127.0.0.1:PORT/mcp, its cards drawn here.
    const mcpPort = o.config.mcp.enabled
      ? await serveMcp(
          mcpRoute(() => slack.env),
          o.config.port,
          cleanups,
        )
      : undefined;

    const storedKey = await store.keys.info(CONSOLE_TEAM.id).catch(() => undefined);
    const first = world.users[0];
    const banner = [
      paint.bold("edgeops local console: the whole bot in this terminal. No Slack workspace is connected."),
      `To connect to Slack instead, stop here and: ${CONNECT_HINT}`,
      ...(o.config.slack.botToken || o.config.slack.appToken || o.config.slack.signingSecret
        ? ["(Slack credentials are set; the console does not use them.)"]
        : []),
      consoleEdge.sim
        ? `Edge API: simulated by the built-in simulator (${consoleEdge.sim.url}, seeded demo data). For the real service set EDGE_API_KEY (and EDGE_API_URL), or store a key with /edge key: it is used with ${consoleEdge.realBaseUrl}.`
        : `Edge API: ${consoleEdge.realBaseUrl} with the key from EDGE_API_KEY.`,
      ...(storedKey
        ? [
            `This workspace has a stored Edge API key ending ${storedKey.fingerprint}: /edge commands use it with ${consoleEdge.realBaseUrl}.`,
          ]
        : []),
      config.store.databaseUrl
        ? "Storage: PostgreSQL (DATABASE_URL, allowed by CONSOLE_ALLOW_DATABASE_URL=1); only this console's workspace's schedules and approvals are run here."
        : `Storage: SQLite in ${config.store.dataDir}${o.logger ? "" : ` (logs in ${join(config.store.dataDir, "console.log")})`}.`,
      ...(saved.restored ? [`Carried on from ${config.store.dataDir}: ${saved.restored}.`] : []),
      ...saved.notes,
      ...(mcpPort !== undefined
        ? [
            `AI agents (MCP): http://127.0.0.1:${mcpPort}${MCP_PATH} with Authorization: Bearer <token from /edge agent token> (docs/agents.md).`,
          ]
        : []),
      `You are ${first ? world.describeUser(first) : "nobody"} in #${world.channels[0]?.name ?? "general"}. Others: ${world.users
        .slice(1)
        .map((u) => world.describeUser(u))
        .join(", ")}.`,
      "Commands:",
      ...META_HELP,
      "",
    ];
    lines.print(banner.join("\n"));

    const session = new Session({
      world,
      screen,
      receiver,
      standIn,
      input: lines,
      logger,
      sim: consoleEdge.sim,
      clock: consoleEdge.sim ? ownClock : undefined,
      paint,
      ...(o.quietMs !== undefined ? { quietMs: o.quietMs } : {}),
      ...(o.maxWaitMs !== undefined ? { maxWaitMs: o.maxWaitMs } : {}),
    });
    const done = session.run().then(
      () => session.settle(),
      (err: unknown) => {
        logger.error({ err }, "the console session failed");
        lines.print(`The console stopped: ${err instanceof Error ? err.message : String(err)}`);
      },
    );

    let stopping: Promise<void> | undefined;
    return {
      deps,
      mode: "console",
      port: 0,
      sim: consoleEdge.sim,
      standIn,
      screen,
      session,
      world,
      input: lines,
      done,
      stop: () => {
        stopping ??= cleanup().then(() => logger.flush?.());
        return stopping;
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** The MCP route on its own loopback server (the console has no HTTP server of its own): the port it took. */
async function serveMcp(
  route: ReturnType<typeof mcpRoute>,
  port: number,
  cleanups: (() => Promise<unknown>)[],
): Promise<number> {
  const server: Server = createServer((req, res) => {
    if (req.url?.split("?")[0] !== route.path) {
      res.writeHead(404).end();
      return;
    }
    void route.handler(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve(undefined))));
  const address = server.address();
  return typeof address === "object" && address ? address.port : port;
}

/** `npm start` without Slack credentials: the console on this terminal; leaving it ends the process. */
export async function startConsoleBot(options: StartOptions): Promise<RunningBot> {
  const handle = await runConsole({
    config: options.config,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  void handle.done
    .then(() => handle.stop())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
  return handle;
}
