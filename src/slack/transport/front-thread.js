// @ts-check
/**
 * The HTTP front of the HTTP transport, run in a worker thread (src/slack/transport/threaded-receiver.ts) so that
 * Slack's acknowledgements never wait for the main thread's work (store, Edge API answers, Block Kit,
 * garbage collection). Plain JavaScript with only Node and Bolt's own request helpers: the thread
 * starts in tens of milliseconds without a TypeScript loader, in development and tests as in production.
 *
 * For each request on Slack's events path whose signature checks out and whose ack carries nothing
 * (acknowledgedEmpty), it answers the empty 200 at once and hands the parsed payload to the main thread.
 * Everything else goes, byte for byte, to Bolt's own HTTPReceiver listening on loopback in the main
 * thread: modal submissions and options (their ack has content), URL verification and SSL checks, bad
 * signatures (Bolt answers 401 and logs), OAuth pages and the custom routes (/healthz, /metrics).
 */
import { Agent, createServer, request } from "node:http";
import { parentPort, workerData } from "node:worker_threads";
// Deep imports: "@slack/bolt" re-exports these (HTTPModuleFunctions, isValidSlackRequest), but loading it
// loads all of Bolt (Express, the Web API client, OAuth) into this thread, which must start in milliseconds.
import {
  bufferIncomingMessage,
  extractRetryNumFromHTTPRequest,
  extractRetryReasonFromHTTPRequest,
  parseHTTPRequestBody,
} from "@slack/bolt/dist/receivers/HTTPModuleFunctions.js";
import { isValidSlackRequest } from "@slack/bolt/dist/receivers/verify-request.js";

/**
 * Whether Slack's acknowledgement of this payload carries nothing: slash commands, button clicks and
 * menu choices, shortcuts, closed modals, events. Their ack is the same empty 200 whatever the listener
 * does. Not so for a modal submission (`response_action` errors) or an options request (the options),
 * nor for anything this app does not know.
 * @param {unknown} body
 * @returns {boolean}
 */
export function acknowledgedEmpty(body) {
  if (typeof body !== "object" || body === null) return false;
  const b = /** @type {{ command?: unknown; type?: unknown }} */ (body);
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

/**
 * @typedef {object} FrontOptions
 * @property {number} port where Slack reaches the app (0: any free port)
 * @property {number} innerPort Bolt's HTTPReceiver on 127.0.0.1
 * @property {string} signingSecret
 * @property {string} eventsPath
 * @property {number} maxInFlight payloads handed to the main thread and not yet done, at most
 */

/**
 * What the front tells the main thread.
 * @typedef {{ kind: "listening"; port: number }
 *   | { kind: "failed"; message: string; code: string | undefined }
 *   | { kind: "busy"; inFlight: number }
 *   | { kind: "payload"; body: Record<string, unknown>; retryNum: number | undefined; retryReason: string | undefined }
 *   | { kind: "stopped" }} FrontMessage
 */

/**
 * The largest request body the front reads and hands on (Bolt's own limit is 4 MB). Slack's largest
 * payloads stay far below it: a message is at most 50 blocks of 3,000 characters and 40,000 characters of
 * text, a modal 100 blocks with their state; anything bigger is not from Slack and gets 413 unread.
 */
export const FRONT_BODY_LIMIT = 1024 * 1024;

/** Headers that belong to one connection, not to the request or answer being passed on. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

/**
 * @param {import("node:http").IncomingHttpHeaders} headers
 * @returns {import("node:http").OutgoingHttpHeaders}
 */
function endToEnd(headers) {
  /** @type {import("node:http").OutgoingHttpHeaders} */
  const out = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/**
 * @param {import("node:http").IncomingHttpHeaders} headers
 * @param {string} name
 */
function single(headers, name) {
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
}

/** Seconds Slack is asked to wait before sending again a payload refused while the main thread is busy. */
export const BUSY_RETRY_AFTER_S = 2;

/** @param {FrontOptions} options @param {(message: FrontMessage) => void} tell */
function startFront(options, tell) {
  const agent = new Agent({ keepAlive: true });
  /** Payloads handed to the main thread that it has not finished ("done" messages count them down). */
  let inFlight = 0;
  /** Whether a refusal was told since the main thread last caught up (one log line per busy spell). */
  let busyTold = false;

  /**
   * @param {import("node:http").IncomingMessage} req
   * @param {import("node:http").ServerResponse} res
   * @param {Buffer} body
   */
  function passOn(req, res, body) {
    const headers = endToEnd(req.headers);
    headers["content-length"] = body.length;
    const inner = request(
      { host: "127.0.0.1", port: options.innerPort, method: req.method, path: req.url, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    inner.on("error", () => {
      if (res.headersSent) res.destroy();
      else
        res
          .writeHead(503, { "content-type": "text/plain" })
          .end("edgeops is not ready; try again in a moment.\n");
    });
    inner.end(body);
  }

  /**
   * The payload to acknowledge here, or undefined to pass the request on.
   * @param {import("node:http").IncomingMessage} req
   * @param {Buffer} rawBody
   * @returns {Record<string, unknown> | undefined}
   */
  function ackableHere(req, rawBody) {
    if (req.method !== "POST" || req.url?.split("?")[0] !== options.eventsPath) return undefined;
    const signature = single(req.headers, "x-slack-signature");
    const timestamp = Number(single(req.headers, "x-slack-request-timestamp"));
    if (!signature || !Number.isFinite(timestamp)) return undefined;
    const text = rawBody.toString();
    const headers = { "x-slack-signature": signature, "x-slack-request-timestamp": timestamp };
    if (!isValidSlackRequest({ signingSecret: options.signingSecret, body: text, headers })) return undefined;
    try {
      const body = parseHTTPRequestBody(Object.assign(req, { rawBody }));
      return acknowledgedEmpty(body) ? body : undefined;
    } catch {
      return undefined;
    }
  }

  const server = createServer((req, res) => {
    bufferIncomingMessage(req, FRONT_BODY_LIMIT).then(
      (buffered) => {
        const body = ackableHere(req, buffered.rawBody);
        if (!body) return passOn(req, res, buffered.rawBody);
        // Back-pressure: an honest "not now" (Slack retries events; a person sees the command fail)
        // rather than an ack for work that would wait in an unbounded queue.
        if (inFlight >= options.maxInFlight) {
          res
            .writeHead(503, { "content-type": "text/plain", "retry-after": String(BUSY_RETRY_AFTER_S) })
            .end("edgeops is busy; try again in a moment.\n");
          if (!busyTold) tell({ kind: "busy", inFlight });
          busyTold = true;
          return;
        }
        inFlight++;
        res.writeHead(200).end();
        tell({
          kind: "payload",
          body,
          retryNum: extractRetryNumFromHTTPRequest(req),
          retryReason: extractRetryReasonFromHTTPRequest(req),
        });
      },
      (/** @type {{ statusCode?: number }} */ err) => {
        // raw-body's errors: too large (413), aborted, bad length.
        const status = typeof err?.statusCode === "number" ? err.statusCode : 400;
        if (!res.headersSent) res.writeHead(status, { "content-type": "text/plain" }).end("Bad request.\n");
      },
    );
  });
  server.on("error", (/** @type {NodeJS.ErrnoException} */ err) => {
    tell({ kind: "failed", message: err.message, code: err.code });
  });
  server.listen(options.port, () => {
    const address = server.address();
    tell({ kind: "listening", port: typeof address === "object" && address ? address.port : options.port });
  });
  return {
    /** The main thread finished one payload. */
    done() {
      inFlight = Math.max(0, inFlight - 1);
      if (inFlight < options.maxInFlight) busyTold = false;
    },
    /** Stop accepting, let the requests being answered finish, then say so. */
    stop() {
      server.close(() => {
        agent.destroy();
        tell({ kind: "stopped" });
      });
      server.closeIdleConnections();
    },
  };
}

if (parentPort && workerData?.front) {
  const port = parentPort;
  const front = startFront(/** @type {FrontOptions} */ (workerData.front), (m) => port.postMessage(m));
  port.on("message", (m) => {
    if (m === "done") front.done();
    else if (m === "stop") front.stop();
  });
}
