import type { Logger } from "../log.js";
import type { ApprovalRequest } from "../store/index.js";

/** Told of every move of a change request, after it is stored (the request as it is now). */
export type ChangeObserver = (request: ApprovalRequest) => Promise<void>;

/**
 * The engine's one observer point: every compare-and-set the engine wins on a request's state (approve,
 * reject, apply, expiry, reconciliation, undo …) is announced here, whichever replica or path won it.
 * An observer's failure is logged and never undoes or blocks the move; observers that must not miss a
 * move also have a sweep of their own (a process may die between the move and the announcement).
 */
export class ChangeObservers {
  readonly #observers = new Set<ChangeObserver>();

  /** Returns the function that removes it. */
  add(observer: ChangeObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  readonly #noted = new Set<ChangeObserver>();

  /** Told when what a request's card says changed without a move (another request took its target). */
  addNoted(observer: ChangeObserver): () => void {
    this.#noted.add(observer);
    return () => this.#noted.delete(observer);
  }

  async notifyNoted(request: ApprovalRequest, logger: Logger): Promise<void> {
    for (const observer of this.#noted) {
      try {
        await observer(request);
      } catch (err) {
        logger.warn({ err, requestId: request.id }, "a change note observer failed");
      }
    }
  }

  async notify(request: ApprovalRequest, logger: Logger): Promise<void> {
    for (const observer of this.#observers) {
      try {
        await observer(request);
      } catch (err) {
        logger.warn({ err, requestId: request.id, state: request.state }, "a change observer failed");
      }
    }
  }
}
