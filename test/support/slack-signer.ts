import { createHmac } from "node:crypto";

/** Headers exactly as Slack signs a request: v0=HMAC-SHA256(secret, `v0:${timestamp}:${body}`). */
export function slackSignatureHeaders(
  body: string,
  signingSecret: string,
  timestampSec = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const signature = `v0=${createHmac("sha256", signingSecret).update(`v0:${timestampSec}:${body}`).digest("hex")}`;
  return {
    "x-slack-request-timestamp": String(timestampSec),
    "x-slack-signature": signature,
  };
}

export interface SlashCommandFields {
  text: string;
  teamId?: string;
  userId?: string;
  userName?: string;
  channelId?: string;
  channelName?: string;
  responseUrl: string;
  triggerId?: string;
  command?: string;
}

/** The form body Slack posts for a slash command. */
export function slashCommandBody(f: SlashCommandFields): string {
  return new URLSearchParams({
    token: "legacy-verification-token",
    team_id: f.teamId ?? "T0001",
    team_domain: "acme",
    channel_id: f.channelId ?? "C0001",
    channel_name: f.channelName ?? "incident-42",
    user_id: f.userId ?? "U0001",
    user_name: f.userName ?? "alice",
    command: f.command ?? "/edge",
    text: f.text,
    api_app_id: "A0001",
    is_enterprise_install: "false",
    response_url: f.responseUrl,
    trigger_id: f.triggerId ?? `trigger-${Math.random().toString(36).slice(2)}`,
  }).toString();
}

/** The form body Slack posts for interactivity (block_actions, view_submission, ...). */
export function interactionBody(payload: unknown): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

export interface SignedPostResult {
  status: number;
  body: string;
  durationMs: number;
  /** The answer's Retry-After header, when it has one. */
  retryAfter?: string;
}

/** POST a signed form body to the receiver. */
export async function postSigned(
  url: string,
  body: string,
  signingSecret: string,
  options: { timestampSec?: number; contentType?: string; signature?: string } = {},
): Promise<SignedPostResult> {
  const headers = slackSignatureHeaders(body, signingSecret, options.timestampSec);
  if (options.signature) headers["x-slack-signature"] = options.signature;
  const started = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": options.contentType ?? "application/x-www-form-urlencoded", ...headers },
    body,
  });
  const text = await res.text();
  const retryAfter = res.headers.get("retry-after");
  return {
    status: res.status,
    body: text,
    durationMs: performance.now() - started,
    ...(retryAfter === null ? {} : { retryAfter }),
  };
}
