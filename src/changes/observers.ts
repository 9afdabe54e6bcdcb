import type { Logger } from "../log.js";
import type { ChangeRequest } from "../store/index.js";

/** Told of every move of a change request, after it is stored (the request as it is now). */
export type ChangeObserver = (request: ChangeRequest) => Promise<void>;

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

  /**
   * Told when what a request's card says changed without a move: an approval recorded, a reject reason,
   * an outcome not known yet, a note from another request that took its target.
   */
  addNoted(observer: ChangeObserver): () => void {
    this.#noted.add(observer);
    return () => this.#noted.delete(observer);
  }

  async notifyNoted(request: ChangeRequest, logger: Logger): Promise<void> {
    for (const observer of this.#noted) {
      try {
        await observer(request);
      } catch (err) {
        logger.warn({ err, requestId: request.id }, "a change note observer failed");
      }
    }
  }

  async notify(request: ChangeRequest, logger: Logger): Promise<void> {
    for (const observer of this.#observers) {
      try {
        await observer(request);
      } catch (err) {
        logger.warn({ err, requestId: request.id, state: request.state }, "a change observer failed");
      }
    }
  }
}

/**
 * Announcements held back until `flush`, then told to `target`'s observers in order: a change in flight
 * tells its moves once its lease ended, so whoever acts on a redrawn card or a completed workflow step
 * (an Undo, the reconciler) finds the request free.
 */
export class HeldObservers extends ChangeObservers {
  readonly #target: ChangeObservers;
  readonly #held: (() => Promise<void>)[] = [];

  constructor(target: ChangeObservers) {
    super();
    this.#target = target;
  }

  override add(observer: ChangeObserver): () => void {
    return this.#target.add(observer);
  }

  override addNoted(observer: ChangeObserver): () => void {
    return this.#target.addNoted(observer);
  }

  override async notify(request: ChangeRequest, logger: Logger): Promise<void> {
    this.#held.push(() => this.#target.notify(request, logger));
  }

  override async notifyNoted(request: ChangeRequest, logger: Logger): Promise<void> {
    this.#held.push(() => this.#target.notifyNoted(request, logger));
  }

  async flush(): Promise<void> {
    for (const tell of this.#held.splice(0)) await tell();
  }
}
