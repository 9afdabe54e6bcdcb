/**
 * The date keys of the Shield metrics maps (`ratelimitOverviewPastTwentyEightDays`, the detailed
 * `metrics` series). The documents do not give their format; the API's platform writes a date as an
 * ISO 8601 date or date-time, in a culture's short form (`8/9/2026 12:00:00 AM`, `9.8.2026 00:00:00`),
 * as a 14-digit `yyyyMMddHHmmss`, or as a Unix time. A key without a zone is read as UTC. A map's keys are read
 * together (`readDateKeys`): whether `09/08/2026` is day-first is a fact of the whole map, not of one key.
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;
/** M/D/YYYY (en-US) or DD/MM/YYYY (en-GB), optionally with h:mm[:ss] and AM/PM; alone, read month-first. */
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

/**
 * Whether a map's slashed keys (`09/08/2026`) put the day or the month first. The API's platform writes either
 * (en-US `M/D/YYYY`, en-GB and others `DD/MM/YYYY`): a first number over 12 proves day-first, a second over 12
 * month-first; with neither, the map is undecided unless every slashed key names the same day either way.
 */
type SlashOrder = "month-first" | "day-first" | "either" | "undecided";

function slashOrder(keys: readonly string[]): SlashOrder {
  let dayFirst = false;
  let monthFirst = false;
  let differ = false;
  for (const key of keys) {
    const m = SLASHED.exec(key.trim());
    if (!m) continue;
    const [a, b] = [num(m[1]), num(m[2])];
    if (a > 12) dayFirst = true;
    if (b > 12) monthFirst = true;
    if (a !== b) differ = true;
  }
  if (dayFirst !== monthFirst) return dayFirst ? "day-first" : "month-first";
  // Both proven is no one form; neither proven matters only where the readings differ.
  return dayFirst || differ ? "undecided" : "either";
}

/**
 * A reader for the keys of one map (`keys`: all of them), read together: slashed keys day-first or month-first as
 * the map's keys prove, and null (unknown, never a guess) when they do not decide it and the two readings name
 * different days. Any other
 * form is read as `parseDateKey` reads it.
 */
export function readDateKeys(keys: readonly string[]): (key: string) => number | null {
  const order = slashOrder(keys);
  const read = (raw: string): number | null => {
    const m = SLASHED.exec(raw.trim());
    if (!m) return parseDateKey(raw);
    // Undecided, a key names a day only where both readings name the same one (4/4/2026).
    if (order === "undecided" && num(m[1]) !== num(m[2])) return null;
    const [month, day] = order === "day-first" ? [m[2], m[1]] : [m[1], m[2]];
    return utc(num(m[3]), num(month), num(day), hour12(num(m[4]), m[7]), num(m[5]), num(m[6]));
  };
  // A map's reader is asked for the same key several times (which level is time, which keys are unreadable,
  // then once per count under it): each key is read once.
  const known = new Map<string, number | null>();
  return (raw) => {
    const seen = known.get(raw);
    if (seen !== undefined) return seen;
    const t = read(raw);
    known.set(raw, t);
    return t;
  };
}

/** Whether a key reads as two different days, day-first and month-first (`09/08/2026`). */
export function dayMonthEitherWay(key: string): boolean {
  const m = SLASHED.exec(key.trim());
  return m !== null && num(m[1]) <= 12 && num(m[2]) <= 12 && num(m[1]) !== num(m[2]);
}

/** The key's form with its digits masked (`9/9/9999`), to log one unreadable form once, not each key. */
export const dateKeyShape = (key: string): string => key.slice(0, 40).replace(/\d/g, "9");

/** `2026-08-09` for a Unix ms. */
export const isoDay = (t: number): string => new Date(t).toISOString().slice(0, 10);
