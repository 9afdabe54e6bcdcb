import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../../../src/config.js";
import { RETRY_FAST } from "../../../src/edge/queue.js";
import { silentLogger } from "../../../src/log.js";
import { type ConsoleHandle, runConsole } from "../../../tools/console/index.js";

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
  /** Type a line without waiting for the answer. */
  type(line: string): void;
  /** End the input (Ctrl+D) and stop everything. */
  close(): Promise<void>;
}

export async function startConsole(
  options: { env?: Record<string, string>; dataDir?: string; keepDataDir?: boolean; pgSchema?: string } = {},
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
  output.on("data", (c: Buffer) => {
    text += c.toString("utf8");
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
  });

  async function waitIdle(consumedAtLeast: number): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (handle.input.consumed >= consumedAtLeast && handle.input.waiting) return;
      await sleep(5);
    }
    throw new Error(`the console did not come back to its prompt; output so far:\n${text}`);
  }

  const driver: ConsoleDriver = {
    handle,
    dataDir,
    get output() {
      return text;
    },
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
