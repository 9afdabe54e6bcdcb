import type { EventLogsSearchResult } from "../../src/edge/schemas/shield.js";

type EventLogGroup = EventLogsSearchResult["groups"][number];

/** An event-log search group of `count` events under `key`: no action counted, nothing else known, but `o`. */
export const eventLogGroup = (
  key: Record<string, string>,
  count: number,
  o: Partial<EventLogGroup> = {},
): EventLogGroup => ({
  key,
  count,
  firstSeen: null,
  lastSeen: null,
  actions: { blocked: 0, challenged: 0, logged: 0 },
  country: null,
  asn: null,
  sparkline: [],
  ...o,
});
