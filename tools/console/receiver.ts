import type { App, Receiver } from "@slack/bolt";
import type { Logger } from "../../src/log.js";

export interface Dispatched {
  /** What the listener passed to ack() (undefined when it acked with nothing, or never did). */
  ack: Promise<unknown>;
  /** The listener (and Bolt's middleware) finished. Never rejects. */
  done: Promise<void>;
}

/**
 * A Bolt receiver fed by the console instead of HTTP or a WebSocket: the bodies it is given are the
 * ones Slack would send (slash command form fields, interactivity payloads, Events API envelopes),
 * so the same listeners run exactly as they do behind Slack. It counts events in flight so the console
 * can wait until the app has finished answering.
 */
export class ConsoleReceiver implements Receiver {
  private app: App | undefined;
  private running = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {
    this.running = true;
  }

  /** Stop taking events and wait for those in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await this.idle();
  }

  get busy(): number {
    return this.inFlight.size;
  }

  /** Resolves when no event is being processed. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  dispatch(body: Record<string, unknown>): Dispatched {
    const app = this.app;
    if (!app || !this.running) throw new Error("The console receiver is not running.");
    let resolveAck: (v: unknown) => void = () => undefined;
    const ack = new Promise<unknown>((resolve) => {
      resolveAck = resolve;
    });
    let acked = false;
    const ackFn = async (response?: unknown) => {
      if (acked) return;
      acked = true;
      resolveAck(response);
    };
    const done = app
      .processEvent({ body, ack: ackFn })
      .catch((err: unknown) => {
        this.logger.error({ err }, "the app failed to process a console event");
      })
      .finally(() => {
        resolveAck(undefined);
        this.inFlight.delete(done);
      });
    this.inFlight.add(done);
    return { ack, done };
  }
}
