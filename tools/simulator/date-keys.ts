/**
 * How the simulator writes the date keys of the Shield metrics maps. The documents do not give the
 * format (an invention of the simulator either way); the alternatives are the forms the API's
 * platform may write, so the rate-limit and metrics paths can be tested under each.
 */
import type { HandlerContext } from "./http.js";

export const DATE_KEY_FORMATS = [
  "iso",
  "iso-local",
  "us",
  "day-first",
  "dotted",
  "compact",
  "unknown",
] as const;
export type DateKeyFormat = (typeof DATE_KEY_FORMATS)[number];

/** The forms a reader may be expected to know: every one but "unknown" (for the "cannot read" paths). */
const READABLE_FORMATS = DATE_KEY_FORMATS.filter((f) => f !== "unknown");

/**
 * The run's date-key form: the state's when a test or option set one, else the adversary's choice
 * ("metrics.date-key-format"; friendly: "iso"), one form for every map of the run.
 */
export function dateKeyFormatOf(ctx: HandlerContext): DateKeyFormat {
  return ctx.state.dateKeyFormat ?? ctx.adversary.choose("metrics.date-key-format", READABLE_FORMATS);
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** A day (`time` false) or a bucket start (`time` true) at `t` (Unix ms, UTC) in `format`. */
export function formatDateKey(t: number, format: DateKeyFormat, time: boolean): string {
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth() + 1;
  const day = d.getUTCDate();
  const h = d.getUTCHours();
  const mi = pad(d.getUTCMinutes());
  const s = pad(d.getUTCSeconds());
  switch (format) {
    case "iso":
      return time ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : d.toISOString().slice(0, 10);
    case "iso-local":
      return d.toISOString().slice(0, 19);
    case "us":
      return time
        ? `${mo}/${day}/${y} ${h % 12 === 0 ? 12 : h % 12}:${mi}:${s} ${h < 12 ? "AM" : "PM"}`
        : `${mo}/${day}/${y}`;
    case "day-first":
      // en-GB and many others: 09/08/2026 is the 9th of August, which reads as September 8 month-first.
      return time ? `${pad(day)}/${pad(mo)}/${y} ${pad(h)}:${mi}:${s}` : `${pad(day)}/${pad(mo)}/${y}`;
    case "dotted":
      return time ? `${day}.${mo}.${y} ${pad(h)}:${mi}:${s}` : `${day}.${mo}.${y}`;
    case "compact":
      return `${y}${pad(mo)}${pad(day)}${pad(h)}${mi}${s}`;
    case "unknown":
      // A form no reader knows: for the "cannot read" paths.
      return `day ${Math.floor(t / 86_400_000)}${time ? ` minute ${Math.floor((t % 86_400_000) / 60_000)}` : ""}`;
  }
}

/** Rewrite a map keyed by ISO days (`2026-08-09`) into `format`. */
export function rekeyDays<T>(days: Record<string, T>, format: DateKeyFormat): Record<string, T> {
  if (format === "iso") return days;
  return Object.fromEntries(
    Object.entries(days).map(([k, v]) => [formatDateKey(Date.parse(`${k}T00:00:00Z`), format, false), v]),
  );
}
