import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { Clock } from "../../../src/clock.js";
import { loadConfig } from "../../../src/config.js";
import { RETRY_FAST } from "../../../src/edge/queue.js";
import { silentLogger } from "../../../src/log.js";
import { type ConsoleHandle, runConsole } from "../../../tools/console/index.js";
import { eventWaiter } from "../../support/event-waiter.js";

export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");

export interface ConsoleDriver {
  handle: ConsoleHandle;
  dataDir: string;
  /** Everything printed so far. */
  readonly output: string;
  /** Type a line; resolves with what was printed from then until the console waits for input again. */
  send(line: string): Promise<string>;
  /** Type several lines, one after the other; resolves with all that was printed. */
  script(...lines: string[]): Promise<string>;
  /**
   * Resolves once `check()` holds: checked now, and again each time the console prints or asks for its
   * next line (events, not a clock). Fails after `guardMs` with what was printed.
   */
  until(check: () => boolean, what: string, guardMs?: number): Promise<void>;
  /** Type a line without waiting for the answer. */
  type(line: string): void;
  /** End the input (Ctrl+D) and stop everything. */
  close(): Promise<void>;
}

export async function startConsole(
  options: {
    env?: Record<string, string>;
    dataDir?: string;
    keepDataDir?: boolean;
    pgSchema?: string;
    /** The bot's one clock (e.g. a manual clock, so background work runs when the test moves it). */
    clock?: Clock;
  } = {},
): Promise<ConsoleDriver> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "edgeops-console-"));
  const config = loadConfig({
    DATA_DIR: dataDir,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    EDGE_API_TIMEOUT_MS: "2000",
    ...options.env,
  });
  const input = new PassThrough();
  const output = new PassThrough();
  let text = "";
  const printed = eventWaiter();
  const wake = () => printed.notify();
  output.on("data", (c: Buffer) => {
    text += c.toString("utf8");
    wake();
  });
  const handle = await runConsole({
    config,
    input,
    output,
    tty: false,
    logger: silentLogger,
    simulator: { scanDurationMs: 150 },
    edgeRetry: RETRY_FAST,
    quietMs: 40,
    ...(options.pgSchema ? { pgSchema: options.pgSchema } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  // The session asks for its next line when it is back at its prompt: that call is an event to wake on.
  const next = handle.input.next.bind(handle.input);
  handle.input.next = (prompt, nextOptions) => {
    const item = next(prompt, nextOptions);
    wake();
    return item;
  };

  const until = (check: () => boolean, what: string, guardMs = 15_000): Promise<void> =>
    printed
      .until(
        () => check() || undefined,
        () => `the console to show ${what}; output so far:\n${text}`,
        guardMs,
      )
      .then(() => undefined);

  /** Back at the prompt, having read at least `consumedAtLeast` lines. */
  const waitIdle = (consumedAtLeast: number) =>
    until(() => handle.input.consumed >= consumedAtLeast && handle.input.waiting, "its prompt again");

  const driver: ConsoleDriver = {
    handle,
    dataDir,
    get output() {
      return text;
    },
    until,
    async send(line) {
      const from = text.length;
      const target = handle.input.consumed + 1;
      input.write(`${line}\n`);
      await waitIdle(target);
      return text.slice(from);
    },
    type(line) {
      input.write(`${line}\n`);
    },
    async script(...lines) {
      let all = "";
      for (const l of lines) all += await driver.send(l);
      return all;
    },
    async close() {
      input.end();
      await handle.done;
      await handle.stop();
      if (!options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await waitIdle(0);
  return driver;
}

/** The number shown before a button label in console output, e.g. `[3] Approve` → 3 (the last one shown, or the first). */
export function buttonNumber(output: string, label: string, which: "first" | "last" = "last"): number {
  const escaped = label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const all = [...output.matchAll(new RegExp(`\\[(\\d+)\\] ${escaped}\\b`, "g"))];
  const last = which === "first" ? all[0] : all.at(-1);
  if (!last?.[1]) throw new Error(`no [n] ${label} button in:\n${output}`);
  return Number(last[1]);
}

/**
 * Resolves once the console's bot is quiet: no Edge call waiting or in flight, no simulator request open,
 * no Slack stand-in request or event being processed, over five probes in a row (each a turn of the event
 * loop and a store round trip). For background work moved by a manual clock: it waits for work to end. An
 * Edge call waiting for its key's next rate window waits on that clock too, so it never settles unmoved.
 */
export async function consoleQuiet(c: ConsoleDriver): Promise<void> {
  const { deps, sim, standIn } = c.handle;
  let quiet = 0;
  let seen = "";
  for (let probe = 0; probe < 5_000; probe++) {
    await new Promise((resolve) => setImmediate(resolve));
    await deps.store.ping();
    const queue = deps.edge.queueStats();
    const busy = queue.waiting + queue.inFlight + (sim?.inFlight() ?? 0) + standIn.busy;
    const now = `${sim?.requests.length ?? 0}/${c.output.length}`;
    quiet = busy === 0 && now === seen ? quiet + 1 : 0;
    seen = now;
    if (quiet >= 5) return;
  }
  throw new Error(`the console did not settle; output so far:\n${c.output}`);
}
