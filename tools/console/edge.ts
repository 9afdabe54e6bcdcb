/**
 * Which Edge API the console talks to. With EDGE_API_KEY: the configured service, as in production.
 * Without: the built-in simulator answers the simulator's own key (the console's default key), and
 * any other key (one stored with /edge key) goes to the configured service (EDGE_API_URL, by default
 * the real bunny.net API), so a newcomer can try everything first and switch to real data later.
 */

import { createEdgeClient } from "../../src/app/compose.js";
import type { Clock } from "../../src/clock.js";
import type { Config } from "../../src/config.js";
import type { EdgeApi } from "../../src/edge/client.js";
import type { RetryPolicy } from "../../src/edge/queue.js";
import type { Logger } from "../../src/log.js";
import { SIM_API_KEY, type Simulator, type SimulatorOptions, startSimulator } from "../simulator/index.js";

export interface ConsoleEdge {
  edge: EdgeApi;
  /** The running simulator, when the Edge API is simulated. */
  sim: Simulator | undefined;
  /** Where keys other than the simulator's go. */
  realBaseUrl: string;
  /** The key used when the workspace stores none (the simulator's, or EDGE_API_KEY). */
  defaultApiKey: string | undefined;
  /** Base URL for the default key. */
  defaultBaseUrl: string;
  close(deadlineMs?: number): Promise<void>;
}

export interface ConsoleEdgeOptions {
  config: Config;
  logger: Logger;
  clock: Clock;
  simulator?: SimulatorOptions;
  retry?: RetryPolicy;
}

export async function startConsoleEdge(o: ConsoleEdgeOptions): Promise<ConsoleEdge> {
  const make = (baseUrl: string) =>
    createEdgeClient({
      config: o.config,
      logger: o.logger,
      clock: o.clock,
      baseUrl,
      ...(o.retry ? { retry: o.retry } : {}),
    });
  const realBaseUrl = o.config.edge.baseUrl;
  const real = make(realBaseUrl);
  if (o.config.edge.defaultApiKey !== undefined) {
    return {
      edge: real,
      sim: undefined,
      realBaseUrl,
      defaultApiKey: o.config.edge.defaultApiKey,
      defaultBaseUrl: realBaseUrl,
      close: (ms) => real.close(ms),
    };
  }
  // The simulator shares the console's clock: traffic, attacks and date keys at the bot's time, moved or not.
  const sim = await startSimulator({
    clock: o.clock,
    ...o.simulator,
    apiKeys: [SIM_API_KEY, ...(o.simulator?.apiKeys ?? [])],
  });
  const simulated = make(sim.url);
  const edge: EdgeApi = {
    forKey: (apiKey, options) => (apiKey === SIM_API_KEY ? simulated : real).forKey(apiKey, options),
    queueStats: () => {
      const a = simulated.queueStats();
      const b = real.queueStats();
      return { keys: a.keys + b.keys, waiting: a.waiting + b.waiting, inFlight: a.inFlight + b.inFlight };
    },
    backgroundFull: () => simulated.backgroundFull() || real.backgroundFull(),
    close: async (ms) => {
      await Promise.all([simulated.close(ms), real.close(ms)]);
    },
  };
  return {
    edge,
    sim,
    realBaseUrl,
    defaultApiKey: SIM_API_KEY,
    defaultBaseUrl: sim.url,
    close: async (ms) => {
      await edge.close(ms);
      await sim.close();
    },
  };
}
