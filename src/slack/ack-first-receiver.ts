import { type App, HTTPReceiver, type ReceiverEvent } from "@slack/bolt";

import { yieldToWaitingRequests } from "../ack-priority.js";

/**
 * Whether Slack's acknowledgement of this payload carries nothing: slash commands, button clicks and
 * menu choices, shortcuts, closed modals, events. Their ack is the same empty 200 whatever the listener
 * does. Not so for a modal submission (`response_action` errors) or an options request (the options),
 * nor for anything this app does not know.
 */
export function acknowledgedEmpty(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const b = body as { command?: unknown; type?: unknown };
  if (typeof b.command === "string") return true;
  switch (b.type) {
    case "block_actions":
    case "shortcut":
    case "message_action":
    case "view_closed":
    case "event_callback":
      return true;
    default:
      return false;
  }
}

/** The ack Bolt's listeners get for a payload this receiver has already acknowledged (and yielded after). */
export const alreadyAcknowledged = async (): Promise<void> => {};

/**
 * Bolt's HTTP receiver (signature check, OAuth pages, custom routes, all unchanged), except that a
 * payload whose ack carries nothing is acknowledged as soon as its signature checks out, before Bolt
 * runs authorize (a store lookup) and the middleware; Bolt then processes it with an ack that has
 * already been given. During a burst of clicks each one is answered as soon as it is read, and its
 * processing waits its turn (src/ack-priority.ts). A listener's own ack() is then a no-op. (Bolt too
 * answers a payload it cannot authorize with an empty 200, so nothing Slack sees changes but the time.)
 */
export class AckFirstReceiver extends HTTPReceiver {
  override init(app: App): void {
    const front = Object.create(app) as App;
    front.processEvent = async (event: ReceiverEvent): Promise<void> => {
      if (!acknowledgedEmpty(event.body)) return app.processEvent(event);
      await event.ack();
      await yieldToWaitingRequests();
      return app.processEvent({ ...event, ack: alreadyAcknowledged });
    };
    super.init(front);
  }
}
