/**
 * Acknowledgements go first. Every Slack request shares the event loop with the follow-up work of
 * earlier ones (store, Edge API, Block Kit, Slack calls); Slack needs each ack within 3 s, so the
 * follow-up work yields to requests waiting for theirs:
 * - after a listener's ack(), its follow-up continues on the next turn of the event loop, so the
 *   requests that arrived meanwhile are read and acknowledged first;
 * - after an answer from Slack or the Edge API (src/ops/slack-fetch.ts, src/edge/request.ts), the
 *   continuation does the same, so a burst of answers can't hold the acks of a burst of clicks.
 * Node runs I/O callbacks (an incoming request: parse, verify, ack) in the poll phase and setImmediate
 * callbacks after it; a continuation moved there runs after every request already waiting.
 */
export function yieldToWaitingRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
