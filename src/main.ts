import { startBot } from "./app/bot.js";
import { runMain } from "./app/run.js";

/** The production entry (`node dist/main.js`): the bot alone; `npm start` in a checkout is tools/start.ts. */
void runMain(startBot);
