/**
 * A small seeded JSON-schema data generator over the provider's OpenAPI documents (read in place):
 * answers as the documents allow them, for the contract tests. Beyond the schema's own `nullable`, it
 * answers null where a property refers to an object (.NET writes a null reference as `null`, and
 * Swashbuckle cannot mark a bare `$ref` nullable: see openapi.ts), and it writes the keys of maps keyed
 * by date (`…PastTwentyEightDays`, `…Chart`, the metrics series) as dates in one of the forms the
 * platform writes, since the documents do not give the form.
 */
import { docs, type Family, type Json, operationFor } from "./openapi.js";

export type { Family };

/** How a sample fills what the document leaves open. */
export type Mode = "random" | "nulls" | "absent" | "full" | "limits";

/** The forms a date key is written in (the documents give none): ISO, a culture's short form, compact, Unix. */
export const DATE_KEY_FORMS = [
  "iso-date",
  "iso-local",
  "iso-utc",
  "iso-offset",
  "iso-fraction",
  "en-us",
  "en-us-24h",
  "dotted",
  "compact",
  "unix-seconds",
  "unix-ms",
] as const;
export type DateKeyForm = (typeof DATE_KEY_FORMS)[number];

export function rng(seed: number) {
  let t = seed >>> 0;
  return () => {
    t += 0x6d2b79f5;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r ^= r + Math.imul(r ^ (r >>> 7), 61 | r);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

export interface GenerateOptions {
  /**
   * Answer null at the n-th distinct place (in the order met, array indices aside) where an object may be
   * null, and nowhere else by choice; arrays then have at least one item so every place is met.
   */
  nullAt?: number;
  /** Write every date key in this form (default: one form per map, chosen by the seed). */
  dateKeyForm?: DateKeyForm;
}

export interface Generated {
  answer: unknown;
  /** The places an object may be null (`data.browserFingerprint`, `data[].overview`), in the order met. */
  nullable: string[];
  /** The instants (Unix ms) the date keys written name. */
  dates: number[];
}

interface Ctx {
  family: Family;
  mode: Mode;
  rand: () => number;
  options: GenerateOptions;
  nullable: string[];
  dates: number[];
}

const schemas = (family: Family) => (docs[family].components as { schemas: Record<string, Json> }).schemas;

function resolve(family: Family, node: Json): Json {
  const ref = node.$ref;
  if (typeof ref !== "string") return node;
  const name = ref.slice("#/components/schemas/".length);
  const target = schemas(family)[name];
  if (!target) throw new Error(`no schema ${name}`);
  return target;
}

const isObject = (s: Json) => s.type === "object" || (s.type === undefined && s.properties !== undefined);

/** Whether the node is an object the answer may carry as null: nullable, or a property's bare `$ref`. */
function objectMayBeNull(family: Family, node: Json, isProperty: boolean): boolean {
  const list = (node.allOf ?? node.oneOf ?? node.anyOf) as Json[] | undefined;
  if (list?.[0]) return node.nullable === true && isObject(resolve(family, list[0]));
  if (typeof node.$ref === "string") return isProperty && isObject(resolve(family, node));
  return node.nullable === true && isObject(node);
}

/** A map whose keys are dates: the 28-day overviews and the charts (one entry per day or bucket). */
const dateKeyed = (name: string) => /PastTwentyEightDays$|Chart$/.test(name);

export function generate(
  family: Family,
  schema: Json,
  mode: Mode,
  rand: () => number,
  pick = 0,
  options: GenerateOptions = {},
): Generated {
  const ctx: Ctx = { family, mode, rand, options, nullable: [], dates: [] };
  const answer = gen(ctx, schema, { path: "", depth: 0, pick, isProperty: false });
  return { answer, nullable: ctx.nullable, dates: ctx.dates };
}

/** One answer (see generate). */
export function sample(
  family: Family,
  schema: Json,
  mode: Mode,
  rand: () => number,
  _depth = 0,
  pick = 0,
  options: GenerateOptions = {},
): unknown {
  return generate(family, schema, mode, rand, pick, options).answer;
}

/**
 * For each place of the answer where an object may be null: an answer with everything present but that
 * one object null.
 */
export function everyNullObject(
  family: Family,
  schema: Json,
  seed: number,
): Array<{ place: string; answer: unknown }> {
  const out: Array<{ place: string; answer: unknown }> = [];
  for (let n = 0; ; n++) {
    const g = generate(family, schema, "full", rng(seed), seed, { nullAt: n });
    const place = g.nullable[n];
    if (place === undefined) return out;
    out.push({ place, answer: g.answer });
  }
}

interface Where {
  path: string;
  depth: number;
  pick: number;
  isProperty: boolean;
  /** The property name of a map, for date keys. */
  name?: string;
}

function gen(ctx: Ctx, node: Json, at: Where): unknown {
  const { family, mode, rand } = ctx;
  const { depth, pick } = at;
  const mayBeNullObject = objectMayBeNull(family, node, at.isProperty);
  if (mayBeNullObject) {
    const place = at.path.replace(/\[\d+\]/g, "[]");
    let n = ctx.nullable.indexOf(place);
    if (n < 0) n = ctx.nullable.push(place) - 1;
    const chosen = ctx.options.nullAt;
    if (chosen !== undefined ? chosen === n && !/\[[1-9]\d*\]/.test(at.path) : pickNull(ctx, depth))
      return null;
  }
  if (typeof node.$ref === "string")
    return gen(ctx, resolve(family, node), { ...at, depth: depth + 1, isProperty: false });
  for (const k of ["allOf", "oneOf", "anyOf"] as const) {
    const list = node[k] as Json[] | undefined;
    if (list?.[0]) {
      if (
        node.nullable === true &&
        !mayBeNullObject &&
        ctx.options.nullAt === undefined &&
        pickNull(ctx, depth)
      )
        return null;
      const one = list[Math.floor(rand() * list.length)] ?? list[0];
      return gen(ctx, one, { ...at, isProperty: false });
    }
  }
  const nullable = node.nullable === true;
  if (nullable && !isObject(node) && ctx.options.nullAt === undefined && pickNull(ctx, depth)) return null;
  const enumValues = node.enum as unknown[] | undefined;
  if (enumValues && enumValues.length > 0)
    return enumValues[(pick + Math.floor(rand() * 1000)) % enumValues.length];
  const limits = mode === "limits";
  switch (node.type as string | undefined) {
    case "integer": {
      const int32 = node.format === "int32";
      const min = typeof node.minimum === "number" ? node.minimum : int32 ? -(2 ** 31) : -(2 ** 53) + 1;
      const max = typeof node.maximum === "number" ? node.maximum : int32 ? 2 ** 31 - 1 : 2 ** 53 - 1;
      if (limits) return rand() < 0.5 ? min : max;
      return Math.floor(Math.max(min, 0) + rand() * Math.min(1000, max - Math.max(min, 0) + 1));
    }
    case "number":
      return limits ? Number.MAX_VALUE : rand() * 1000;
    case "boolean":
      return rand() < 0.5;
    case "string": {
      if (node.format === "date-time")
        return new Date(Date.UTC(2026, 0, 1) + Math.floor(rand() * 1e10)).toISOString();
      if (node.format === "uuid") return "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
      const maxLen = typeof node.maxLength === "number" ? node.maxLength : limits ? 5000 : 12;
      const minLen = typeof node.minLength === "number" ? node.minLength : 0;
      const len = limits
        ? rand() < 0.5
          ? minLen
          : maxLen
        : minLen + Math.floor(rand() * (maxLen - minLen + 1));
      // A short random run repeated: long strings at their limits stay cheap to make.
      const run = Array.from(
        { length: Math.min(len, 16) },
        () => "ab<&>*_`é/ 9"[Math.floor(rand() * 12)],
      ).join("");
      return run.repeat(Math.ceil(len / Math.max(run.length, 1))).slice(0, len);
    }
    case "array": {
      const least = ctx.options.nullAt !== undefined ? 1 : 0;
      const n = depth > 6 ? 0 : limits ? 3 : least + Math.floor(rand() * (4 - least));
      return Array.from({ length: n }, (_, i) =>
        gen(ctx, node.items as Json, {
          path: `${at.path}[${i}]`,
          depth: depth + 1,
          pick: pick + i,
          isProperty: false,
        }),
      );
    }
    default:
      return object(ctx, node, at);
  }
}

function pickNull(ctx: Ctx, depth: number): boolean {
  return ctx.mode === "nulls" || (ctx.mode === "random" && ctx.rand() < 0.2) || depth > 8;
}

function object(ctx: Ctx, node: Json, at: Where): Json {
  const { mode, rand } = ctx;
  const props = (node.properties as Record<string, Json> | undefined) ?? {};
  const required = new Set((node.required as string[] | undefined) ?? []);
  const out: Json = {};
  for (const [name, prop] of Object.entries(props)) {
    const skip = !required.has(name) && (mode === "absent" || (mode === "random" && rand() < 0.25));
    if (!skip)
      out[name] = gen(ctx, prop, {
        path: at.path === "" ? name : `${at.path}.${name}`,
        depth: at.depth + 1,
        pick: at.pick,
        isProperty: true,
        name,
      });
  }
  const extra = node.additionalProperties;
  if (!extra || typeof extra !== "object" || at.depth > 6) return out;
  const values = extra as Json;
  const n = mode === "limits" ? 3 : Math.floor(rand() * 3);
  const keys = keysFor(ctx, at.name ?? "", n);
  // The metrics series (`{name: {time: count}}` or `{time: {name: count}}`): the documents do not say which.
  const series = at.name === "metrics" && (resolve(ctx.family, values).additionalProperties ?? false);
  const timeOuter = rand() < 0.5;
  const times = series ? seriesKeys(ctx, n + 1) : [];
  keys.forEach((key, i) => {
    const where = { path: `${at.path}{}`, depth: at.depth + 1, pick: at.pick + i, isProperty: false };
    if (!series) out[key] = gen(ctx, values, where);
    else if (timeOuter) out[times[i] ?? key] = counters(ctx, ["blocked", "logged", "challenged"]);
    else out[COUNTER_NAMES[i] ?? key] = counters(ctx, times);
  });
  return out;
}

const COUNTER_NAMES = ["blocked", "logged", "challenged", "verified"];

function counters(ctx: Ctx, keys: readonly string[]): Json {
  return Object.fromEntries(keys.map((k) => [k, Math.floor(ctx.rand() * 1000)]));
}

function keysFor(ctx: Ctx, name: string, n: number): string[] {
  if (dateKeyed(name)) {
    const form = ctx.options.dateKeyForm ?? DATE_KEY_FORMS[Math.floor(ctx.rand() * DATE_KEY_FORMS.length)];
    const first = Date.UTC(2026, 0, 1) + Math.floor(ctx.rand() * 330) * 86_400_000;
    return Array.from({ length: n }, (_, i) =>
      dateKey(ctx, first + i * 86_400_000, form ?? "iso-date", false),
    );
  }
  return Array.from({ length: n }, (_, i) => `k${i}-${Math.floor(ctx.rand() * 1e6)}`);
}

/** Bucket starts, two minutes apart, written in one form. */
function seriesKeys(ctx: Ctx, n: number): string[] {
  const form = ctx.options.dateKeyForm ?? DATE_KEY_FORMS[Math.floor(ctx.rand() * DATE_KEY_FORMS.length)];
  const first = Date.UTC(2026, 0, 1) + Math.floor(ctx.rand() * 330 * 720) * 120_000;
  return Array.from({ length: n }, (_, i) => dateKey(ctx, first + i * 120_000, form ?? "iso-utc", true));
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** `t` (UTC) as a key in `form`; a day (`time` false) leaves out the time where the form allows. */
function dateKey(ctx: Ctx, t: number, form: DateKeyForm, time: boolean): string {
  ctx.dates.push(t);
  const d = new Date(t);
  const [y, mo, day, h, mi, s] = [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCHours(),
    pad(d.getUTCMinutes()),
    pad(d.getUTCSeconds()),
  ];
  const iso = d.toISOString();
  switch (form) {
    case "iso-date":
      return time ? iso.slice(0, 16) : iso.slice(0, 10);
    case "iso-local":
      return iso.slice(0, 19);
    case "iso-utc":
      return iso.replace(/\.\d{3}Z$/, "Z");
    case "iso-offset": {
      const local = new Date(t + 2 * 3_600_000).toISOString().slice(0, 19);
      return `${local}+02:00`;
    }
    case "iso-fraction":
      return `${iso.slice(0, 19)}.0000000`;
    case "en-us":
      return time
        ? `${mo}/${day}/${y} ${h % 12 === 0 ? 12 : h % 12}:${mi}:${s} ${h < 12 ? "AM" : "PM"}`
        : `${mo}/${day}/${y}`;
    case "en-us-24h":
      return `${pad(mo)}/${pad(day)}/${y} ${pad(h)}:${mi}:${s}`;
    case "dotted":
      return time ? `${day}.${mo}.${y} ${pad(h)}:${mi}:${s}` : `${pad(day)}.${pad(mo)}.${y}`;
    case "compact":
      return `${y}${pad(mo)}${pad(day)}${pad(h)}${mi}${s}`;
    case "unix-seconds":
      return String(t / 1000);
    case "unix-ms":
      return String(t);
  }
}

type Responses = Record<string, { content?: Record<string, { schema?: Json }> }>;

function operationDoc(family: Family, method: string, path: string): Json {
  const op = (docs[family].paths as Record<string, Record<string, Json>>)[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path}: not documented`);
  return op;
}

/** The documented 200 JSON answer's schema. */
export function documented(family: Family, method: string, path: string): Json {
  const schema = operationDoc(family, method, path).responses as Responses | undefined;
  const json = schema?.["200"]?.content?.["application/json"]?.schema;
  if (!json) throw new Error(`${method} ${path}: no documented 200 JSON answer`);
  return json;
}

/** The documented operation a row of the operation table sends (`/shield/metrics/rate-limit/{rateLimitId}`). */
export function documentedOperation(method: string, path: string) {
  const op = operationFor(method, path);
  if (!op) throw new Error(`${method} ${path}: not documented`);
  const responses = (op.doc.responses as Responses | undefined) ?? {};
  const statuses = Object.entries(responses)
    .filter(([status]) => /^\d{3}$/.test(status))
    .map(([status, r]) => ({ status: Number(status), schema: r.content?.["application/json"]?.schema }));
  return { family: op.family, template: op.template, statuses };
}
