/**
 * The in-process stand-in for Slack: a loopback HTTP server answering the Web API (`/api/<method>`)
 * and the response_urls the console hands out (`/response/<id>`). The app reaches it through
 * SLACK_API_URL and response_url exactly as it reaches Slack, and everything it sends lands on the
 * console's screen.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import type { Logger } from "../../src/log.js";
import { uploadedFile } from "../uploaded-file.js";
import type { Screen } from "./screen.js";
import { CONSOLE_BOT, CONSOLE_BOT_TOKEN, CONSOLE_TEAM } from "./world.js";

type Obj = Record<string, unknown>;

export interface StandIn {
  /** Base URL, no trailing slash. */
  readonly url: string;
  /** The Web API base for SLACK_API_URL (`…/api/`). */
  readonly apiUrl: string;
  /** Every Web API method called, in order (for tests and debugging). */
  readonly calls: { method: string; args: Obj }[];
  /** Requests being answered right now. */
  readonly busy: number;
  /** Date.now() of the last request started or finished. */
  readonly lastActivity: number;
  responseUrl(ctx: Parameters<Screen["newResponseUrl"]>[1]): string;
  /** Resolves true once the method has been answered, false after timeoutMs. */
  waitForCall(method: string, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const JSON_ARGS = ["blocks", "view", "attachments", "metadata", "unfurls"];

/** Web API arguments: JSON, or a form whose object-valued fields are JSON strings (as WebClient sends them). */
export function parseApiArgs(raw: string, contentType: string | undefined): Obj {
  if (!raw) return {};
  if (contentType?.includes("application/json")) return JSON.parse(raw) as Obj;
  const out: Obj = {};
  for (const [k, v] of new URLSearchParams(raw)) {
    if (JSON_ARGS.includes(k) && (v.startsWith("{") || v.startsWith("["))) {
      try {
        out[k] = JSON.parse(v);
        continue;
      } catch {
        // keep the raw string
      }
    }
    out[k] = v;
  }
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const truthy = (v: unknown) => v === true || v === "true";
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const blocksOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Characters of an uploaded file one message shows (a section holds 3,000). */
const FILE_SHOWN = 2_900;

/**
 * `filesDir`: where each uploaded file is written in full, so a file longer than one message shows can
 * still be read whole (the message says it is cut and where the file is).
 */
export async function startStandIn(
  screen: Screen,
  logger: Logger,
  o: { filesDir?: string } = {},
): Promise<StandIn> {
  const world = screen.world;
  const calls: { method: string; args: Obj }[] = [];
  let busy = 0;
  let lastActivity = Date.now();
  let url = "";
  const waiters = new Set<() => void>();
  const saveFile = (id: string, filename: string, content: string | Buffer): string | null => {
    if (!o.filesDir) return null;
    try {
      mkdirSync(o.filesDir, { recursive: true });
      const path = join(o.filesDir, `${id}-${basename(filename)}`);
      writeFileSync(path, content);
      return path;
    } catch (err) {
      logger.warn({ err, filename }, "the uploaded file was not saved");
      return null;
    }
  };
  /** Files being uploaded (files.getUploadURLExternal → the upload URL → files.completeUploadExternal). */
  const uploads = new Map<
    string,
    { filename: string; content: string | null; bytes: Buffer | null; altText: string | undefined }
  >();
  /** Pictures uploaded (the incident chart), by file id: where each was saved, shown beside its image block. */
  const savedImages = new Map<string, string>();
  /** A message's blocks, each image block of an uploaded picture titled with the file it was saved to. */
  const shown = (v: unknown): unknown[] =>
    blocksOf(v).map((b) => {
      if (!isObj(b) || b.type !== "image" || !isObj(b.slack_file)) return b;
      const path = savedImages.get(String(b.slack_file.id));
      const where = path ? `saved at ${path}` : "not saved (run the console with a data directory)";
      return { ...b, title: { type: "plain_text", text: `Picture ${where}` } };
    });
  let fileCount = 0;

  /** A channel argument as a channel id: a user id means their DM, `#name` a channel by name. */
  function channelId(arg: unknown): string | undefined {
    const c = str(arg);
    if (!c) return undefined;
    if (/^[UW][A-Z0-9]+$/.test(c)) return world.dmOf(c);
    if (c.startsWith("#")) return world.channelNamed(c)?.id;
    return c;
  }

  function api(method: string, args: Obj): Obj {
    switch (method) {
      case "auth.test":
        return {
          ok: true,
          url: "https://console.invalid/",
          team: CONSOLE_TEAM.name,
          user: CONSOLE_BOT.name,
          team_id: CONSOLE_TEAM.id,
          user_id: CONSOLE_BOT.userId,
          bot_id: CONSOLE_BOT.botId,
          is_enterprise_install: false,
        };
      case "users.info": {
        const u = world.userById(String(args.user));
        if (!u) return { ok: false, error: "user_not_found" };
        return {
          ok: true,
          user: {
            id: u.id,
            team_id: CONSOLE_TEAM.id,
            name: u.name,
            real_name: u.realName,
            deleted: false,
            is_admin: u.isAdmin || u.isOwner,
            is_owner: u.isOwner,
            is_primary_owner: u.isOwner,
            is_bot: false,
            tz: u.tz,
            profile: { real_name: u.realName, display_name: u.name },
          },
        };
      }
      case "users.list":
        return {
          ok: true,
          members: world.users.map((u) => ({
            id: u.id,
            name: u.name,
            is_admin: u.isAdmin,
            is_owner: u.isOwner,
          })),
        };
      case "usergroups.list":
        return {
          ok: true,
          usergroups: Object.entries(world.usergroups).map(([handle, g]) => ({
            id: g.id,
            handle,
            name: handle,
          })),
        };
      case "usergroups.users.list": {
        const group = Object.values(world.usergroups).find((g) => g.id === args.usergroup);
        return group ? { ok: true, users: [...group.members] } : { ok: false, error: "no_such_subteam" };
      }
      case "conversations.open": {
        const first = String(args.users ?? "").split(",")[0] ?? "";
        if (!world.userById(first)) return { ok: false, error: "user_not_found" };
        return { ok: true, channel: { id: world.dmOf(first) } };
      }
      case "users.conversations":
        // Everyone in the console is in every channel it has.
        return {
          ok: true,
          channels: world.channels.map((c) => ({ id: c.id, name: c.name, is_member: true })),
          response_metadata: { next_cursor: "" },
        };
      case "conversations.members":
        return { ok: true, members: world.users.map((u) => u.id), response_metadata: { next_cursor: "" } };
      case "conversations.info": {
        const id = String(args.channel);
        return { ok: true, channel: { id, name: world.channelName(id), is_member: true } };
      }
      case "chat.postMessage":
      case "chat.postEphemeral": {
        const channel = channelId(args.channel);
        if (!channel) return { ok: false, error: "channel_not_found" };
        const ephemeralTo = method === "chat.postEphemeral" ? str(args.user) : undefined;
        if (method === "chat.postEphemeral" && !ephemeralTo) return { ok: false, error: "user_not_found" };
        const m = screen.postMessage({
          channelId: channel,
          text: String(args.text ?? ""),
          blocks: shown(args.blocks),
          ephemeralTo,
          threadTs: str(args.thread_ts),
        });
        if (ephemeralTo) return { ok: true, message_ts: m.ts };
        return {
          ok: true,
          channel,
          ts: m.ts,
          message: { type: "message", text: m.text, blocks: m.blocks, ts: m.ts },
        };
      }
      case "chat.update": {
        const channel = channelId(args.channel);
        const m = channel ? screen.findMessage(channel, String(args.ts)) : undefined;
        if (!m || m.ephemeralTo) return { ok: false, error: "message_not_found" };
        screen.updateMessage(m, {
          text: String(args.text ?? m.text),
          blocks: args.blocks === undefined ? m.blocks : shown(args.blocks),
        });
        return { ok: true, channel, ts: m.ts, text: m.text, message: { text: m.text, blocks: m.blocks } };
      }
      case "chat.delete": {
        const channel = channelId(args.channel);
        const m = channel ? screen.findMessage(channel, String(args.ts)) : undefined;
        if (!m) return { ok: false, error: "message_not_found" };
        screen.deleteMessage(m);
        return { ok: true, channel, ts: m.ts };
      }
      case "files.getUploadURLExternal": {
        const filename = str(args.filename);
        if (!filename) return { ok: false, error: "invalid_arguments" };
        const id = `F${String(++fileCount).padStart(8, "0")}`;
        uploads.set(id, { filename, content: null, bytes: null, altText: str(args.alt_text) });
        return { ok: true, upload_url: `${url}/upload/${id}`, file_id: id };
      }
      case "files.completeUploadExternal": {
        const files = (typeof args.files === "string" ? JSON.parse(args.files) : args.files) as unknown;
        const channel = channelId(args.channel_id);
        if (!Array.isArray(files)) return { ok: false, error: "invalid_arguments" };
        for (const f of files as { id?: string; title?: string }[]) {
          const upload = uploads.get(String(f.id));
          if (!upload || upload.content === null || upload.bytes === null)
            return { ok: false, error: "file_not_found" };
          if (upload.bytes.subarray(0, 8).equals(PNG_SIGNATURE)) {
            // A picture: saved as it is; a message shows it by its image block, with where it was saved.
            const saved = saveFile(String(f.id), upload.filename, upload.bytes);
            if (saved) savedImages.set(String(f.id), saved);
            if (channel)
              screen.postMessage({
                channelId: channel,
                text: f.title ?? upload.filename,
                blocks: shown([
                  {
                    type: "image",
                    slack_file: { id: String(f.id) },
                    alt_text: upload.altText ?? f.title ?? upload.filename,
                  },
                ]),
                threadTs: str(args.thread_ts),
              });
            continue;
          }
          // Without a channel the file is the app's own: nothing is posted.
          if (!channel) continue;
          // The file as a message: its title, then its text (as much as one section shows), and where it is whole.
          const title = f.title ?? upload.filename;
          const saved = saveFile(String(f.id), upload.filename, upload.content);
          const cut = upload.content.length > FILE_SHOWN;
          const n = (v: number) => v.toLocaleString("en-US");
          const where = cut
            ? `Only the first ${n(FILE_SHOWN)} of ${n(upload.content.length)} characters are shown: ${
                saved ? `the full file is at ${saved}` : "the full file could not be saved"
              }`
            : saved
              ? `Also saved at ${saved}`
              : null;
          screen.postMessage({
            channelId: channel,
            text: str(args.initial_comment) ?? title,
            blocks: [
              ...(str(args.initial_comment)
                ? [{ type: "section", text: { type: "mrkdwn", text: String(args.initial_comment) } }]
                : []),
              {
                type: "context",
                elements: [{ type: "mrkdwn", text: `:page_facing_up: ${title} (${upload.filename})` }],
              },
              { type: "section", text: { type: "plain_text", text: upload.content.slice(0, FILE_SHOWN) } },
              ...(where ? [{ type: "context", elements: [{ type: "plain_text", text: where }] }] : []),
            ],
            threadTs: str(args.thread_ts),
          });
        }
        return { ok: true, files: files as unknown[] };
      }
      case "chat.getPermalink":
        return {
          ok: true,
          permalink: `https://console.invalid/archives/${args.channel}/p${args.message_ts}`,
        };
      case "views.open":
      case "views.push": {
        const user = screen.triggerUser(String(args.trigger_id));
        if (!user) return { ok: false, error: "invalid_trigger_id" };
        if (!isObj(args.view)) return { ok: false, error: "invalid_arguments" };
        if (method === "views.push" && screen.modals.length === 0) return { ok: false, error: "not_found" };
        const v = screen.openModal(user, args.view, method === "views.push");
        return { ok: true, view: v.view };
      }
      case "views.update": {
        const v = screen.findView(str(args.view_id), str(args.external_id));
        if (!v) return { ok: false, error: "not_found" };
        if (!isObj(args.view)) return { ok: false, error: "invalid_arguments" };
        screen.updateView(v, args.view);
        return { ok: true, view: v.view };
      }
      case "views.publish": {
        const user = str(args.user_id);
        if (!user || !world.userById(user)) return { ok: false, error: "user_not_found" };
        if (!isObj(args.view)) return { ok: false, error: "invalid_arguments" };
        const v = screen.publishHome(user, args.view);
        return { ok: true, view: v.view };
      }
      default:
        logger.debug({ method }, "console Slack stand-in: method answered with a bare ok");
        return { ok: true };
    }
  }

  /** A post to a response_url: a new message, or a replacement or deletion of the clicked one. */
  function respond(id: string, body: Obj): { status: number; body: Obj } {
    const ctx = screen.responseContext(id);
    if (!ctx) return { status: 404, body: { ok: false, error: "expired_url" } };
    const source = ctx.message && !ctx.message.deleted ? ctx.message : undefined;
    if (truthy(body.delete_original)) {
      if (source) screen.deleteMessage(source);
      return { status: 200, body: { ok: true } };
    }
    const text = String(body.text ?? "");
    const blocks = shown(body.blocks);
    const inChannel = body.response_type === "in_channel";
    if (truthy(body.replace_original) && source) {
      screen.updateMessage(source, {
        text,
        blocks,
        ...(body.response_type !== undefined ? { ephemeralTo: inChannel ? undefined : ctx.userId } : {}),
      });
      return { status: 200, body: { ok: true } };
    }
    const posted = screen.postMessage({
      channelId: ctx.channelId,
      text,
      blocks,
      ephemeralTo: inChannel ? undefined : ctx.userId,
      threadTs: str(body.thread_ts),
    });
    ctx.message ??= posted;
    return { status: 200, body: { ok: true } };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBytes = await readBody(req);
    const raw = rawBytes.toString("utf8");
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
      res.end(JSON.stringify(body));
    };
    if (path.startsWith("/response/")) {
      let body: Obj;
      try {
        body = JSON.parse(raw || "{}") as Obj;
      } catch {
        return send(400, { ok: false, error: "invalid_json" });
      }
      const answer = respond(decodeURIComponent(path.slice("/response/".length)), body);
      return send(answer.status, answer.body);
    }
    if (path.startsWith("/upload/")) {
      const upload = uploads.get(decodeURIComponent(path.slice("/upload/".length)));
      if (!upload) return send(404, { ok: false, error: "unknown_upload" });
      upload.bytes = await uploadedFile(rawBytes, req.headers["content-type"]);
      upload.content = upload.bytes.toString("utf8");
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("OK");
      return;
    }
    if (path.startsWith("/api/")) {
      const method = path.slice("/api/".length);
      let args: Obj;
      try {
        args = parseApiArgs(raw, req.headers["content-type"]);
      } catch {
        return send(200, { ok: false, error: "invalid_json" });
      }
      const auth = req.headers.authorization;
      const token = auth?.startsWith("Bearer ") ? auth.slice(7) : str(args.token);
      if (token !== CONSOLE_BOT_TOKEN) return send(200, { ok: false, error: "invalid_auth" });
      calls.push({ method, args });
      send(200, api(method, args));
      for (const w of [...waiters]) w();
      return;
    }
    send(404, { ok: false, error: "unknown_path" });
  }

  const server: Server = createServer((req, res) => {
    busy += 1;
    lastActivity = Date.now();
    res.on("close", () => {
      busy -= 1;
      lastActivity = Date.now();
    });
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, "console Slack stand-in failed");
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    apiUrl: `${url}/api/`,
    calls,
    get busy() {
      return busy;
    },
    get lastActivity() {
      return lastActivity;
    },
    responseUrl: (ctx) => screen.newResponseUrl(url, ctx),
    waitForCall: (method, timeoutMs) =>
      new Promise<boolean>((resolve) => {
        const check = () => {
          if (!calls.some((c) => c.method === method)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          resolve(false);
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
