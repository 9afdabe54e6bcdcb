/**
 * The bot under test, in its own process, started exactly as `src/main.ts` starts it (loadConfig →
 * startBot, HTTP transport) from the environment the orchestrator gives it. Over IPC it answers
 * `memory` (after forcing GC when run with --expose-gc), `queues` (the Edge client's queue stats) and
 * `stop` (graceful stop, then exit so a --cpu-prof profile is written).
 */
import { readFile } from "node:fs/promises";
import { startBot } from "../src/app/bot.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { cpuNow, serveRpc } from "./common.js";

const config = loadConfig(process.env);
const logger = createLogger({ level: config.logLevel });
const bot = await startBot({ config, logger });

async function vmRssMiB(): Promise<number> {
  const status = await readFile("/proc/self/status", "utf8").catch(() => "");
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  return kb === undefined ? process.memoryUsage().rss / 2 ** 20 : Number(kb) / 1024;
}

/** The highest RSS since start (VmHWM); NaN where /proc is missing. */
async function vmHwmMiB(): Promise<number> {
  const status = await readFile("/proc/self/status", "utf8").catch(() => "");
  const kb = /VmHWM:\s+(\d+)\s+kB/.exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

const gc = (globalThis as { gc?: () => void }).gc;

serveRpc(
  {
    memory: async () => {
      if (gc) {
        // Two full collections with a turn of the event loop between (weak refs, finalizers).
        gc();
        await new Promise((r) => setTimeout(r, 50));
        gc();
        // V8's background threads unmap the pages a collection freed a little later: read after that
        // (up to 60 MiB more RSS when read at once, all gone at 0.2 s and the same at 3 s).
        await new Promise((r) => setTimeout(r, 500));
      }
      const m = process.memoryUsage();
      return {
        rssMiB: await vmRssMiB(),
        heapUsedMiB: m.heapUsed / 2 ** 20,
        heapTotalMiB: m.heapTotal / 2 ** 20,
        externalMiB: m.external / 2 ** 20,
        arrayBuffersMiB: m.arrayBuffers / 2 ** 20,
        gcForced: gc !== undefined,
        peakRssMiB: await vmHwmMiB(),
      };
    },
    cpu: cpuNow,
    queues: () => bot.deps.edge.queueStats(),
    stop: async () => {
      await bot.stop();
      setImmediate(() => process.exit(0));
      return true;
    },
  },
  { port: bot.port },
);
