import type { AnyMiddlewareArgs, Middleware } from "@slack/bolt";

type EventBody = { event?: Record<string, unknown> };

export interface EventsHandled {
  /** Global middleware for startHarness({ middleware }): notes each Events API event once its listeners ended. */
  middleware: Middleware<AnyMiddlewareArgs>;
  /**
   * Resolves once an event of this type (e.g. "link_shared") matching `match` has been handled to the end,
   * already or later. Bolt acknowledges an event before its listeners run, so the HTTP answer (and
   * h.settled() right after it) can come before the listener even started: this waits for its end.
   */
  handled(type: string, match?: (event: Record<string, unknown>) => boolean): Promise<void>;
}

/** Know when a Slack event's listeners have finished, not merely when Slack's request was acknowledged. */
export function eventsHandled(): EventsHandled {
  const ended: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  const middleware: Middleware<AnyMiddlewareArgs> = async ({ body, next }) => {
    try {
      await next();
    } finally {
      const event = (body as EventBody).event;
      if (event) {
        ended.push(event);
        for (const wake of [...waiters]) wake();
      }
    }
  };
  const handled: EventsHandled["handled"] = (type, match = () => true) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!ended.some((e) => e.type === type && match(e))) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { middleware, handled };
}
