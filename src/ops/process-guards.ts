import type { Logger } from "../log.js";

/**
 * Process-wide last resorts, installed by src/main.ts before anything starts.
 * - An unhandled promise rejection is logged as an error, with its reason, and edgeops keeps running:
 *   one lost promise must not drop every Slack request in flight.
 * - An uncaught exception leaves the process in an unknown state: it is logged as fatal, and edgeops
 *   stops as on SIGTERM (new work refused, in-flight work drained within SHUTDOWN_TIMEOUT_MS), then
 *   exits 1 so the orchestrator restarts it.
 */
export function installProcessGuards(o: {
  logger: Logger;
  stop: (reason: string, exitCode: number) => void;
}): void {
  process.on("unhandledRejection", (reason) => {
    o.logger.error({ err: reason }, "unhandled promise rejection; edgeops keeps running");
  });
  process.on("uncaughtException", (err, origin) => {
    o.logger.fatal({ err, origin }, "uncaught exception; edgeops stops");
    o.stop("uncaughtException", 1);
  });
}
