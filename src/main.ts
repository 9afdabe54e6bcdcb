import { startBot } from "./bot.js";
import { ConfigError, loadConfig } from "./config.js";
import { createLogger } from "./log.js";
import { TransportError } from "./slack/transport.js";
import { StoreError } from "./store/index.js";

/** Entry point: configuration → dependencies → the selected transport; a clear sentence and exit 1 on failure. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`edgeops: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const logger = createLogger({ level: config.logLevel });
  try {
    const bot = await startBot({ config, logger });
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) {
        // A second Ctrl-C: the operator does not want to wait.
        if (signal === "SIGINT") process.exit(130);
        return;
      }
      stopping = true;
      logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, "shutting down");
      // Backstop: if closing hangs past the drain timeout plus closing time, leave anyway.
      setTimeout(() => {
        logger.error("shutdown did not finish in time; exiting");
        process.exit(1);
      }, config.shutdownTimeoutMs + 15_000).unref();
      bot.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
    };
    process.on("SIGTERM", () => shutdown("SIGTERM"));
    process.on("SIGINT", () => shutdown("SIGINT"));
  } catch (e) {
    if (e instanceof TransportError || e instanceof StoreError || e instanceof ConfigError) {
      process.stderr.write(`edgeops: ${e.message}\n`);
      logger.flush?.();
      process.exit(1);
    }
    logger.fatal({ err: e }, "edgeops failed to start");
    process.exit(1);
  }
}

void main();
