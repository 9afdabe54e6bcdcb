/**
 * `npm start`: the local console when no Slack variables are set (outside production), otherwise the
 * bot exactly as `node dist/main.js` runs it. The console lives here, outside src, so the production
 * build does not carry it.
 */
import { runMain } from "../src/app/run.js";
import { startBot } from "../src/bot.js";
import { selectTransport } from "../src/slack/transport.js";
import { startConsoleBot } from "./console/index.js";

void runMain((options) =>
  selectTransport(options.config).kind === "console" ? startConsoleBot(options) : startBot(options),
);
