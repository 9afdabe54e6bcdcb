import { expireDue } from "../services/bot-categories.js";
import type { SlackEnv } from "./commands/types.js";
import { updateCard } from "./listeners/actions/approval-decision.js";

export interface ApprovalSweeper {
  /** Expire every pending request whose time is up and update its card; returns how many this replica expired. */
  sweep(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Expiry without a click, in every replica: each due request is expired by whichever replica wins its
 * compare-and-set, and that one updates the card. Runs at start, so requests that expired while the
 * bot was down are closed after a restart.
 */
export function createApprovalSweeper(env: SlackEnv, intervalMs = 15_000): ApprovalSweeper {
  const logger = env.deps.logger.child({ job: "approval-expiry" });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;

  async function sweepOnce(): Promise<number> {
    const expired = await expireDue(env.deps);
    for (const request of expired) {
      try {
        await updateCard(await env.clientFor(request.teamId), request, logger);
      } catch (err) {
        logger.warn({ err, requestId: request.id }, "could not update an expired card");
      }
    }
    if (expired.length > 0) logger.info({ expired: expired.length }, "expired approval requests");
    return expired.length;
  }

  const sweep = () => {
    running ??= sweepOnce().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    sweep,
    start() {
      const tick = () =>
        void sweep().catch((err: unknown) => logger.warn({ err }, "approval expiry sweep failed"));
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
