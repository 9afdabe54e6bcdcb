import type { EventEmitter } from "node:events";
import type { Server } from "node:http";
import type { Receiver } from "@slack/bolt";
import { TransportError } from "../../errors.js";
import type { TransportWatch } from "../../ops/index.js";

/**
 * What readiness needs to know about the Slack side: is the HTTP receiver listening (HTTP mode), is
 * the Socket Mode client connected (Socket Mode). createSlackApp builds the receiver and hands it here;
 * it is read defensively: if Bolt changes shape the check reports it rather than pretending to be ready.
 */

interface ReceiverInternals {
  /** ThreadedHttpReceiver: whether its front thread and Bolt's receiver behind it are both listening. */
  listening?: boolean;
  /** SocketModeReceiver: the SocketModeClient (public). */
  client?: EventEmitter;
  /**
   * SocketModeReceiver: the server for custom routes and OAuth pages. Private in Bolt, and no public way
   * tells its port or a failure to listen (Bolt only logs it).
   */
  httpServer?: Server;
}

function receiverOf(receiver: Receiver): ReceiverInternals | undefined {
  return receiver && typeof receiver === "object" ? (receiver as ReceiverInternals) : undefined;
}

const SOCKET_STATES = ["connecting", "connected", "reconnecting", "disconnecting", "disconnected"] as const;

export function watchTransport(slackReceiver: Receiver, kind: "http" | "socket"): TransportWatch {
  const receiver = receiverOf(slackReceiver);
  if (kind === "http") {
    return {
      problem: () => (receiver?.listening ? undefined : "the HTTP receiver is not listening"),
      close: () => undefined,
    };
  }
  const client = receiver?.client;
  if (!client || typeof client.on !== "function") {
    return { problem: () => "cannot observe the Socket Mode connection", close: () => undefined };
  }
  let state: string = "connecting";
  const listeners = SOCKET_STATES.map((s) => {
    const fn = () => {
      state = s;
    };
    client.on(s, fn);
    return [s, fn] as const;
  });
  // The WebSocket dropped: the client reconnects on its own, but until "connected" nothing arrives.
  const onClose = () => {
    if (state === "connected") state = "reconnecting";
  };
  client.on("close", onClose);
  return {
    problem: () => (state === "connected" ? undefined : `Socket Mode is ${state}`),
    close() {
      for (const [s, fn] of listeners) client.off(s, fn);
      client.off("close", onClose);
    },
  };
}

/** Socket Mode: the client that connects the WebSocket, to start it again after it gave up. */
export function socketModeClientOf(receiver: Receiver): { start(): Promise<unknown> } | undefined {
  const client = receiverOf(receiver)?.client as { start?: unknown } | undefined;
  return client && typeof client.start === "function"
    ? { start: () => (client.start as () => Promise<unknown>).call(client) }
    : undefined;
}

/**
 * Socket Mode: Bolt listens for the custom routes (and OAuth pages) on installerOptions.port without
 * reporting errors or the port it got. Resolve with the port once listening; reject with a clear
 * TransportError if it cannot listen (port in use). undefined when there is no such server.
 */
export function socketModeHttpListening(receiver: Receiver): Promise<number> | undefined {
  const server = receiverOf(receiver)?.httpServer;
  if (!server || typeof server.once !== "function") return undefined;
  return new Promise<number>((resolve, reject) => {
    const onListening = () => {
      server.off("error", onError);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : 0);
    };
    const onError = (err: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      reject(
        new TransportError(
          err.code === "EADDRINUSE"
            ? "PORT is already in use: choose another PORT for /healthz, /readyz and /metrics."
            : `The HTTP server for /healthz, /readyz and /metrics could not start: ${err.message}`,
        ),
      );
    };
    server.once("listening", onListening);
    server.once("error", onError);
  });
}
