import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { Deps } from "../deps.js";
import { UserError } from "../errors.js";
import { type AgentIdentity, authenticateAgent } from "../services/agent-tokens.js";

export type { AgentIdentity } from "../services/agent-tokens.js";

/** How many calls one token may make, and how many of them may propose a change. */
export interface AgentLimits {
  /** Any tool, per minute. */
  callsPerMinute: number;
  /** propose_change, per hour (each posts a card people must read). */
  proposalsPerHour: number;
}

export const DEFAULT_AGENT_LIMITS: AgentLimits = { callsPerMinute: 60, proposalsPerHour: 20 };

/**
 * The door every MCP call comes through: the token is checked on each call (a revoked or expired token
 * fails the very next call, whatever session it came in), then the call is counted against the token's
 * limits. Limits are per process (in memory): with several replicas an agent may get up to that many
 * times the limit, which the proposal's approval still gates.
 */
export class AgentGate {
  private readonly calls: RateLimiterMemory;
  private readonly proposals: RateLimiterMemory;

  constructor(
    private readonly deps: Deps,
    limits: AgentLimits = DEFAULT_AGENT_LIMITS,
  ) {
    this.calls = new RateLimiterMemory({ points: limits.callsPerMinute, duration: 60 });
    this.proposals = new RateLimiterMemory({ points: limits.proposalsPerHour, duration: 3_600 });
  }

  /** The identity the token acts as now (not counted against its limits); UserError otherwise. */
  check(token: string | undefined): Promise<AgentIdentity> {
    return authenticateAgent(this.deps, token);
  }

  /** The identity the token acts as now, once the call is within its limits; UserError otherwise. */
  async admit(token: string | undefined, call: "read" | "propose"): Promise<AgentIdentity> {
    const who = await authenticateAgent(this.deps, token);
    await take(this.calls, who.tokenId, "calls a minute");
    if (call === "propose") await take(this.proposals, who.tokenId, "proposals an hour");
    return who;
  }
}

async function take(limiter: RateLimiterMemory, key: string, what: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    const seconds = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    throw new UserError(
      "unavailable",
      `This agent token made more than its ${limiter.points} ${what}: try again in ${seconds} s.`,
    );
  }
}
