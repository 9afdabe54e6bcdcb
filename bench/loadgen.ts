/**
 * The load generator, in its own process: sends signed Slack requests (slash commands, block_actions)
 * at a fixed open-loop rate (request i is due at start + i/rate, whatever happened to earlier ones) or
 * all at once (rate 0), and measures the time to the receiver's HTTP answer (the ack). Each body is
 * signed just before it is sent, as Slack does.
 */
import { Pool } from "undici";
import { slackSignatureHeaders } from "../test/support/slack-signer.js";
import { SIGNING_SECRET, serveRpc, wallNow } from "./common.js";

export interface LoadRequest {
  id: string;
  body: string;
}

export interface LoadRun {
  /** http://127.0.0.1:port (the receiver's origin; requests go to /slack/events). */
  origin: string;
  requests: LoadRequest[];
  /** Requests per second; 0 sends them all at once. */
  rate: number;
}

export interface LoadSample {
  id: string;
  /** Wall-clock ms (sub-ms resolution) when the request was handed to the socket layer. */
  sentAt: number;
  /** Send → full HTTP answer read, in ms. */
  ackMs: number;
  status: number;
  /** How late the send was against its open-loop schedule, in ms (load generator lag). */
  lagMs: number;
}

const pools = new Map<string, Pool>();
const poolFor = (origin: string) => {
  let p = pools.get(origin);
  if (!p) {
    p = new Pool(origin, { connections: 512, keepAliveTimeout: 4_000, pipelining: 1 });
    pools.set(origin, p);
  }
  return p;
};

async function sendOne(pool: Pool, r: LoadRequest, due: number): Promise<LoadSample> {
  const headers = slackSignatureHeaders(r.body, SIGNING_SECRET);
  const t0 = performance.now();
  const sentAt = performance.timeOrigin + t0;
  try {
    const res = await pool.request({
      path: "/slack/events",
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: r.body,
    });
    await res.body.text();
    return { id: r.id, sentAt, ackMs: performance.now() - t0, status: res.statusCode, lagMs: t0 - due };
  } catch {
    return { id: r.id, sentAt, ackMs: performance.now() - t0, status: 0, lagMs: t0 - due };
  }
}

async function run({ origin, requests, rate }: LoadRun): Promise<LoadSample[]> {
  const pool = poolFor(origin);
  const inflight: Promise<LoadSample>[] = [];
  const start = performance.now() + 20;
  const gap = rate > 0 ? 1000 / rate : 0;
  let i = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (i < requests.length && start + i * gap <= now) {
        inflight.push(sendOne(pool, requests[i] as LoadRequest, start + i * gap));
        i++;
      }
      if (i >= requests.length) return resolve();
      setTimeout(tick, Math.max(0, start + i * gap - performance.now()));
    };
    setTimeout(tick, Math.max(0, start - performance.now()));
  });
  return Promise.all(inflight);
}

serveRpc(
  {
    run: (args: LoadRun) => run(args),
    clock: () => wallNow(),
    stop: async () => {
      await Promise.all([...pools.values()].map((p) => p.close()));
      setImmediate(() => process.exit(0));
      return true;
    },
  },
  { pid: process.pid },
);
