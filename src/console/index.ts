import type { RunningBot, StartOptions } from "../bot.js";
import { CONNECT_HINT } from "../slack/transport.js";

/**
 * The local console: the whole bot in a terminal, with no Slack workspace and no API key.
 * (Issue 7 builds it; until then this says how to connect to Slack.)
 */
export async function startConsoleBot(options: StartOptions): Promise<RunningBot> {
  void options;
  throw new Error(`The local console is not built yet. ${CONNECT_HINT}`);
}
