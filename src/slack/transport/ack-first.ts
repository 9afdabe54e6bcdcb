import type { App } from "@slack/bolt";

import { yieldToWaitingRequests } from "../../ack-priority.js";
import { alreadyAcknowledged } from "./threaded-receiver.js";

type Acknowledging = { ack: (...args: never[]) => Promise<void> };

/** The listener, with an ack() (see src/ack-priority.ts) that lets waiting requests be acknowledged before the follow-up goes on. */
export function ackFirst<A extends Acknowledging>(listener: (args: A) => Promise<void>) {
  return (args: A): Promise<void> => {
    const ack = args.ack;
    // Acknowledged by the HTTP front thread (src/slack/threaded-receiver.ts).
    if (ack === alreadyAcknowledged) return listener(args);
    const yieldingAck = (async (...ackArgs: never[]) => {
      await ack(...ackArgs);
      await yieldToWaitingRequests();
    }) as A["ack"];
    return listener({ ...args, ack: yieldingAck });
  };
}

const ACKNOWLEDGED_KINDS = ["command", "action", "view", "shortcut", "options"] as const;

/**
 * Make every listener registered on `app` from now on ack first (see ackFirst): the listener is the
 * last function given to app.command/action/view/shortcut/options; the ones before it are middleware.
 */
export function ackFirstOnEveryListener(app: App): void {
  for (const kind of ACKNOWLEDGED_KINDS) {
    const register = app[kind].bind(app) as (...args: unknown[]) => void;
    (app as unknown as Record<string, unknown>)[kind] = (...args: unknown[]) => {
      const listener = args.at(-1);
      if (typeof listener === "function")
        args[args.length - 1] = ackFirst(listener as (a: Acknowledging) => Promise<void>);
      register(...args);
    };
  }
}
