import { yieldToWaitingRequests } from "../../ack-priority.js";
import { alreadyAcknowledged } from "./threaded-receiver.js";

type Acknowledging = { ack: (...args: never[]) => Promise<void> };

/** The listener, with an ack() (see src/ack-priority.ts) that lets waiting requests be acknowledged before the follow-up goes on. */
export function ackFirst<A extends Acknowledging>(listener: (args: A) => Promise<void>) {
  return (args: A): Promise<void> => {
    const ack = args.ack;
    // Acknowledged by the HTTP front thread (src/slack/transport/threaded-receiver.ts).
    if (ack === alreadyAcknowledged) return listener(args);
    const yieldingAck = (async (...ackArgs: never[]) => {
      await ack(...ackArgs);
      await yieldToWaitingRequests();
    }) as A["ack"];
    return listener({ ...args, ack: yieldingAck });
  };
}
