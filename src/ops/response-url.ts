import type { Logger } from "../log.js";

/** The response_url of a slash command or an interaction (a modal's first one), if the payload has one. */
export function responseUrlOf(body: unknown): string | undefined {
  if (!body || typeof body !== "object") return undefined;
  const b = body as { response_url?: unknown; response_urls?: { response_url?: unknown }[] };
  if (typeof b.response_url === "string") return b.response_url;
  const first = Array.isArray(b.response_urls) ? b.response_urls[0]?.response_url : undefined;
  return typeof first === "string" ? first : undefined;
}

/**
 * Posts one ephemeral sentence to a response_url. Used where nothing else can answer the user; a failure
 * is logged as `what` and never thrown.
 */
export async function postEphemeral(
  post: (
    url: string,
    init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
  ) => Promise<{ ok: boolean; status: number }>,
  url: string,
  text: string,
  logger: Logger,
  what: string,
): Promise<void> {
  try {
    const res = await post(url, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ response_type: "ephemeral", replace_original: false, text }),
      signal: AbortSignal.timeout(3000),
    });
    if (!res.ok) logger.warn({ status: res.status }, `response_url refused ${what}`);
  } catch (err) {
    logger.warn({ err }, `could not post ${what} to response_url`);
  }
}
