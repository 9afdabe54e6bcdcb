import { yieldToWaitingRequests } from "../../ack-priority.js";
import { inSpan } from "../../ops/tracing.js";
import { alreadyAcknowledged } from "./threaded-receiver.js";

type Acknowledging = { ack: (...args: never[]) => Promise<void> };

/** The listener, with an ack() (see src/ack-priority.ts) that lets waiting requests be acknowledged before the follow-up goes on. */
export function ackFirst<A extends Acknowledging>(listener: (args: A) => Promise<void>) {
  return (args: A): Promise<void> => {
    const ack = args.ack;
    // Acknowledged by the HTTP front thread (src/slack/transport/threaded-receiver.ts): the span marks
    // where the listener took its turn, the answer to Slack having left already.
    if (ack === alreadyAcknowledged)
      return listener({
        ...args,
        ack: (() => inSpan("slack ack", { "slack.ack.by": "front thread" }, () => ack())) as A["ack"],
      });
    const yieldingAck = ((...ackArgs: never[]) =>
      inSpan("slack ack", { "slack.ack.by": "listener" }, async () => {
        await ack(...ackArgs);
        await yieldToWaitingRequests();
      })) as A["ack"];
    return listener({ ...args, ack: yieldingAck });
  };
}
