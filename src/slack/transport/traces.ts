import type { AnyMiddlewareArgs, Middleware } from "@slack/bolt";
import type { FetchFunction } from "@slack/web-api";
import { inSpan, type SpanAttributes } from "../../ops/tracing.js";
import { RESPONSE_URL_METHOD, slackErrorLabel, slackMethodLabel } from "./slack-fetch.js";

/**
 * Where Slack's requests and edgeops' Slack calls meet the traces (src/ops/tracing.ts): a global Bolt
 * middleware that starts one trace per request (command, click, view submission, shortcut, options,
 * event, workflow step) around its listener, and a fetch that gives every Web API call and response_url
 * answer its span. Only ids and names go on a span: never a command's text, a message, a token or a
 * response_url (whose path is its secret).
 */

interface Body {
  type?: unknown;
  command?: unknown;
  team_id?: unknown;
  team?: { id?: unknown };
  actions?: { action_id?: unknown }[];
  view?: { callback_id?: unknown };
  callback_id?: unknown;
  action_id?: unknown;
  event?: { type?: unknown };
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The request's span name and attributes, from its kind and id alone. */
export function requestSpan(body: unknown): { name: string; attrs: SpanAttributes } {
  const b = (body ?? {}) as Body;
  const teamId = str(b.team_id) ?? str(b.team?.id);
  const command = str(b.command);
  if (command)
    return { name: `slack command ${command}`, attrs: { "slack.command": command, "slack.team.id": teamId } };
  const type = str(b.type) ?? "unknown";
  const id =
    type === "block_actions"
      ? str(b.actions?.[0]?.action_id)
      : type === "view_submission" || type === "view_closed"
        ? str(b.view?.callback_id)
        : type === "event_callback"
          ? str(b.event?.type)
          : (str(b.callback_id) ?? str(b.action_id));
  const label = type === "event_callback" ? "event" : type;
  return {
    name: id ? `slack ${label} ${id}` : `slack ${label}`,
    attrs: { "slack.request.type": type, "slack.request.id": id, "slack.team.id": teamId },
  };
}

/** First among global middleware: every request is a trace, its listeners (and their ack) inside it. */
export const traceSlackRequests: Middleware<AnyMiddlewareArgs> = (args) => {
  const { name, attrs } = requestSpan(args.body);
  return inSpan(name, attrs, () => inSpan("slack listener", undefined, () => args.next()), { root: true });
};

/** `base` with a span per Slack call: the Web API method (or "response_url"), HTTP status, Slack's error code. */
export function traceSlackFetch(base: FetchFunction, apiUrl: string | undefined): FetchFunction {
  const api = (apiUrl ?? "https://slack.com/api/").replace(/\/?$/, "/");
  const traced = (input: string | URL, init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input.href;
    const method = slackMethodLabel(url, api);
    return inSpan(
      `slack ${method}`,
      { "slack.method": method, "http.request.method": init?.method ?? "GET" },
      async (span) => {
        const res = await (base as unknown as typeof fetch)(input, init);
        span.setAttribute("http.response.status_code", res.status);
        if (span.isRecording() && method !== RESPONSE_URL_METHOD) {
          // Only while tracing: Slack's `ok: false` answers come with HTTP 200.
          const error = /"ok"\s*:\s*false[\s\S]*?"error"\s*:\s*"([a-z_]+)"/.exec(
            await res
              .clone()
              .text()
              .catch(() => ""),
          )?.[1];
          if (error) span.setAttribute("slack.error", slackErrorLabel(error));
        }
        return res;
      },
    );
  };
  return traced as unknown as FetchFunction;
}
