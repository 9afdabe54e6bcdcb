/**
 * `npm start`: the local console when no Slack variables are set (outside production), otherwise the
 * bot exactly as `node dist/main.js` runs it. The console lives here, outside src, so the production
 * build does not carry it; it is loaded only when it is the one that runs.
 */

import { startBot } from "../src/app/bot.js";
import { runMain } from "../src/app/run.js";
import { selectTransport } from "../src/slack/transport/transport.js";

void runMain(async (options) => {
  if (selectTransport(options.config).kind !== "console") return startBot(options);
  const { startConsoleBot } = await import("./console/index.js");
  return startConsoleBot(options);
});
