/**
 * The date keys of the Shield metrics maps (`ratelimitOverviewPastTwentyEightDays`, the detailed
 * `metrics` series). The documents do not give their format; the API's platform writes a date as an
 * ISO 8601 date or date-time, in a culture's short form (`8/9/2026 12:00:00 AM`, `9.8.2026 00:00:00`),
 * as a 14-digit `yyyyMMddHHmmss`, or as a Unix time. A key without a zone is read as UTC.
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;
/** M/D/YYYY (en-US), optionally with h:mm[:ss] and AM/PM. */
const SLASHED = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*([AP]M))?)?$/i;
/** D.M.YYYY (de-DE and others), optionally with H:mm[:ss]. */
const DOTTED = /^(\d{1,2})\.(\d{1,2})\.(\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** Unix ms of a calendar date and time (UTC), or null when a part is out of range (Feb 30, 25:00). */
function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number | null {
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(t);
  return back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d ? t : null;
}

const num = (s: string | undefined) => (s === undefined ? 0 : Number(s));

function hour12(h: number, ampm: string | undefined): number {
  if (ampm === undefined) return h;
  if (h < 1 || h > 12) return 99;
  const pm = ampm.toUpperCase() === "PM";
  return (h % 12) + (pm ? 12 : 0);
}

/** The Unix ms a date key names, or null when it is none of the forms above. */
export function parseDateKey(raw: string): number | null {
  const key = raw.trim();
  let m = ISO.exec(key);
  if (m) {
    const fraction = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
    const t = utc(num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(m[6]), fraction);
    if (t === null) return null;
    const zone = m[8];
    if (zone === undefined || zone.toUpperCase() === "Z") return t;
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
    if (!z) return null;
    const offset = (num(z[2]) * 60 + num(z[3])) * 60_000;
    return z[1] === "+" ? t - offset : t + offset;
  }
  m = SLASHED.exec(key);
  if (m) return utc(num(m[3]), num(m[1]), num(m[2]), hour12(num(m[4]), m[7]), num(m[5]), num(m[6]));
  m = DOTTED.exec(key);
  if (m) return utc(num(m[3]), num(m[2]), num(m[1]), num(m[4]), num(m[5]), num(m[6]));
  m = COMPACT.exec(key);
  if (m) return utc(num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(m[6]));
  if (/^\d{9,11}$/.test(key)) return Number(key) * 1000;
  if (/^\d{12,13}$/.test(key)) return Number(key);
  return null;
}

/** The key's form with its digits masked (`9/9/9999`), to log one unreadable form once, not each key. */
export const dateKeyShape = (key: string): string => key.slice(0, 40).replace(/\d/g, "9");

/** `2026-08-09` for a Unix ms. */
export const isoDay = (t: number): string => new Date(t).toISOString().slice(0, 10);
