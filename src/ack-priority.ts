/**
 * Acknowledgements go first. Every Slack request shares the event loop with the follow-up work of
 * earlier ones (store, Edge API, Block Kit, Slack calls); Slack needs each ack within 3 s, so the
 * follow-up work yields to requests waiting for theirs:
 * - after a listener's ack() (src/slack/transport/ack-first.ts), its follow-up waits its turn here;
 * - so does the continuation after every answer from Slack or the Edge API (src/slack/transport/slack-fetch.ts,
 *   src/edge/request.ts) and after a PostgreSQL statement outside a transaction (src/store/db.ts).
 *
 * Node reads incoming requests (parse, verify, ack) in the poll phase of each turn of the event loop
 * and runs setImmediate callbacks after it. Continuations waiting here are let go ONE per turn, in
 * the order they came: between two of them the loop polls again, so a request that arrived while one
 * ran waits for that one only, not for every follow-up in flight (a burst of 500 clicks has hundreds).
 * Letting go several at once would run them all before the next poll.
 */
const waiting: (() => void)[] = [];
let head = 0;
let scheduled = false;

function letNextGo(): void {
  const next = waiting[head];
  waiting[head++] = noop;
  if (head > 1024 && head * 2 > waiting.length) {
    waiting.splice(0, head);
    head = 0;
  }
  if (head < waiting.length) setImmediate(letNextGo);
  else {
    waiting.length = 0;
    head = 0;
    scheduled = false;
  }
  next?.();
}

function noop(): void {}

/** Resolves on a later turn of the event loop, after the requests waiting to be read, in FIFO order. */
export function yieldToWaitingRequests(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(letNextGo);
    }
  });
}
