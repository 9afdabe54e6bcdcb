/**
 * The shape of a shield zone's traffic: what seed.ts stores per zone and traffic.ts derives minutes from.
 * Apart from both, so the seed and the model do not import each other.
 */
export const FEATURES = ["waf", "ddos", "rateLimit", "botDetection", "accessLists"] as const;
export type Feature = (typeof FEATURES)[number];
export const ACTIONS = ["block", "challenge", "log"] as const;
export type Action = (typeof ACTIONS)[number];

export interface RateLimitRule {
  id: number;
  /** The rule's name (ruleName in GET /shield/rate-limits/{id}). */
  name: string;
  action: Action;
  /** The path the rule protects (events of this rule hit it). */
  path: string;
  /** Share of the zone's ordinary rate-limit breaches. */
  weight: number;
  /** Share of the attack's rate-limit breaches. */
  attackWeight: number;
}

export interface Attack {
  /** Unix ms. */
  startedAt: number;
  /** Minutes from nothing to full strength. */
  rampMinutes: number;
  /** Minutes at (or ramping to) full strength, after which it fades out over 30 minutes. */
  durationMinutes: number;
  /** Threat events per minute at full strength (all features together). */
  peakPerMinute: number;
  /** Unix ms: no events from this minute on (`/sim calm` cuts attacks off at the clock; earlier minutes keep theirs). */
  cutAt?: number;
}

export interface ZoneTraffic {
  /** Threat events per minute on an ordinary day (all features together). */
  baselinePerMinute: number;
  /** Clean requests per minute (billable requests). */
  requestsPerMinute: number;
  /** Attacks on the zone, seeded or staged (a fault plan); their rates add up. */
  attacks: Attack[];
  rateLimitRules: RateLimitRule[];
  /** Size hook: this many extra distinct sources (IP, ASN, JA4, UA, URL), each with 1-3 events in the last 10 minutes. */
  extraSources: number;
  /** Size hook: this many extra distinct triggered WAF rules. */
  extraTriggeredRules: number;
}
