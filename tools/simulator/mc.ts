/** Magic Containers family (served under /mc): RFC 7807 ErrorDetails on 400/404/500, ProblemDetails on 401. */
import { type HandlerContext, json, type SimResponse } from "./http.js";
import { appStatusAt, stageAppStatus } from "./plan.js";

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

function errorDetails(status: number, title: string, detail: string, instance: string, field?: string) {
  return json(status, {
    title,
    status,
    detail,
    instance,
    errors: field === undefined ? null : [{ field, message: detail }],
    id: null,
  });
}

/** Opaque cursor: base64url of the next offset, like the real API's opaque strings. */
const encodeCursor = (offset: number): string => Buffer.from(`apps:${offset}`).toString("base64url");

function decodeCursor(cursor: string): number | undefined {
  const m = /^apps:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/** GET /mc/apps?limit&nextCursor -> { items, meta: { totalItems }, cursor } (cursor null on the last page). */
export function listApps(ctx: HandlerContext): SimResponse {
  const { limit: rawLimit, nextCursor } = ctx.query;
  let limit = DEFAULT_LIMIT;
  if (rawLimit !== undefined) {
    const n = /^-?\d+$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
      return errorDetails(
        400,
        "One or more validation errors occurred.",
        `The field limit must be between 1 and ${MAX_LIMIT}.`,
        ctx.path,
        "limit",
      );
    }
    limit = n;
  }
  let offset = 0;
  if (nextCursor !== undefined && nextCursor !== "") {
    const decoded = decodeCursor(nextCursor);
    if (decoded === undefined) {
      return errorDetails(
        400,
        "Invalid cursor.",
        "The nextCursor value is not valid.",
        ctx.path,
        "nextCursor",
      );
    }
    offset = decoded;
  }
  const apps = ctx.state.apps;
  const items = apps.slice(offset, offset + limit).map((a) => ({
    id: a.id,
    name: a.name,
    description: a.description,
    displayEndpoint: { ...a.displayEndpoint },
    status: appStatusAt(ctx.state, a, ctx.now),
  }));
  const next = offset + limit;
  return json(200, {
    items,
    meta: { totalItems: apps.length },
    cursor: next < apps.length ? encodeCursor(next) : null,
  });
}

/** How long a restarted app is Deploying (`progressing`) before it is active again. */
export const RESTART_MS = 30_000;
/** Statuses a restart does not change: a stopped or suspended app is not started by it. */
const RESTART_KEEPS = new Set(["inactive", "suspended"]);

/**
 * POST /mc/apps/{appId}/restart -> 200 (no body), 404 ErrorDetails for an unknown app. The app deploys for
 * RESTART_MS, then is active (a failing app is healed; a staged timeline's later steps still apply).
 */
export function restartApp(ctx: HandlerContext): SimResponse {
  const appId = decodeURIComponent(ctx.params[0] ?? "");
  const app = ctx.state.apps.find((a) => a.id === appId);
  if (app === undefined)
    return errorDetails(404, "Not Found", `Application ${appId} was not found.`, ctx.path);
  ctx.state.appRestarts.set(appId, [...(ctx.state.appRestarts.get(appId) ?? []), ctx.now]);
  if (!RESTART_KEEPS.has(appStatusAt(ctx.state, app, ctx.now).toLowerCase()))
    stageAppStatus(ctx.state, appId, [
      { at: ctx.now, status: "progressing" },
      { at: ctx.now + RESTART_MS, status: "active" },
    ]);
  return { status: 200 };
}
