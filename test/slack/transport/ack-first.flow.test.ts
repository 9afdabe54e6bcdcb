import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { yieldToWaitingRequests } from "../../../src/ack-priority.js";
import { ackFirst } from "../../../src/slack/transport/ack-first.js";

/** Synchronous work, as a follow-up step between two awaits is (store, validation, Block Kit): a few ms of hashing. */
const busy = (rounds: number) => {
  let digest = "step";
  for (let i = 0; i < rounds; i++) digest = createHash("sha256").update(digest).digest("hex");
  return digest;
};

describe("acknowledgements go first", () => {
  it("a request arriving while 100 follow-up steps wait is answered after a few of them, not after all", async () => {
    const order: string[] = [];
    const server = createServer((_req, res) => {
      order.push("request");
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { port } = server.address() as AddressInfo;
      const steps = Array.from({ length: 100 }, (_, i) =>
        yieldToWaitingRequests().then(() => {
          busy(1_000);
          order.push(`step ${i}`);
        }),
      );
      const answered = fetch(`http://127.0.0.1:${port}/`).then((r) => r.text());
      await Promise.all([...steps, answered]);
      const at = order.indexOf("request");
      // Let go all at once (one setImmediate each), the request would come after every step (300 ms).
      expect(at).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThan(50);
      // The steps themselves still run in the order they came.
      expect(order.filter((o) => o !== "request")).toEqual(steps.map((_, i) => `step ${i}`));
    } finally {
      server.close();
    }
  });

  it("ackFirst: the listener acks, and its follow-up waits for a later turn of the event loop", async () => {
    const order: string[] = [];
    const listener = ackFirst(async ({ ack }: { ack: () => Promise<void> }) => {
      await ack();
      order.push("follow-up");
    });
    const done = listener({
      ack: async () => {
        order.push("ack");
      },
    });
    setImmediate(() => order.push("a turn later"));
    await done;
    expect(order).toEqual(["ack", "a turn later", "follow-up"]);
  });
});
