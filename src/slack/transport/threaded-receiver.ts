import type { Server } from "node:http";
import { Worker } from "node:worker_threads";
import { type App, HTTPReceiver, type HTTPReceiverOptions, type Receiver } from "@slack/bolt";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../log.js";
import type { FrontMessage } from "./front-thread.js";

/** The ack Bolt's listeners get for a payload the front thread has already acknowledged. */
export const alreadyAcknowledged = async (): Promise<void> => {};

/** Where Slack sends events, commands and interactions in HTTP mode (the Request URL's path). */
export const EVENTS_PATH = "/slack/events";
/** How long stop() waits for the front's requests in flight before ending the thread. */
const FRONT_STOP_MS = 5_000;
/** Pause before a front thread that died is started again. */
const FRONT_RESTART_MS = 1_000;

/**
 * The HTTP transport's receiver: Slack's requests are read, verified and, where their ack carries
 * nothing, acknowledged in a worker thread (src/slack/transport/front-thread.js), so an ack never waits behind
 * the main thread's work; the main thread gets the parsed payload and runs Bolt on it with an ack that
 * has already been given. Bolt's own HTTPReceiver, on 127.0.0.1 in the main thread, answers what the
 * front passes on unchanged: modal submissions, options, Slack's checks, bad signatures, OAuth pages
 * and the custom routes.
 */
export class ThreadedHttpReceiver implements Receiver {
  private readonly inner: HTTPReceiver;
  private app: App | undefined;
  private worker: Worker | undefined;
  private stopping = false;
  private restart: AbortController | undefined;
  private innerServer: Server | undefined;
  private innerPort = 0;
  private publicPort = 0;
  private frontListening = false;
  /** The port Slack reaches once started (the one asked for, or the one given for 0). */
  port = 0;

  /** Bolt reads the OAuth installer (and its authorize) from its receiver. */
  get installer(): HTTPReceiver["installer"] {
    return this.inner.installer;
  }

  /** Read by readiness (src/slack/transport/transport-state.ts). */
  get listening(): boolean {
    return this.frontListening && this.innerServer?.listening === true;
  }

  constructor(
    private readonly options: HTTPReceiverOptions,
    private readonly logger: Logger,
    /** The waits for the front thread to stop and before it starts again after a crash. */
    private readonly clock: Clock,
    /**
     * Payloads the front acknowledged and the main thread has not finished, at most: beyond it the front
     * answers a signed payload 503 with Retry-After instead of queueing it without bound.
     */
    private readonly maxInFlight = 500,
  ) {
    this.inner = new HTTPReceiver(options);
  }

  init(app: App): void {
    this.app = app;
    this.inner.init(app);
  }

  async start(port: number): Promise<void> {
    const server = await this.inner.start({ port: 0, host: "127.0.0.1" });
    this.innerServer = server;
    const address = server.address();
    this.innerPort = typeof address === "object" && address ? address.port : 0;
    this.stopping = false;
    try {
      this.port = await this.startFront(port);
      this.publicPort = this.port;
    } catch (err) {
      await this.inner.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.restart?.abort();
    const worker = this.worker;
    this.worker = undefined;
    this.frontListening = false;
    if (worker) {
      const stopped = new Promise<void>((resolve) => {
        worker.on("message", (m: FrontMessage) => m.kind === "stopped" && resolve());
        worker.once("exit", () => resolve());
        this.clock.setTimeout(resolve, FRONT_STOP_MS);
      });
      worker.postMessage("stop");
      await stopped;
      await worker.terminate();
    }
    await this.inner.stop();
  }

  private startFront(port: number): Promise<number> {
    const worker = new Worker(new URL("./front-thread.js", import.meta.url), {
      workerData: {
        front: {
          port,
          innerPort: this.innerPort,
          signingSecret: this.options.signingSecret,
          eventsPath: EVENTS_PATH,
          maxInFlight: this.maxInFlight,
        },
      },
    });
    this.worker = worker;
    return new Promise<number>((resolve, reject) => {
      let listening = false;
      worker.on("message", (m: FrontMessage) => {
        if (m.kind === "payload") return this.process(m, worker);
        if (m.kind === "busy") {
          this.logger.warn(
            { inFlight: m.inFlight },
            "the HTTP front answered 503: too many Slack payloads in flight",
          );
          return;
        }
        if (m.kind === "listening") {
          listening = true;
          this.frontListening = true;
          resolve(m.port);
        } else if (m.kind === "failed" && !listening) {
          reject(
            Object.assign(new Error(`could not listen on port ${port}: ${m.message}`), { code: m.code }),
          );
        } else if (m.kind === "failed") {
          this.logger.error({ code: m.code }, `the HTTP front failed: ${m.message}`);
        }
      });
      worker.on("error", (err) => {
        if (!listening) reject(err);
        else this.logger.error({ err }, "the HTTP front thread failed");
      });
      worker.on("exit", (code) => {
        if (this.worker === worker) this.frontListening = false;
        if (!listening) return reject(new Error(`the HTTP front thread exited (${code}) before listening`));
        if (this.stopping || this.worker !== worker) return;
        this.logger.error({ code }, "the HTTP front thread exited; starting it again");
        // A sleep, not a timer: the restart keeps the process alive while no thread serves.
        this.restart = new AbortController();
        this.clock.sleep(FRONT_RESTART_MS, this.restart.signal).then(
          () =>
            this.startFront(this.publicPort).catch((err) =>
              this.logger.error({ err }, "the HTTP front thread could not start again"),
            ),
          () => undefined,
        );
      });
    });
  }

  /** Runs Bolt on a payload, then tells its front thread it is done (its count of payloads in flight). */
  private process(m: Extract<FrontMessage, { kind: "payload" }>, from: Worker): void {
    const app = this.app;
    const done = () => {
      if (this.worker === from) from.postMessage("done");
    };
    if (!app) {
      done();
      return;
    }
    app
      .processEvent({
        body: m.body,
        ack: alreadyAcknowledged,
        ...(m.retryNum === undefined ? {} : { retryNum: m.retryNum }),
        ...(m.retryReason === undefined ? {} : { retryReason: m.retryReason }),
        customProperties: {},
      })
      .catch((err: unknown) => this.logger.error({ err }, "a Slack payload could not be processed"))
      .finally(done);
  }
}
