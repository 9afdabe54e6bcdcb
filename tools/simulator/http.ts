import type { Adversary } from "./adversary.js";
import type { SimulatorState } from "./seed.js";

/** What a handler answers; the server serialises it. `body: undefined` means an empty body. */
export interface SimResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface HandlerContext {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Captured groups of the route pattern, in order. */
  params: string[];
  /** Parsed JSON body, raw string when not JSON, undefined when empty. */
  body: unknown;
  state: SimulatorState;
  now: number;
  scanDurationMs: number;
  /** Set where each key keeps its own bot categories (SimulatorOptions.botCategoriesPerKey). */
  accessKey?: string;
  /** The readings chosen where the documents are silent (friendly unless a seed or pin is set). */
  adversary: Adversary;
}

export type Handler = (ctx: HandlerContext) => SimResponse;

/** How an endpoint answers a missing or wrong AccessKey (differs per endpoint in the specs). */
export type UnauthorizedStyle = "problem" | "bare" | "empty";

export interface Route {
  method: string;
  pattern: RegExp;
  unauthorized: UnauthorizedStyle;
  handler: Handler;
}

export const json = (status: number, body: unknown): SimResponse => ({ status, body });
export const empty = (status: number): SimResponse => ({ status });

export function unauthorized(style: UnauthorizedStyle, path: string): SimResponse {
  switch (style) {
    case "problem":
      return json(401, {
        type: "https://tools.ietf.org/html/rfc9110#section-15.5.2",
        title: "Unauthorized",
        status: 401,
        detail: "The AccessKey header is missing or invalid.",
        instance: path,
      });
    case "bare":
      return json(401, { statusCode: 401 });
    case "empty":
      return empty(401);
  }
}

/** Parses a path segment as a non-negative safe integer, or undefined. */
export function intParam(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * ASP.NET problem details, the Shield API's documented 400/401 body on newer endpoints and what its framework answers
 * for an unmatched id; `errors` is the framework's validation dictionary (field -> messages).
 */
export function problem(
  status: number,
  detail: string,
  instance: string,
  errors?: Record<string, string[]>,
): SimResponse {
  const titles: Record<number, string> = {
    400: "One or more validation errors occurred.",
    404: "Not Found",
  };
  const sections: Record<number, string> = { 400: "15.5.1", 404: "15.5.5" };
  return json(status, {
    type: `https://tools.ietf.org/html/rfc9110#section-${sections[status] ?? "15.6.1"}`,
    title: titles[status] ?? "Error",
    status,
    detail,
    instance,
    ...(errors === undefined ? {} : { errors }),
  });
}
