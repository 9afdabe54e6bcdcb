import { randomInt } from "node:crypto";
import { Cron } from "croner";
import type { Deps } from "../deps.js";
import { UserError, usage } from "../errors.js";
import type { Schedule } from "../store/index.js";
import { requireCreatorOrAdmin } from "./ownership.js";

/**
 * Scheduled DNS summaries: parsing `<when>` into a five-field cron pattern, next runs in an IANA time
 * zone (croner does the calendar and daylight-saving arithmetic), and the schedules of a workspace.
 * Pure parsing and time functions first; store-backed operations after. Nothing here knows Slack.
 */

export const SCHEDULE_EXAMPLE = "/edge schedule dns 5678 daily 09:00 Europe/Amsterdam";
const TRY = `Try: ${SCHEDULE_EXAMPLE}`;
const FORMS =
  'daily HH:MM, weekdays HH:MM, weekly mon HH:MM, or a cron expression in quotes like "0 9 * * 1-5"';

/** The shortest gap allowed between two summaries of one schedule. */
export const MIN_PERIOD_MS = 15 * 60_000;

export interface When {
  /** Five-field cron pattern (minute hour day-of-month month day-of-week). */
  pattern: string;
  /** The canonical text stored as the schedule's spec: `daily 09:00`, `weekly mon 09:00`, or the cron. */
  spec: string;
  /** For people: `daily at 09:00`, `every Monday at 09:00`, `cron 0 9 * * 1-5`. */
  label: string;
}

const DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
const DAY_NAMES = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;

function parseTime(word: string | undefined, form: string): { h: number; m: number; text: string } {
  const example = `Try: /edge schedule dns 5678 ${form} 09:00 Europe/Amsterdam`;
  if (word === undefined) throw usage(`At what time? Give it as HH:MM after "${form}". ${example}`);
  const m = /^(\d{1,2})[:.h](\d{2})$/.exec(word);
  if (!m) throw usage(`"${word}" is not a time: write it as HH:MM on a 24-hour clock. ${example}`);
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  if (hour > 23 || minute > 59) throw usage(`${word} is not a time of day: use 00:00 to 23:59. ${example}`);
  return { h: hour, m: minute, text: `${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}` };
}

function parseDay(word: string | undefined): number {
  const example = "Try: /edge schedule dns 5678 weekly mon 09:00 Europe/Amsterdam";
  if (word === undefined) throw usage(`Which day of the week? ${example}`);
  const i = DAYS.indexOf(word.toLowerCase().slice(0, 3) as (typeof DAYS)[number]);
  const full = DAY_NAMES[i]?.toLowerCase();
  const w = word.toLowerCase();
  if (i < 0 || !(w.length === 3 || w === full))
    throw usage(`"${word}" is not a day of the week: use mon, tue, wed, thu, fri, sat or sun. ${example}`);
  return i;
}

function cronFor(pattern: string, timezone?: string): Cron {
  return new Cron(pattern, { paused: true, mode: "5-part", ...(timezone ? { timezone } : {}) });
}

function parseCron(expr: string): When {
  const pattern = expr.trim().replace(/\s+/g, " ");
  const example = 'Try: /edge schedule dns 5678 "30 8 * * 1-5" Europe/Amsterdam';
  if (pattern.split(" ").length !== 5)
    throw usage(
      `A cron expression has five fields (minute hour day month weekday); "${pattern}" has ${pattern.split(" ").length}. ${example}`,
    );
  let cron: Cron;
  try {
    cron = cronFor(pattern, "UTC");
  } catch (err) {
    const detail = err instanceof Error ? err.message.replace(/^CronPattern: /, "") : "";
    throw usage(`"${pattern}" is not a valid cron expression${detail ? ` (${detail})` : ""}. ${example}`);
  }
  // Look further than a year ahead so "29 February" counts as possible.
  if (cron.nextRun(new Date(Date.UTC(2024, 0, 1))) === null)
    throw usage(`"${pattern}" never happens (no such date or time). ${example}`);
  return { pattern, spec: pattern, label: `cron \`${pattern}\`` };
}

/**
 * Read `<when>` from the command's words. Returns the schedule and how many words it used.
 * `daily 09:00` → `0 9 * * *`, `weekdays 08:30` → `30 8 * * 1-5`, `weekly mon 09:00` → `0 9 * * 1`,
 * a quoted five-field cron expression as given (validated by croner).
 */
export function parseWhenWords(words: readonly string[]): { when: When; used: number } {
  const first = words[0];
  if (first === undefined) throw usage(`When should it run? Use ${FORMS}. ${TRY}`);
  const form = first.toLowerCase();
  if (form === "daily" || form === "weekdays") {
    const t = parseTime(words[1], form);
    const dow = form === "daily" ? "*" : "1-5";
    return {
      when: {
        pattern: `${t.m} ${t.h} * * ${dow}`,
        spec: `${form} ${t.text}`,
        label: form === "daily" ? `daily at ${t.text}` : `weekdays at ${t.text}`,
      },
      used: 2,
    };
  }
  if (form === "weekly") {
    const day = parseDay(words[1]);
    const t = parseTime(words[2], `weekly ${DAYS[day]}`);
    return {
      when: {
        pattern: `${t.m} ${t.h} * * ${day}`,
        spec: `weekly ${DAYS[day]} ${t.text}`,
        label: `every ${DAY_NAMES[day]} at ${t.text}`,
      },
      used: 3,
    };
  }
  if (/\s/.test(first.trim())) return { when: parseCron(first), used: 1 };
  if (/^[\d*]/.test(first) && words.length >= 5)
    throw usage(
      `Put a cron expression in quotes so it stays one argument. Try: /edge schedule dns 5678 "${words.slice(0, 5).join(" ")}" Europe/Amsterdam`,
    );
  throw usage(`"${first}" is not a schedule I know: use ${FORMS}. ${TRY}`);
}

/** The stored spec back into a schedule (the spec is always one that parseWhenWords produced). */
export function parseSpec(spec: string): When {
  const words = spec.trim().split(/\s+/);
  if (["daily", "weekdays", "weekly"].includes(words[0] ?? "")) return parseWhenWords(words).when;
  return parseCron(spec);
}

/**
 * US abbreviations as people mean them: the zone with daylight saving. Left to Intl, `est` is a fixed
 * UTC-5 (America/Panama) and `mst` a fixed UTC-7, while `pst` already follows Los Angeles.
 */
const ZONE_PEOPLE_MEAN: Readonly<Record<string, string>> = {
  est: "America/New_York",
  edt: "America/New_York",
  et: "America/New_York",
  cst: "America/Chicago",
  cdt: "America/Chicago",
  ct: "America/Chicago",
  mst: "America/Denver",
  mdt: "America/Denver",
  mt: "America/Denver",
  pst: "America/Los_Angeles",
  pdt: "America/Los_Angeles",
  pt: "America/Los_Angeles",
};

/**
 * An IANA time zone name in its canonical spelling (`europe/amsterdam` → `Europe/Amsterdam`), or a
 * sentence with an example. Offsets such as `+01:00` are refused: they do not follow daylight saving.
 */
export function parseTimezone(name: string): string {
  const meant = ZONE_PEOPLE_MEAN[name.toLowerCase()];
  if (meant) return meant;
  const refuse = () =>
    usage(
      `"${name}" is not a time zone I know: use an IANA name such as Europe/Amsterdam, America/New_York or UTC. ${TRY}`,
    );
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/.test(name)) throw refuse();
  try {
    return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    throw refuse();
  }
}

/** Whether Slack's `users.info` tz can be used as is. */
export function isKnownTimezone(name: string | undefined): name is string {
  if (!name) return false;
  try {
    parseTimezone(name);
    return true;
  } catch {
    return false;
  }
}

/** The next `n` occurrences strictly after `after` (epoch ms), in the schedule's zone. */
export function nextRuns(pattern: string, timezone: string, after: number, n: number): number[] {
  return cronFor(pattern, timezone)
    .nextRuns(n, new Date(after))
    .map((d) => d.getTime());
}

/** The next occurrence strictly after `after`; throws when the pattern never runs again. */
export function nextRunAfter(s: Pick<Schedule, "spec" | "timezone">, after: number): number {
  const [next] = nextRuns(parseSpec(s.spec).pattern, s.timezone, after, 1);
  if (next === undefined) throw new UserError("usage", `The schedule "${s.spec}" never runs again.`);
  return next;
}

/** The schedule's period: the gap between its next two occurrences after `at`. */
export function periodMs(s: Pick<Schedule, "spec" | "timezone">, at: number): number {
  const [a, b] = nextRuns(parseSpec(s.spec).pattern, s.timezone, at, 2);
  return a !== undefined && b !== undefined ? b - a : 24 * 3600_000;
}

/** The shortest gap among the next few occurrences (a cron like "0,5 9 * * *" is short only once a day). */
function shortestGap(runs: number[]): number {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 1; i < runs.length; i++) min = Math.min(min, runs[i]! - runs[i - 1]!);
  return min;
}

/** `Mon 30 Mar 2026, 09:00 CEST`: a time as people in that zone read it. */
export function formatInZone(ms: number, timezone: string): string {
  const parts = new Intl.DateTimeFormat("en-GB", {
    timeZone: timezone,
    weekday: "short",
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  }).formatToParts(new Date(ms));
  const get = (t: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === t)?.value ?? "";
  return `${get("weekday")} ${get("day")} ${get("month")} ${get("year")}, ${get("hour")}:${get("minute")} ${zoneAbbreviation(ms, timezone, get("timeZoneName"))}`;
}

/** en-GB names European zones (CET, BST), en-US American ones (EDT, PST); else the GMT offset. */
function zoneAbbreviation(ms: number, timezone: string, british: string): string {
  if (!british.startsWith("GMT") || british === "GMT") return british;
  const american = new Intl.DateTimeFormat("en-US", { timeZone: timezone, timeZoneName: "short" })
    .formatToParts(new Date(ms))
    .find((p) => p.type === "timeZoneName")?.value;
  return american && !american.startsWith("GMT") ? american : british;
}

// ---- store-backed operations ------------------------------------------------------------------------

const ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

/** Short enough to type in `/edge schedule remove <id>`. */
export function newScheduleId(): string {
  return newShortId("s");
}

/** A short id people can type: `prefix` and 7 letters or digits. */
export function newShortId(prefix: string): string {
  let id = prefix;
  for (let i = 0; i < 7; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

export interface CreateScheduleInput {
  teamId: string;
  channelId: string;
  userId: string;
  zoneId: number;
  when: When;
  timezone: string;
}

export interface CreatedSchedule {
  schedule: Schedule;
  /** The next three occurrences after now. */
  upcoming: number[];
  /** The same schedule already existed in this channel; nothing new was stored. */
  existed: boolean;
}

function scheduleLimitReached(scope: "channel" | "workspace", limit: number): UserError {
  return scope === "channel"
    ? usage(
        `This channel already has ${limit} schedules, the most allowed here. Remove one first, e.g. /edge schedule remove s7k2m9qa (/edge schedule list shows their ids), or schedule this summary in another channel.`,
      )
    : usage(
        `This workspace already has ${limit} schedules, the most allowed. Remove one first, e.g. /edge schedule remove s7k2m9qa (the app's Home tab lists them all), or ask whoever runs edgeops to raise SCHEDULES_PER_WORKSPACE.`,
      );
}

/**
 * Create a DNS summary schedule (idempotent per channel, zone, time and zone), within the channel's and
 * the workspace's limits (config.schedules); audit-logged.
 */
export async function createSchedule(deps: Deps, input: CreateScheduleInput): Promise<CreatedSchedule> {
  const now = deps.clock.now();
  const upcoming = nextRuns(input.when.pattern, input.timezone, now, 6);
  const first = upcoming[0];
  if (first === undefined)
    throw usage(`"${input.when.spec}" never happens again in ${input.timezone}. ${TRY}`);
  if (shortestGap(upcoming) < MIN_PERIOD_MS)
    throw usage(
      `That would post more often than every ${MIN_PERIOD_MS / 60_000} minutes; pick a calmer schedule. ${TRY}`,
    );
  const created = await deps.store.schedules.createIfRoom(
    {
      id: newScheduleId(),
      teamId: input.teamId,
      channelId: input.channelId,
      createdBy: input.userId,
      kind: "dns",
      target: String(input.zoneId),
      spec: input.when.spec,
      timezone: input.timezone,
      nextRunAt: first,
    },
    deps.config.schedules,
  );
  if (created.kind === "exists")
    return { schedule: created.schedule, upcoming: upcoming.slice(0, 3), existed: true };
  if (created.kind === "full") throw scheduleLimitReached(created.scope, created.limit);
  const { schedule } = created;
  await deps.store.audit.append({
    teamId: input.teamId,
    userId: input.userId,
    action: "schedule.create",
    target: `schedule:${schedule.id}`,
    outcome: "ok",
    details: {
      zoneId: input.zoneId,
      channelId: input.channelId,
      spec: input.when.spec,
      timezone: input.timezone,
    },
  });
  return { schedule, upcoming: upcoming.slice(0, 3), existed: false };
}

/** This channel's schedules, oldest first. */
export function listChannelSchedules(deps: Deps, teamId: string, channelId: string): Promise<Schedule[]> {
  return deps.store.schedules.list(teamId, channelId);
}

const notFound = (id: string) =>
  new UserError(
    "not_found",
    `There is no schedule "${id}" in this workspace. /edge schedule list shows this channel's schedules and their ids.`,
  );

/** A schedule of this workspace; a schedule of another workspace is "not found". */
export async function getTeamSchedule(deps: Deps, teamId: string, id: string): Promise<Schedule> {
  const s = await deps.store.schedules.get(id);
  if (!s || s.teamId !== teamId) throw notFound(id);
  return s;
}

export type ScheduleAction = "remove" | "run";

export interface ScheduleActionInput {
  teamId: string;
  userId: string;
  id: string;
  /** Whether the user is a workspace admin; asked only when they are not the schedule's creator. */
  isAdmin: () => Promise<boolean>;
}

/**
 * The schedule, when this user may remove or run it: its creator or a workspace admin. A refusal is
 * written to the audit log and thrown as a sentence.
 */
export async function scheduleForAction(
  deps: Deps,
  action: ScheduleAction,
  input: ScheduleActionInput,
): Promise<Schedule> {
  const s = await getTeamSchedule(deps, input.teamId, input.id);
  return requireCreatorOrAdmin(deps, input, s, "schedule", action);
}

/** Remove a schedule of this workspace: its creator or an admin; audit-logged. */
export async function removeSchedule(deps: Deps, input: ScheduleActionInput): Promise<Schedule> {
  const { teamId, userId, id } = input;
  const s = await scheduleForAction(deps, "remove", input);
  if (!(await deps.store.schedules.remove(teamId, id))) throw notFound(id);
  await deps.store.audit.append({
    teamId,
    userId,
    action: "schedule.remove",
    target: `schedule:${id}`,
    outcome: "ok",
    details: { zoneId: Number(s.target), channelId: s.channelId, spec: s.spec, timezone: s.timezone },
  });
  return s;
}
