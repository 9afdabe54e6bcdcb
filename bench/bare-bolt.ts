/**
 * The floors: a bare Bolt app (HTTPReceiver, same signing secret, token and fake Slack Web API as the
 * bot) whose listeners ack `/edge` and any button click, and nothing else, for acknowledgement latency;
 * and for the bot's overhead to response_url, `/edge fetch-zones`: ack, the same Edge call the bot
 * makes for `/edge zones` (undici, kept-alive), and one POST of the count to response_url (undici).
 * Same load generator, same rates, same bursts.
 */
import type { Server } from "node:http";
import { App, LogLevel } from "@slack/bolt";
import { request } from "undici";
import { BOT_TOKEN, cpuNow, keyFor, SIGNING_SECRET, serveRpc } from "./common.js";

const slackApiUrl = process.env.SLACK_API_URL;
const app = new App({
  signingSecret: SIGNING_SECRET,
  token: BOT_TOKEN,
  logLevel: LogLevel.ERROR,
  ...(slackApiUrl ? { clientOptions: { slackApiUrl } } : {}),
});
const edgeApiUrl = process.env.EDGE_API_URL;
app.command("/edge", async ({ ack, command }) => {
  await ack();
  if (command.text !== "fetch-zones" || !edgeApiUrl) return;
  // The bench's workspace i is team T00000i with key keyFor(i).
  const edge = await request(`${edgeApiUrl}/shield/shield-zones?page=1&perPage=10`, {
    headers: { AccessKey: keyFor(Number(command.team_id.slice(1))), accept: "application/json" },
  });
  const zones = (await edge.body.json()) as { data?: unknown[] };
  const answer = await request(command.response_url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: `${zones.data?.length ?? 0} shield zones` }),
  });
  await answer.body.dump();
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
