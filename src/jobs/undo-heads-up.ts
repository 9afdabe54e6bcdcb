import { type UndoHeadsUp, undoHeadsUpsDue } from "../services/in-force.js";
import { undoHeadsUpMessage } from "../slack/blocks/cleanup.js";
import type { SlackEnv } from "../slack/edge-commands/types.js";
import type { HeadsUpKey, WorkScope } from "../store/index.js";
import { createClaimWorker } from "./pool.js";

/** Heads-ups of undo times this far past are forgotten (they can never be due again). */
const FORGET_AFTER_MS = 24 * 60 * 60_000;

export interface UndoHeadsUpJob {
  /** One tick: post the heads-ups due now that this replica claims; how many it posted. */
  tick(): Promise<number>;
  start(): void;
  stop(deadlineMs?: number): Promise<void>;
}

export interface UndoHeadsUpOptions {
  /** Default 15 s (the change sweeper's). */
  intervalMs?: number;
  scope?: WorkScope;
}

const keyOf = (h: UndoHeadsUp): HeadsUpKey => ({
  requestId: h.request.id,
  undoAt: h.undoAt,
  episodeId: h.episode.id,
});

/**
 * Five minutes before a temporary change's undo, while an alert on its zone still fires, the alert's thread is
 * told (services/in-force.ts undoHeadsUpsDue), with Extend and Make permanent. A job on the claim loop like the
 * others: every replica ticks; each heads-up is claimed by inserting its (request, undo time, alert) row, so it is
 * posted once across replicas, and again only for a new undo time (an Extend). A post Slack refuses gives its
 * claim back, so a later tick tries again while it is still due.
 */
export function createUndoHeadsUp(env: SlackEnv, options: UndoHeadsUpOptions = {}): UndoHeadsUpJob {
  const { deps } = env;
  const { intervalMs = 15_000, scope = {} } = options;
  const logger = deps.logger.child({ job: "undo-heads-up" });

  async function postOne(h: UndoHeadsUp): Promise<boolean> {
    const key = keyOf(h);
    const log = logger.child({ requestId: h.request.id, episodeId: h.episode.id, teamId: h.request.teamId });
    try {
      // Moved since it was listed (undone, extended, made permanent): not this heads-up.
      const now = await deps.store.changeRequests.get(h.request.id);
      if (now?.state !== "applied" || now.undoAt !== h.undoAt) return false;
      if (!(await deps.store.undoHeadsUps.claim(key, h.request.teamId, deps.clock.now()))) return false;
      try {
        const message = undoHeadsUpMessage(
          { requestId: h.request.id, change: h.change, undoAt: h.undoAt },
          deps.clock.now(),
        );
        const client = await env.clientFor(h.request.teamId);
        await client.chat.postMessage({
          channel: h.episode.channelId,
          thread_ts: h.episode.messageTs,
          text: message.text,
          blocks: message.blocks,
        });
        return true;
      } catch (err) {
        log.warn({ err }, "could not post the heads-up before an undo; a later tick tries again");
        await deps.store.undoHeadsUps.release(key);
        return false;
      }
    } catch (err) {
      log.warn({ err }, "could not claim the heads-up before an undo; a later tick tries again");
      return false;
    }
  }

  const worker = createClaimWorker<UndoHeadsUp>({
    name: "undo heads-up",
    intervalMs,
    clock: deps.clock,
    logger,
    concurrency: 4,
    perWorkspace: 1,
    id: (h) => `${h.request.id}/${h.undoAt}/${h.episode.id}`,
    teamId: (h) => h.request.teamId,
    run: postOne,
    listDue: () => undoHeadsUpsDue(deps, deps.clock.now(), scope),
    async afterTick() {
      await deps.store.undoHeadsUps
        .pruneBefore(deps.clock.now() - FORGET_AFTER_MS)
        .catch((err: unknown) => logger.warn({ err }, "could not forget old heads-ups"));
      return 0;
    },
  });
  return { tick: worker.tick, start: worker.start, stop: (deadlineMs) => worker.stop(deadlineMs) };
}
