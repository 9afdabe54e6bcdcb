import { runMain } from "./app/run.js";
import { startBot } from "./bot.js";

/** The production entry (`node dist/main.js`): the bot alone; `npm start` in a checkout is tools/start.ts. */
void runMain(startBot);
