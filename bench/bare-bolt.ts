/**
 * The floors: a bare Bolt app (HTTPReceiver, same signing secret, token and fake Slack Web API as the
 * bot) in three parts, each the least a Bolt app must do for what it measures:
 * - `/edge` and any button click are acked, and nothing else (acknowledgement latency);
 * - `/edge fetch-zones`: ack, the Edge call the bot makes for a warm `/edge zones` (undici, kept-alive),
 *   and one POST of the count to response_url (the bot's overhead to response_url); the first command of a
 *   key's minute then reads the page zones' detailed metrics (as the bot checks them, at most once a minute
 *   per key) and POSTs again, replacing the answer;
 * - `/edge fetch-apps`: ack, the Edge call the bot makes for `/edge apps` (a page of 20), one POST;
 * - `/edge cold-zones`: `/edge zones` for a workspace seen for the first time, with the Edge reads the bot
 *   makes then: the page of ten, beside it the whole pull zone list (every page of 1,000, names kept); one
 *   POST to response_url; then each zone's detailed metrics on the page and a second POST, all under the
 *   bot's per-key limits (4 at once, 10 starts in any 1,040 ms);
 * - with BARE_APPROVALS (sqlite or postgres), an Approve click does the I/O a verified approval needs:
 *   ack, read the target (the zone's bot categories), PUT it, read it back, one store transaction
 *   (better-sqlite3 or pg, as the bot's store), one chat.update of the card.
 * `cpu` answers this process's CPU time, read as the bot's is.
 */
import { mkdtempSync } from "node:fs";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App, LogLevel } from "@slack/bolt";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { request } from "undici";
import { APPS_DEFAULT_LIMIT } from "../src/services/apps.js";
import { ACTIONS } from "../src/slack/ids.js";
import { BOT_TOKEN, cpuNow, keyFor, SIGNING_SECRET, serveRpc } from "./common.js";

const slackApiUrl = process.env.SLACK_API_URL;
const app = new App({
  signingSecret: SIGNING_SECRET,
  token: BOT_TOKEN,
  logLevel: LogLevel.ERROR,
  ...(slackApiUrl ? { clientOptions: { slackApiUrl } } : {}),
});
const edgeApiUrl = process.env.EDGE_API_URL;
// The bench's workspace i is team T00000i with key keyFor(i).
const keyOfTeam = (teamId: string) => keyFor(Number(teamId.slice(1)));

async function edgeGet<T>(key: string, path: string): Promise<T> {
  const res = await request(`${edgeApiUrl}${path}`, {
    headers: { AccessKey: key, accept: "application/json" },
  });
  return (await res.body.json()) as T;
}

async function answer(responseUrl: string, text: string): Promise<void> {
  const res = await request(responseUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  await res.body.dump();
}

// ---- the bot's per-key Edge limits (4 calls at once, at most 10 started in any 1,040 ms) --------------

const PER_KEY_CONCURRENCY = 4;
const PER_KEY_STARTS = 10;
const SLOT_HOLD_MS = 1_040;
interface KeyQueue {
  active: number;
  starts: number[];
  waiting: (() => void)[];
  timer: NodeJS.Timeout | undefined;
}
const queues = new Map<string, KeyQueue>();

function pump(key: string, q: KeyQueue): void {
  while (q.waiting.length > 0 && q.active < PER_KEY_CONCURRENCY) {
    const now = Date.now();
    while (q.starts.length > 0 && now - (q.starts[0] as number) >= SLOT_HOLD_MS) q.starts.shift();
    if (q.starts.length >= PER_KEY_STARTS) {
      if (!q.timer)
        q.timer = setTimeout(
          () => {
            q.timer = undefined;
            pump(key, q);
          },
          SLOT_HOLD_MS - (now - (q.starts[0] as number)),
        );
      return;
    }
    q.starts.push(now);
    q.active++;
    (q.waiting.shift() as () => void)();
  }
  if (q.active === 0 && q.waiting.length === 0 && q.starts.length === 0) queues.delete(key);
}

function limited<T>(key: string, call: () => Promise<T>): Promise<T> {
  let q = queues.get(key);
  if (!q) {
    q = { active: 0, starts: [], waiting: [], timer: undefined };
    queues.set(key, q);
  }
  const queue = q;
  return new Promise<T>((resolve, reject) => {
    queue.waiting.push(() => {
      call()
        .then(resolve, reject)
        .finally(() => {
          queue.active--;
          pump(key, queue);
        });
    });
    pump(key, queue);
  });
}

// ---- /edge cold-zones -------------------------------------------------------------------------------

interface ShieldZonesPage {
  data?: { shieldZoneId: number; pullZoneId: number | null }[];
}
interface PullZonesPage {
  Items?: { Id: number; Name?: string | null; Hostnames?: { Value?: string | null }[] | null }[];
  HasMoreItems?: boolean;
}
/** The names the bot keeps per key (pull zone id → name and hostnames). */
const pullZoneNames = new Map<string, Map<number, string[]>>();

async function loadPullZoneNames(key: string): Promise<void> {
  const names = new Map<number, string[]>();
  for (let page = 1; page <= 20; page++) {
    const read = await limited(key, () =>
      edgeGet<PullZonesPage>(key, `/pullzone?page=${page}&perPage=1000&includeCertificate=false`),
    );
    for (const p of read.Items ?? [])
      names.set(p.Id, [p.Name ?? "", ...(p.Hostnames ?? []).map((h) => h.Value ?? "")]);
    if (!read.HasMoreItems) break;
  }
  pullZoneNames.set(key, names);
}

/** Each page zone's detailed metrics over the last hour, under the per-key limits (the bot's zone check). */
function readMetrics(key: string, zoneIds: readonly number[]): Promise<unknown[]> {
  const to = Date.now();
  const from = Math.floor((to - 3_600_000) / 120_000) * 120_000;
  const range = `StartDate=${new Date(from).toISOString()}&EndDate=${new Date(to).toISOString()}&Resolution=1`;
  return Promise.all(
    zoneIds.map((id) =>
      limited(key, () => edgeGet<unknown>(key, `/shield/metrics/overview/${id}/detailed?${range}`)),
    ),
  );
}

/** Keys whose zones were checked in a minute (the bot reads a zone's metrics at most once a minute per key). */
const checkedMinute = new Map<string, number>();

/** The page answered at once; the first answer of a key's minute is then replaced with the page's checks. */
async function zonesAnswer(key: string, responseUrl: string, page: ShieldZonesPage): Promise<void> {
  await answer(responseUrl, `${page.data?.length ?? 0} shield zones; checking their traffic`);
  const minute = Math.floor(Date.now() / 60_000);
  if (checkedMinute.get(key) === minute) return;
  checkedMinute.set(key, minute);
  const metrics = await readMetrics(
    key,
    (page.data ?? []).map((z) => z.shieldZoneId),
  );
  await answer(responseUrl, `${page.data?.length ?? 0} shield zones, ${metrics.length} checked`);
}

async function coldZones(teamId: string, responseUrl: string): Promise<void> {
  const key = keyOfTeam(teamId);
  // The names load beside the page, and the answer does not wait for them (as the bot's).
  if (!pullZoneNames.has(key)) loadPullZoneNames(key).catch(() => undefined);
  const page = await limited(key, () =>
    edgeGet<ShieldZonesPage>(key, "/shield/shield-zones?page=1&perPage=10"),
  );
  await zonesAnswer(key, responseUrl, page);
}

// ---- a verified approval ----------------------------------------------------------------------------

const approvals = process.env.BARE_APPROVALS;
const zone = Number(process.env.BARE_APPROVAL_ZONE ?? 0);
let transaction: ((id: string) => Promise<void>) | undefined;
let closeStore: (() => Promise<void>) | undefined;
if (approvals === "sqlite") {
  const db = new BetterSqlite3(join(mkdtempSync(join(tmpdir(), "bare-bolt-")), "bare.sqlite"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(
    "create table if not exists approvals (id text primary key, state text not null, at integer not null)",
  );
  const upsert = db.prepare(
    "insert into approvals (id, state, at) values (?, 'applied', ?) on conflict (id) do update set state = excluded.state, at = excluded.at",
  );
  const run = db.transaction((id: string) => upsert.run(id, Date.now()));
  transaction = async (id) => {
    run(id);
  };
  closeStore = async () => {
    db.close();
  };
} else if (approvals === "postgres") {
  const pool = new pg.Pool({ connectionString: process.env.BARE_DATABASE_URL, max: 10 });
  await pool.query(
    "create table if not exists bare_approvals (id text primary key, state text not null, at bigint not null)",
  );
  transaction = async (id) => {
    const client = await pool.connect();
    try {
      await client.query("begin");
      await client.query(
        "insert into bare_approvals (id, state, at) values ($1, 'applied', $2) on conflict (id) do update set state = excluded.state, at = excluded.at",
        [id, Date.now()],
      );
      await client.query("commit");
    } catch (e) {
      await client.query("rollback").catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  };
  closeStore = () => pool.end();
}

async function verifiedApproval(teamId: string, requestId: string, channel: string, ts: string) {
  const key = keyOfTeam(teamId);
  const path = `/shield/shield-zone/${zone}/bot-categorization`;
  await edgeGet<unknown>(key, path);
  const put = await request(`${edgeApiUrl}${path}/categories/2`, {
    method: "PUT",
    headers: { AccessKey: key, accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ action: 2 }),
  });
  await put.body.dump();
  await edgeGet<unknown>(key, path);
  await transaction?.(requestId);
  const update = await request(`${slackApiUrl}chat.update`, {
    method: "POST",
    headers: { authorization: `Bearer ${BOT_TOKEN}`, "content-type": "application/json; charset=utf-8" },
    body: JSON.stringify({
      channel,
      ts,
      text: "Approved: the change is in effect.",
      blocks: [{ type: "section", text: { type: "mrkdwn", text: `Request ${requestId} is applied.` } }],
    }),
  });
  await update.body.dump();
}

app.command("/edge", async ({ ack, command }) => {
  await ack();
  if (!edgeApiUrl) return;
  if (command.text === "cold-zones") return coldZones(command.team_id, command.response_url);
  if (command.text === "fetch-apps") {
    const apps = await edgeGet<{ items?: unknown[] }>(
      keyOfTeam(command.team_id),
      `/mc/apps?limit=${APPS_DEFAULT_LIMIT}`,
    );
    return answer(command.response_url, `${apps.items?.length ?? 0} applications`);
  }
  if (command.text !== "fetch-zones") return;
  const key = keyOfTeam(command.team_id);
  const page = await edgeGet<ShieldZonesPage>(key, "/shield/shield-zones?page=1&perPage=10");
  await zonesAnswer(key, command.response_url, page);
});
app.action(/.*/, async ({ ack, body, action }) => {
  await ack();
  if (!transaction || body.type !== "block_actions" || !("value" in action) || !action.value) return;
  if (!("action_id" in action) || action.action_id !== ACTIONS.approve) return;
  const channel = body.channel?.id ?? "";
  const ts = body.message?.ts ?? "";
  await verifiedApproval(body.team?.id ?? "", action.value, channel, ts).catch((e: unknown) =>
    process.stderr.write(`bare approval failed: ${String(e)}\n`),
  );
});
const server = (await app.start(0)) as Server;
const address = server.address();

serveRpc(
  {
    cpu: cpuNow,
    stop: async () => {
      await app.stop();
      await closeStore?.();
      setImmediate(() => process.exit(0));
      return true;
    },
  },
  { port: typeof address === "object" && address ? address.port : 0 },
);
