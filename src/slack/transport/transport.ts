import { type Config, slackCredentialsSet } from "../../config.js";
import { TransportError } from "../../errors.js";

/** Which way Slack reaches the app, decided once from the configuration. */
export type Transport =
  | { kind: "socket"; appToken: string; auth: SlackAuth }
  | { kind: "http"; signingSecret: string; auth: SlackAuth }
  | { kind: "console" };

export type SlackAuth =
  | { kind: "single"; botToken: string }
  | { kind: "oauth"; clientId: string; clientSecret: string; stateSecret: string };

export const CONNECT_HINT =
  "Set SLACK_APP_TOKEN and SLACK_BOT_TOKEN for Socket Mode, or SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN for HTTP " +
  "(SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and SLACK_STATE_SECRET instead of SLACK_BOT_TOKEN for OAuth installs).";

/**
 * Socket Mode when SLACK_APP_TOKEN is set, HTTP when SLACK_SIGNING_SECRET is; either needs a bot token
 * or the three OAuth variables. No Slack variables at all: the local console (not in production).
 */
export function selectTransport(config: Config): Transport {
  const s = config.slack;
  const oauthVars = {
    SLACK_CLIENT_ID: s.clientId,
    SLACK_CLIENT_SECRET: s.clientSecret,
    SLACK_STATE_SECRET: s.stateSecret,
  };
  const anyOauth = Object.values(oauthVars).some(Boolean);
  const anySlack = slackCredentialsSet(config).length > 0;

  if (!anySlack) {
    if (config.production) {
      throw new TransportError(
        `No Slack credentials are set, and NODE_ENV=production has no local console. ${CONNECT_HINT}`,
      );
    }
    return { kind: "console" };
  }

  let auth: SlackAuth;
  if (anyOauth) {
    const missing = Object.entries(oauthVars)
      .filter(([, v]) => !v)
      .map(([k]) => k);
    if (missing.length > 0)
      throw new TransportError(`OAuth install needs ${missing.join(", ")} as well. ${CONNECT_HINT}`);
    auth = {
      kind: "oauth",
      clientId: s.clientId!,
      clientSecret: s.clientSecret!,
      stateSecret: s.stateSecret!,
    };
  } else if (s.botToken) {
    auth = { kind: "single", botToken: s.botToken };
  } else {
    throw new TransportError(`SLACK_BOT_TOKEN is missing. ${CONNECT_HINT}`);
  }

  if (s.appToken) {
    if (!s.appToken.startsWith("xapp-"))
      throw new TransportError("SLACK_APP_TOKEN must be an app-level token starting with xapp-.");
    return { kind: "socket", appToken: s.appToken, auth };
  }
  if (s.signingSecret) return { kind: "http", signingSecret: s.signingSecret, auth };
  throw new TransportError(
    `SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode) is missing. ${CONNECT_HINT}`,
  );
}
