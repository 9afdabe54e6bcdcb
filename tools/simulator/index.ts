import { setMaxListeners } from "node:events";
/**
 * Edge API simulator: a real HTTP server on loopback serving bunny.net Management API operations
 * (Magic Containers under /mc, Shield under /shield, Core pull zones, purges and DNS scans) with seeded, deterministic data,
 * AccessKey auth, fault injection and request recording. Used by tests, benchmarks and `npm run simulator`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Adversary, type AdversaryOptions, createAdversary, seedFromEnv } from "./adversary.js";
import type { DateKeyFormat } from "./date-keys.js";
import { type Fault, FaultSet, refusalAnswer, truncateJson } from "./faults.js";
import { empty, type SimResponse, unauthorized } from "./http.js";
import {
  type AppStatusStep,
  type CalmResult,
  calm,
  findApp,
  findShieldZone,
  type StagedAttack,
  stageAppStatus,
  stageAttack,
} from "./plan.js";
import { familyUnauthorizedStyle, ROUTES } from "./routes.js";
import { createState, type SimulatorState } from "./seed.js";
import { changeInDashboard } from "./shield-settings.js";
import { recordChanges, snapshotConfigs } from "./zone-history.js";

export { type Adversary, type AdversaryOptions, createAdversary, seedFromEnv } from "./adversary.js";
export { DATE_KEY_FORMATS, type DateKeyFormat } from "./date-keys.js";
export { exactPath, type Fault, type Refusal } from "./faults.js";
export type { AppStatusStep, CalmResult, StagedAttack } from "./plan.js";
export { SimulatorPlanError } from "./plan.js";
export type {
  BotCategoryGroup,
  BotDetails,
  BotDetectionState,
  Breaches,
  DnsRecord,
  DnsScanEntry,
  DnsScanJob,
  DnsZone,
  McApp,
  McDisplayEndpoint,
  PullZone,
  PullZoneHostname,
  RateLimitMetrics,
  ShieldGenericResponse,
  ShieldZone,
  SimulatorState,
  WafRecommendation,
} from "./seed.js";

import { type Clock, systemClock } from "../../src/clock.js";

export { restoreState, SavedStateError, saveState } from "./persist.js";
export { SIM_ANCHOR_DATE, SIM_IDS } from "./seed.js";
export type { Attack, RateLimitRule, ZoneTraffic } from "./traffic.js";
export { EVENT_LOG_RETENTION_MS } from "./traffic.js";

export interface SimulatorOptions {
  /** 0 = random free port (default). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Accepted `AccessKey` values. Default `["sim-key"]`. */
  apiKeys?: string[];
  /**
   * Other accounts: each key here is accepted too and sees its own copy of the seeded data, shaped by
   * its function (e.g. keep one zone and rename it), as two bunny.net accounts would. Faults, latency and
   * the recorded requests are shared.
   */
  accounts?: Record<string, (state: SimulatorState) => void>;
  /** Added to every request. Default 0. */
  latencyMs?: number;
  /** How long a triggered DNS scan stays InProgress. Default 1000. */
  scanDurationMs?: number;
  /** PRNG seed for the "noise" in the seeded data (ids and statuses never change). Default 1. */
  seed?: number;
  /**
   * The simulator's clock (Unix ms), read at start (the attack in progress began 12 minutes earlier) and on every
   * request (metrics, event logs and triggered rules are relative to it; only whole minutes before it have events),
   * and whose sleeps are the latency faults and the global latency. Default the real clock; tests share theirs
   * with the bot, so a latency of minutes passes when the test moves time.
   */
  clock?: Clock;
  /** How the Shield metrics maps write their date keys (not documented; default "iso"). */
  dateKeyFormat?: DateKeyFormat;
  /**
   * Each AccessKey keeps its own bot-category actions (copied from the seed on its first call), as
   * separate accounts would, without copying the rest of the data: the benchmarks' many workspaces, each
   * with its own key, then change "the same" category without finding another's change in force.
   */
  botCategoriesPerKey?: boolean;
  /**
   * Where the documents are silent, which reading to answer (tools/simulator/adversary.ts). Default: a seed from
   * `EDGE_SIMULATOR_SEED` when set, else the friendly simulator.
   */
  adversary?: AdversaryOptions;
  /** Start from this state (e.g. `restoreState` of one saved by `saveState`) instead of the seeded one. */
  state?: SimulatorState;
  /**
   * Called after anything may have changed the state: a write answered (every method but GET, bar the event-log
   * search), a fault plan staged, calm, a dashboard change. The console saves the state then.
   */
  onStateChange?: () => void;
}

/** Size hook for one shield zone (see `Simulator.scaleIncident`). */
export interface IncidentScale {
  /** Extra distinct sources (IP, ASN, JA4, user agent, URL), each with 1-3 events in the 10 minutes before now. */
  eventLogGroups?: number;
  /** Extra distinct triggered WAF rules. */
  triggeredRules?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Lowercased header names. */
  headers: Record<string, string>;
  /** Parsed JSON, the raw string when not JSON, undefined when empty. */
  body: unknown;
  /** Date.now() when received. */
  at: number;
  /** Wall-clock ms (sub-ms) when received and when the answer was handed to the socket (benchmarks). */
  receivedAt?: number;
  answeredAt?: number;
}

export interface Simulator {
  /** e.g. http://127.0.0.1:43123 (no trailing slash). Magic Containers is under `${url}/mc`. */
  url: string;
  /** Accept one more `AccessKey` from now on (a fresh key per simulated workspace); the function revokes it. */
  allowApiKey(key: string): () => void;
  /** Everything received, in order. */
  requests: RecordedRequest[];
  clearRequests(): void;
  /** Requests received and not yet answered (or dropped). */
  inFlight(): number;
  /**
   * The most requests at once, since the last clearRequests, that had been received and whose answer had
   * not yet begun: each lies inside its client's own wait, so this never counts more than the clients had
   * in flight (a busy machine can only make it count fewer).
   */
  mostInFlight(): number;
  /**
   * The first request received (already, or from now on) that `predicate` accepts; rejects after
   * `timeoutMs` (a guard: a test waits for the request, never for time).
   */
  waitForRequest(predicate: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  addFault(f: Fault): void;
  clearFaults(): void;
  setLatency(ms: number): void;
  /** The mutable seeded data; tests may inspect and alter it. */
  state: SimulatorState;
  /**
   * Makes a shield zone's event log and triggered WAF rules large (e.g. 10,000 event-log groups, 500 rules) so
   * that consumers can be tested at size. Throws for a zone that does not exist.
   */
  scaleIncident(shieldZoneId: number, scale: IncidentScale): void;
  /**
   * Fault plan: an attack on a shield zone from `startsAt` (the simulator's clock), added to the zone's traffic so
   * that metrics, event log and triggered rules agree. Throws `SimulatorPlanError` for an unknown zone or bad numbers.
   */
  stageAttack(shieldZoneId: number, attack: StagedAttack): void;
  /** Fault plan: an app's status from each step's time on (GET /mc/apps). Throws `SimulatorPlanError`. */
  stageAppStatus(appId: string, steps: ReadonlyArray<AppStatusStep>): void;
  /** Ends every attack at the clock, drops those to come, and returns every app with a timeline to `active`. */
  calm(): CalmResult;
  /**
   * A change made in the bunny.net dashboard (not through the API): `setting` one of DASHBOARD_SETTINGS
   * (waf-mode, waf, ddos, learning), `word` its value. Answers the sentence saying what changed or why not.
   */
  changeInDashboard(shieldZoneId: number, setting: string, word: string): { ok: boolean; sentence: string };
  /** A shield zone id by id or by a hostname of its pull zone; undefined when none. */
  findShieldZone(idOrDomain: string): number | undefined;
  /** An app id by id or name; undefined when none. */
  findApp(idOrName: string): string | undefined;
  /** The simulator's clock (Unix ms). */
  now(): number;
  /** The readings answered where the documents are silent; `setAdversary` replaces them (`{}`: friendly). */
  readonly adversary: Adversary;
  setAdversary(options: AdversaryOptions): void;
  close(): Promise<void>;
}

export const SIM_API_KEY = "sim-key";

/** Writes that may change what the traffic model reads (the event-log search is a POST that only reads). */
const writesZoneConfig = (method: string, path: string) =>
  method !== "GET" && path.startsWith("/shield/") && !path.startsWith("/shield/event-logs/");

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseBody(raw: string): unknown {
  if (raw === "") return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function send(res: ServerResponse, r: SimResponse, rawText?: string): void {
  const headers: Record<string, string> = { ...r.headers };
  const text = rawText ?? (r.body === undefined ? undefined : JSON.stringify(r.body));
  if (text !== undefined) {
    headers["content-type"] = "application/json; charset=utf-8";
    headers["content-length"] = String(Buffer.byteLength(text));
  } else {
    headers["content-length"] = "0";
  }
  res.writeHead(r.status, headers);
  res.end(text);
}

/** `{"padding":"xxx…", …the answer's fields}` of about `bytes` bytes, written with backpressure. */
async function sendPadded(res: ServerResponse, r: SimResponse, bytes: number): Promise<void> {
  const real = JSON.stringify(r.body ?? {});
  const head = '{"padding":"';
  const tail = real.startsWith("{") && real !== "{}" ? `",${real.slice(1)}` : `","answer":${real}}`;
  res.writeHead(r.status, { ...r.headers, "content-type": "application/json; charset=utf-8" });
  res.write(head);
  const chunk = "x".repeat(64 * 1024);
  let left = Math.max(0, bytes - head.length - tail.length);
  while (left > 0 && !res.destroyed) {
    const n = Math.min(left, chunk.length);
    left -= n;
    if (!res.write(n === chunk.length ? chunk : chunk.slice(0, n))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
  }
  if (!res.destroyed) res.end(tail);
}

/** Until every hold settles; rejects as soon as `signal` aborts (the simulator closing). */
async function releasedOrClosed(holds: Promise<unknown>[], signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw signal.reason;
  let onAbort = () => {};
  const closed = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([Promise.allSettled(holds), closed]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const apiKeys = new Set(options.apiKeys ?? [SIM_API_KEY]);
  const scanDurationMs = options.scanDurationMs ?? 1000;
  let latencyMs = options.latencyMs ?? 0;
  const simClock = options.clock ?? systemClock;
  const clock = simClock.now;
  let adversary = createAdversary(
    options.adversary ?? { seed: seedFromEnv(process.env.EDGE_SIMULATOR_SEED) },
  );
  const state = options.state ?? createState(options.seed ?? 1, clock());
  const changed = () => options.onStateChange?.();
  if (options.dateKeyFormat !== undefined) state.dateKeyFormat = options.dateKeyFormat;
  const accountStates = new Map<string, SimulatorState>();
  for (const [key, shape] of Object.entries(options.accounts ?? {})) {
    const own = createState(options.seed ?? 1, clock());
    shape(own);
    accountStates.set(key, own);
  }
  const faults = new FaultSet();
  const requests: RecordedRequest[] = [];
  const requestWaiters = new Set<() => void>();
  let inFlight = 0;
  let working = 0;
  let mostWorking = 0;
  const closing = new AbortController();
  // Each held or delayed answer listens for the close: a test may hold many at once.
  setMaxListeners(0, closing.signal);
  let closed: Promise<void> | undefined;

  function answer(method: string, path: string, query: Record<string, string>, body: unknown, key?: string) {
    const route = ROUTES.find((r) => r.pattern.test(path) && r.method === method);
    const account = key === undefined ? undefined : accountStates.get(key);
    const authorized = key !== undefined && (apiKeys.has(key) || account !== undefined);
    if (!authorized) return unauthorized(route?.unauthorized ?? familyUnauthorizedStyle(path), path);
    if (route === undefined) return empty(ROUTES.some((r) => r.pattern.test(path)) ? 405 : 404);
    const params = (route.pattern.exec(path) ?? []).slice(1).map((p) => p ?? "");
    const now = clock();
    const own = account ?? state;
    // A write that changes a zone's settings or access lists shapes its traffic from this minute on.
    const before = writesZoneConfig(method, path) ? snapshotConfigs(own) : undefined;
    const answered = route.handler({
      method,
      path,
      query,
      params,
      body,
      state: own,
      now,
      scanDurationMs,
      adversary,
      ...(options.botCategoriesPerKey ? { accessKey: key } : {}),
    });
    if (before !== undefined) recordChanges(own, before, now);
    if (method !== "GET" && !path.startsWith("/shield/event-logs/")) changed();
    return answered;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const receivedAt = performance.timeOrigin + performance.now();
    const url = new URL(req.url ?? "/", "http://simulator.local");
    const method = (req.method ?? "GET").toUpperCase();
    const path = url.pathname;
    const query = Object.fromEntries(url.searchParams);
    const headers = flattenHeaders(req);
    const body = parseBody(await readBody(req));
    const recorded: RecordedRequest = { method, path, query, headers, body, at, receivedAt };
    requests.push(recorded);
    inFlight++;
    res.once("close", () => {
      inFlight--;
    });
    res.once("finish", () => {
      recorded.answeredAt = performance.timeOrigin + performance.now();
    });
    for (const wake of [...requestWaiters]) wake();

    const plan = faults.plan(method, path);
    const delay = latencyMs + plan.latencyMs;
    working++;
    mostWorking = Math.max(mostWorking, working);
    try {
      if (delay > 0) await simClock.sleep(delay, closing.signal);
      if (plan.holds.length > 0) await releasedOrClosed(plan.holds, closing.signal);
    } finally {
      // From here the answer is written in this turn (or streamed): the client may hear it from now on.
      working--;
    }

    const fault = plan.terminal;
    if (fault?.reset) {
      req.socket.resetAndDestroy();
      return;
    }
    if (fault?.refuse !== undefined) {
      send(res, refusalAnswer(method, path, fault.refuse, adversary, body));
      return;
    }
    const faultHeaders: Record<string, string> = {};
    if (fault?.retryAfter !== undefined) faultHeaders["retry-after"] = fault.retryAfter;
    if (fault !== undefined && fault.body !== "malformed" && fault.padToBytes === undefined) {
      const status = fault.status ?? (fault.retryAfter !== undefined ? 429 : 200);
      const replaced = fault.body === undefined || fault.body === "none" ? undefined : fault.body;
      send(res, { status, body: replaced, headers: faultHeaders });
      return;
    }

    const real = answer(method, path, query, body, headers.accesskey);
    if (fault?.padToBytes !== undefined) {
      await sendPadded(res, { ...real, status: fault.status ?? real.status }, fault.padToBytes);
      return;
    }
    if (fault?.body === "malformed") {
      const text = JSON.stringify(real.body ?? { data: null });
      send(res, { status: fault.status ?? 200, headers: faultHeaders }, truncateJson(text));
      return;
    }
    send(res, real);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (closing.signal.aborted) {
        req.socket.destroy();
        return;
      }
      if (!res.headersSent) send(res, empty(500));
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    allowApiKey: (key: string) => {
      apiKeys.add(key);
      return () => {
        apiKeys.delete(key);
      };
    },
    url: `http://${host}:${address.port}`,
    requests,
    clearRequests: () => {
      requests.length = 0;
      mostWorking = working;
    },
    inFlight: () => inFlight,
    mostInFlight: () => mostWorking,
    waitForRequest: (predicate, timeoutMs = 115_000) =>
      new Promise<RecordedRequest>((resolve, reject) => {
        const check = () => {
          const found = requests.find(predicate);
          if (!found) return;
          requestWaiters.delete(check);
          cancel();
          resolve(found);
        };
        const cancel = systemClock.setTimeout(() => {
          requestWaiters.delete(check);
          reject(new Error(`simulator: no matching request within ${timeoutMs} ms`));
        }, timeoutMs);
        requestWaiters.add(check);
        check();
      }),
    addFault: (f) => faults.add(f),
    clearFaults: () => faults.clear(),
    setLatency: (ms) => {
      latencyMs = Math.max(0, ms);
    },
    state,
    scaleIncident: (shieldZoneId, scale) => {
      const traffic = state.shieldTraffic.get(shieldZoneId);
      if (traffic === undefined) throw new Error(`simulator: no shield zone ${shieldZoneId}`);
      if (scale.eventLogGroups !== undefined)
        traffic.extraSources = Math.max(0, Math.floor(scale.eventLogGroups));
      if (scale.triggeredRules !== undefined) {
        traffic.extraTriggeredRules = Math.max(0, Math.floor(scale.triggeredRules));
      }
    },
    stageAttack: (shieldZoneId, attack) => {
      stageAttack(state, shieldZoneId, attack);
      changed();
    },
    stageAppStatus: (appId, steps) => {
      stageAppStatus(state, appId, steps);
      changed();
    },
    calm: () => {
      const r = calm(state, clock());
      changed();
      return r;
    },
    changeInDashboard: (shieldZoneId, setting, word) => {
      const now = clock();
      const before = snapshotConfigs(state);
      const result = changeInDashboard(state, shieldZoneId, setting, word);
      recordChanges(state, before, now);
      changed();
      return result;
    },
    findShieldZone: (idOrDomain) => findShieldZone(state, idOrDomain)?.shieldZoneId,
    findApp: (idOrName) => findApp(state, idOrName)?.id,
    now: clock,
    get adversary() {
      return adversary;
    },
    setAdversary: (o) => {
      adversary = createAdversary(o);
    },
    close: () => {
      if (closed === undefined) {
        closing.abort();
        closed = new Promise<void>((resolve, reject) => {
          server.close((e) => (e ? reject(e) : resolve()));
          server.closeAllConnections();
        });
      }
      return closed;
    },
  };
}
