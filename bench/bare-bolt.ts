/**
 * The floor for acknowledgement latency: a bare Bolt app (HTTPReceiver, same signing secret, token
 * and fake Slack Web API as the bot) whose only listeners ack `/edge` and any button click. Same load
 * generator, same rates, same bursts.
 */
import type { Server } from "node:http";
import { App, LogLevel } from "@slack/bolt";
import { BOT_TOKEN, cpuNow, SIGNING_SECRET, serveRpc } from "./common.js";

const slackApiUrl = process.env.SLACK_API_URL;
const app = new App({
  signingSecret: SIGNING_SECRET,
  token: BOT_TOKEN,
  logLevel: LogLevel.ERROR,
  ...(slackApiUrl ? { clientOptions: { slackApiUrl } } : {}),
});
app.command("/edge", async ({ ack }) => {
  await ack();
});
app.action(/.*/, async ({ ack }) => {
  await ack();
});
const server = (await app.start(0)) as Server;
const address = server.address();

serveRpc(
  {
    cpu: cpuNow,
    stop: async () => {
      await app.stop();
      setImmediate(() => process.exit(0));
      return true;
    },
  },
  { port: typeof address === "object" && address ? address.port : 0 },
);
