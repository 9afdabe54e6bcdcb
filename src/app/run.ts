import { systemClock } from "../clock.js";
import { ConfigError } from "../config.js";
import { TransportError } from "../errors.js";
import { createLogger } from "../log.js";
import { installProcessGuards } from "../ops/process-guards.js";
import { startTracing } from "../ops/tracing.js";
import { StoreError } from "../store/index.js";
import type { RunningBot, StartOptions } from "./bot.js";
import { loadConfigOrExit } from "./load-config.js";

/**
 * How long closing may take after the drain (SHUTDOWN_TIMEOUT_MS) before the process leaves anyway: a
 * supervisor's grace period (compose's stop_grace_period, Kubernetes' terminationGracePeriodSeconds) covers both.
 */
export const CLOSING_BACKSTOP_MS = 15_000;

/**
 * A process running the bot: configuration → `start` (src/app/bot.ts, or the console in tools/start.ts) →
 * signals and process guards; a clear sentence and exit 1 on failure.
 */
export async function runMain(start: (options: StartOptions) => Promise<RunningBot>): Promise<void> {
  const config = loadConfigOrExit("edgeops");
  // The process's own clock: the bot's, and the backstop's when a shutdown hangs.
  const clock = systemClock;
  const logger = createLogger({ level: config.logLevel });
  let starting: Promise<RunningBot> | undefined;
  let stopping = false;
  /** SIGTERM, SIGINT, a token Slack refuses, an uncaught exception: drain, close, exit. */
  const stop = (reason: string, exitCode: number) => {
    if (stopping) {
      // A second Ctrl-C: the operator does not want to wait.
      if (reason === "SIGINT") process.exit(130);
      return;
    }
    stopping = true;
    logger.info({ reason, timeoutMs: config.shutdownTimeoutMs }, "shutting down");
    // Backstop: if closing hangs past the drain timeout plus closing time, leave anyway.
    clock.setTimeout(() => {
      logger.error("shutdown did not finish in time; exiting");
      process.exit(1);
    }, config.shutdownTimeoutMs + CLOSING_BACKSTOP_MS);
    if (!starting) process.exit(exitCode);
    // During start-up: let it finish, then stop what it started.
    starting
      .then((bot) => bot.stop())
      .then(
        () => process.exit(exitCode),
        (err: unknown) => {
          logger.error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
  };
  installProcessGuards({ logger, stop });
  // Before anything else is built, so the first request and tick are traced; off without a collector.
  await startTracing({ settings: config.tracing, logger }).catch((err: unknown) =>
    logger.warn({ err }, "OpenTelemetry tracing could not start; running without it"),
  );
  process.on("SIGTERM", () => stop("SIGTERM", 0));
  process.on("SIGINT", () => stop("SIGINT", 0));

  starting = start({
    config,
    logger,
    clock,
    onFatal: (err) => {
      process.stderr.write(`edgeops: ${err.message}\n`);
      logger.fatal(err.message);
      stop("slack", 1);
    },
  });
  try {
    await starting;
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
