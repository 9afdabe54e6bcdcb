import { z } from "zod";
import {
  type BotCategoryAction,
  type DdosSensitivity,
  EVENT_LOG_DIMENSIONS,
  METRICS_RESOLUTION,
  type WafExecutionMode,
  type WafReviewAction,
} from "./shield.js";

/**
 * What the client's methods accept, checked before any request: each check's first message is the
 * invalid_argument sentence the caller shows, so it says what was expected and what was given.
 */

/** The largest id, page number or page index a parameter the document types int32 can carry. */
const MAX_INT32 = 2_147_483_647;

/** Largest list content edgeops sends (the plan's entry limit is far below this). */
const MAX_ACCESS_LIST_CONTENT = 1_000_000;

function show(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return String(v);
  return typeof v;
}

/** A value `ok` accepts, else the sentence `refusal` followed by what was given. */
const checked = <T>(ok: (v: unknown) => boolean, refusal: string) =>
  z.custom<T>(ok, { error: (iss) => `${refusal} (got ${show(iss.input)}).` });

/** `T`: the numbers from min to max as a type (an enum's values), where the caller should name one. */
export function whole<T extends number = number>(what: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  const range = max >= Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
  return checked<T>(
    (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max,
    `The ${what} must be a whole number ${range}`,
  );
}
export const id = (what: string) => whole(what, 1);
/** An id sent where the document's path parameter is int32 (shield zones, rate limits). */
export const int32Id = (what: string) => whole(what, 1, MAX_INT32);
const time = (what: string) =>
  checked<number>(
    (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0,
    `The ${what} must be a Unix time in milliseconds`,
  );
const text = (refusal: string, ok: (s: string) => boolean) =>
  checked<string>((v) => typeof v === "string" && ok(v), refusal);
const flag = (refusal: string) => checked<boolean>((v) => typeof v === "boolean", refusal);

/** An object argument: its fields checked, unknown ones dropped. */
const record = <S extends z.core.$ZodLooseShape>(what: string, shape: S) =>
  z.object(shape, { error: (iss) => `The ${what} must be an object (got ${show(iss.input)}).` });
/** An options object (absent: all defaults). */
const options = <S extends z.core.$ZodLooseShape>(what: string, shape: S) =>
  record(what, shape).prefault({} as never);

export const listContent = text(
  "The list content must be a text",
  (s) => s.length <= MAX_ACCESS_LIST_CONTENT,
);
export const appId = text("The application id must be letters, digits, - or _", (s) =>
  /^[\w-]{1,100}$/.test(s),
);
export const cacheTag = text("A cache tag is up to 200 letters, digits and . : / - _", (s) =>
  /^[\w.:/-]{1,200}$/.test(s),
);
export const purgeUrl = text(
  "The URL to purge must start with https:// or http://",
  (s) => s.length <= 2000 && webUrl(s) !== undefined,
);
/** A triggered rule's id as the AI recommendation path takes it (trimmed). */
export const recommendationRuleId = text(
  "The WAF rule id must be a non-empty text",
  (s) => s.trim() !== "" && s.length <= 256,
).transform((s) => s.trim());
export const reviewRuleId = text("The WAF rule id must be letters, digits, . : - or _", (s) =>
  /^[\w.:-]{1,100}$/.test(s),
);
export const botCategory = whole("bot category (255 System cannot be changed)", 0, 7);
export const botCategoryAction = whole<BotCategoryAction>(
  "bot category action (0 None, 1 Block, 2 Allow)",
  0,
  2,
);
export const wafReviewAction = whole<WafReviewAction>(
  "review action (0 Ignore, 1 Log only, 2 Disable rule)",
  0,
  2,
);

/**
 * A page of a list: `page` >= 1 (the Core API's page 0, "everything as one array", is never asked for),
 * int32 as every list's document types it.
 */
const pages = (minPerPage: number, perPage: number) =>
  options("page options", {
    page: whole("page number", 1, MAX_INT32).default(1),
    perPage: whole("page size", minPerPage, 1000).default(perPage),
  });
export const shieldZonePages = pages(1, 10);
export const corePages = pages(5, 1000);

/** `cursor`: the `nextCursor` of the previous page. */
export const listAppsParams = options("listApps options", {
  limit: whole("page size", 1, 1000).default(20),
  cursor: text(
    "The app list cursor must be a non-empty string",
    (s) => s.trim() !== "" && s.length <= 4096,
  ).optional(),
});

/** `type`: AccessListType (0 IP, 1 CIDR, 2 ASN, 3 Country, 4 Organization, 5 JA4). */
export const newAccessList = record("new access list", {
  name: text(
    "The list name must be a text of 1 to 100 characters",
    (s) => s.trim() !== "" && s.length <= 100,
  ),
  type: whole("access list type", 0, 5),
  content: listContent,
});

/** `action`: AccessListAction (0 None, 1 Allow, 2 Block, 3 Challenge, 4 Log, 5 Bypass). */
export const accessListConfig = record("access list configuration", {
  isEnabled: flag("isEnabled must be true or false"),
  action: whole("access list action", 0, 5),
});

const filterSchema = z.object({
  field: z.enum(EVENT_LOG_DIMENSIONS),
  op: z.enum(["eq", "in", "contains", "cidr", "wildcard"]),
  value: z.array(z.string()),
});
export const eventLogSearch = record("event-log search", {
  from: time("search start"),
  to: time("search end"),
  query: text("The search text must be a text of at most 500 characters", (s) => s.length <= 500).optional(),
  groupBy: checked<(typeof EVENT_LOG_DIMENSIONS)[number][]>(
    (v) => Array.isArray(v) && v.every((d) => (EVENT_LOG_DIMENSIONS as readonly unknown[]).includes(d)),
    `Event logs group by ${EVENT_LOG_DIMENSIONS.join(", ")}`,
  ).optional(),
  filters: checked<z.output<typeof filterSchema>[]>(
    (v) => z.array(filterSchema).safeParse(v).success,
    "An event-log filter needs a known field, an operator and text values",
  ).optional(),
  buckets: whole("number of sparkline buckets", 0, 500).optional(),
  page: whole("page index", 0, MAX_INT32).optional(),
  pageSize: whole("page size", 1, 500).optional(),
}).refine((s) => s.to > s.from, "The event-log search must end after it starts.");

/** From and to: Unix ms, sent as StartDate and EndDate; resolution: MetricsOverviewResolution. */
export const metricsRange = options("metrics options", {
  from: time("start"),
  to: time("end"),
  resolution: whole("metrics resolution (0 Auto … 6 Monthly)", 0, 6).default(METRICS_RESOLUTION.auto),
}).refine((p) => p.to > p.from, "The metrics range must end after it starts.");

const UPDATE_FIELDS =
  "A shield zone update names dDoSShieldSensitivity, wafExecutionMode, learningMode or learningModeUntil.";
export const shieldZoneUpdate = z
  .strictObject(
    {
      dDoSShieldSensitivity: whole<DdosSensitivity>(
        "DDoS sensitivity (0 Off, 1 Low, 2 Medium, 3 High, 4 Challenge)",
        0,
        4,
      ),
      wafExecutionMode: whole<WafExecutionMode>("WAF execution mode (0 Log, 1 Block)", 0, 1),
      learningMode: flag("Learning mode is on or off"),
      learningModeUntil: checked<string>(
        (v) => typeof v === "string" && Number.isFinite(Date.parse(v)),
        "The end of learning mode must be a date and time",
      ),
    },
    { error: UPDATE_FIELDS },
  )
  .partial()
  .refine((u) => Object.values(u).some((v) => v !== undefined), UPDATE_FIELDS);

export function webUrl(s: string): URL | undefined {
  try {
    const u = new URL(s);
    return u.protocol === "https:" || u.protocol === "http:" ? u : undefined;
  } catch {
    return undefined;
  }
}
