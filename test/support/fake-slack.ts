import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseApiArgs } from "../../tools/console/standin.js";
import { uploadedFile } from "../../tools/uploaded-file.js";
import { checkBlockKitLimits } from "./block-kit-limits.js";
import { eventWaiter } from "./event-waiter.js";

/**
 * A fake Slack Web API on loopback. Point the app's SLACK_API_URL at `apiUrl` and slash commands'
 * response_url at `responseUrl()`. Records every call, checks Block Kit limits the way Slack
 * rejects oversize payloads (`invalid_blocks`), and can inject Slack errors and 429s per method.
 */

export interface SlackCall {
  method: string;
  args: Record<string, unknown>;
  token: string | undefined;
  at: number;
}

export interface ResponseUrlPost {
  id: string;
  body: Record<string, unknown>;
  at: number;
}

export interface FakeUser {
  id: string;
  name?: string;
  is_admin?: boolean;
  is_owner?: boolean;
  is_primary_owner?: boolean;
  tz?: string;
  deleted?: boolean;
}

export interface SlackFault {
  method: string;
  /** A Slack error code answered with ok:false, e.g. not_in_channel, channel_not_found. */
  error?: string;
  /** Answer 429 with this Retry-After (seconds). */
  retryAfterSec?: number;
  /** Only when the call's channel is this one. */
  channel?: string;
  /** Answer after this long (alone or with error / retryAfterSec). */
  latencyMs?: number;
  /** Answer (and so apply: a post or an update lands when answered) only once this settles. */
  holdUntil?: Promise<unknown>;
  /** Only calls whose arguments this accepts. */
  when?: (args: Record<string, unknown>) => boolean;
  times?: number;
}

/** A message as Slack holds it: what the last post or update it answered said. */
export interface HeldMessage {
  text: unknown;
  blocks: unknown;
}

/** A workflow step's completion as Slack received it (functions.completeSuccess / completeError). */
export interface FunctionCompletion {
  executionId: string;
  kind: "success" | "error";
  outputs?: Record<string, unknown>;
  error?: string;
  token: string | undefined;
  /** Whether Slack took it (false: the execution was already completed). */
  accepted: boolean;
}

/** A file uploaded the way Slack's files upload goes: URL asked, bytes posted, upload completed into a channel. */
export interface FakeUpload {
  id: string;
  filename: string;
  length: number;
  /** What was posted to the upload URL (as sent: raw, or a multipart form). */
  body: string | null;
  /** The same bytes, as they arrived (a PNG is not text). */
  bytes: Buffer | null;
  /** alt_text given to files.getUploadURLExternal. */
  altText: string | undefined;
  /** Set by files.delete. */
  deleted: boolean;
  /** Set by files.completeUploadExternal. */
  shared: {
    channelId: string | undefined;
    threadTs: string | undefined;
    title: string | undefined;
    comment: string | undefined;
  } | null;
}

export interface FakeSlack {
  url: string;
  apiUrl: string;
  calls: SlackCall[];
  responses: ResponseUrlPost[];
  violations: { where: string; problems: string[] }[];
  users: Map<string, FakeUser>;
  usergroups: Map<string, string[]>;
  /** Channel ids each user is a member of (users.conversations and conversations.members, paged by their limit). */
  memberships: Map<string, string[]>;
  /** Files uploaded (files.getUploadURLExternal → upload URL → files.completeUploadExternal), by file id. */
  uploads: Map<string, FakeUpload>;
  /** Every functions.completeSuccess / completeError, in order (refused ones too). */
  completions: FunctionCompletion[];
  /** Wait for the first accepted completion of a function execution. */
  waitForCompletion(executionId: string, timeoutMs?: number): Promise<FunctionCompletion>;
  responseUrl(id?: string): string;
  /**
   * The message at (channel, ts) as readers see it now: the last chat.postMessage or chat.update of it that
   * was answered (calls are recorded when they arrive; a held one lands when it is answered).
   */
  messageAt(channel: string, ts: string): HeldMessage | undefined;
  /** Wait until the message at (channel, ts), as readers see it, satisfies `predicate`. */
  waitForMessage(
    channel: string,
    ts: string,
    predicate: (m: HeldMessage) => boolean,
    timeoutMs?: number,
  ): Promise<HeldMessage>;
  addFault(f: SlackFault): void;
  /** While true, every Web API request's connection is dropped unanswered (Slack unreachable). */
  setUnreachable(unreachable: boolean): void;
  /**
   * While true, a message whose image block names any file is refused with invalid_blocks ("invalid slack
   * file"), as Slack answers for a file it has not finished processing or the readers may not see.
   */
  setRefuseSlackFiles(refuse: boolean): void;
  callsTo(method: string): SlackCall[];
  responsesTo(id: string): ResponseUrlPost[];
  waitForCall(method: string, predicate?: (c: SlackCall) => boolean, timeoutMs?: number): Promise<SlackCall>;
  /** Requests received (Web API, response_url, uploads) and not yet answered. */
  inFlight(): number;
  waitForResponse(
    id: string,
    predicate?: (r: ResponseUrlPost) => boolean,
    timeoutMs?: number,
  ): Promise<ResponseUrlPost>;
  clear(): void;
  close(): Promise<void>;
}

const BOT_USER_ID = "UBOT";

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The slack_file ids of a message's image blocks (top level, and images inside sections and context). */
function slackFileIds(payload: unknown): string[] {
  const blocks = (payload as { blocks?: unknown } | undefined)?.blocks;
  if (!Array.isArray(blocks)) return [];
  const ids: string[] = [];
  const visit = (el: unknown) => {
    const o = el as {
      type?: unknown;
      slack_file?: { id?: unknown };
      accessory?: unknown;
      elements?: unknown;
    };
    if (typeof o !== "object" || o === null) return;
    if (o.type === "image" && o.slack_file) ids.push(String(o.slack_file.id));
    if (o.accessory) visit(o.accessory);
    if (Array.isArray(o.elements)) for (const e of o.elements) visit(e);
  };
  for (const b of blocks) visit(b);
  return ids;
}

export interface FakeSlackOptions {
  /**
   * The workspace auth.test names for the bot token (default T0001); null names none, so a single-token
   * bot serves every workspace: the benchmark's many workspaces on one token, which real Slack cannot give.
   */
  tokenTeamId?: string | null;
}

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const tokenTeamId = options.tokenTeamId === undefined ? "T0001" : options.tokenTeamId;
  const calls: SlackCall[] = [];
  const responses: ResponseUrlPost[] = [];
  const violations: FakeSlack["violations"] = [];
  const users = new Map<string, FakeUser>();
  const usergroups = new Map<string, string[]>();
  const memberships = new Map<string, string[]>();
  const uploads = new Map<string, FakeUpload>();
  let fileCounter = 1;
  const faults: SlackFault[] = [];
  const messages = new Map<string, HeldMessage>();
  const completions: FunctionCompletion[] = [];
  const events = eventWaiter();
  let tsCounter = 1_700_000_000;
  let unreachable = false;
  let refuseSlackFiles = false;

  const notify = () => events.notify();

  function takeFault(method: string, args: Record<string, unknown>): SlackFault | undefined {
    const f = faults.find(
      (x) =>
        x.method === method &&
        (x.channel === undefined || x.channel === args.channel) &&
        (x.when === undefined || x.when(args)),
    );
    if (f?.times !== undefined) {
      f.times -= 1;
      if (f.times <= 0) faults.splice(faults.indexOf(f), 1);
    }
    return f;
  }

  /**
   * As Slack answers "invalid slack file": an image block may name only a file that was uploaded, completed
   * and not deleted.
   */
  function unknownFiles(where: string, payload: unknown): string[] {
    const bad = slackFileIds(payload).filter((id) => {
      const u = uploads.get(id);
      return refuseSlackFiles || !u || u.shared === null || u.deleted;
    });
    if (bad.length > 0) violations.push({ where, problems: bad.map((id) => `invalid slack file ${id}`) });
    return bad;
  }

  function checkSurface(where: string, surface: "message" | "modal" | "home", payload: unknown): string[] {
    const problems = checkBlockKitLimits(surface, payload as never);
    if (problems.length > 0) violations.push({ where, problems });
    return problems;
  }

  /** As Slack does: one completion per execution; a second is refused (execution_not_in_running_state). */
  function completeFunction(
    method: "functions.completeSuccess" | "functions.completeError",
    args: Record<string, unknown>,
    token: string | undefined,
  ): Record<string, unknown> {
    const executionId = args.function_execution_id;
    if (typeof executionId !== "string" || executionId === "")
      return { ok: false, error: "invalid_arguments" };
    const success = method === "functions.completeSuccess";
    // Form-encoded calls carry the outputs as a JSON string, as Slack accepts them.
    let outputs = args.outputs;
    if (typeof outputs === "string") {
      try {
        outputs = JSON.parse(outputs);
      } catch {
        return { ok: false, error: "invalid_json" };
      }
    }
    if (success && (typeof outputs !== "object" || outputs === null || Array.isArray(outputs)))
      return { ok: false, error: "invalid_arguments" };
    if (!success && (typeof args.error !== "string" || args.error.trim() === ""))
      return { ok: false, error: "invalid_arguments" };
    const accepted = !completions.some((c) => c.executionId === executionId && c.accepted);
    completions.push({
      executionId,
      kind: success ? "success" : "error",
      ...(success ? { outputs: outputs as Record<string, unknown> } : { error: String(args.error) }),
      token,
      accepted,
    });
    return accepted ? { ok: true } : { ok: false, error: "execution_not_in_running_state" };
  }

  /** A user as users.info and users.list describe one (users.info adds the time zone). */
  const userRecord = (u: FakeUser) => ({
    id: u.id,
    name: u.name ?? u.id.toLowerCase(),
    is_admin: u.is_admin ?? false,
    is_owner: u.is_owner ?? false,
    is_primary_owner: u.is_primary_owner ?? false,
    deleted: u.deleted ?? false,
  });

  function answer(method: string, args: Record<string, unknown>): Record<string, unknown> {
    const channel = typeof args.channel === "string" ? args.channel : undefined;
    switch (method) {
      case "auth.test":
        return {
          ok: true,
          url: "https://acme.slack.com/",
          team: "Acme",
          user: "edgeops",
          ...(tokenTeamId === null ? {} : { team_id: tokenTeamId }),
          user_id: BOT_USER_ID,
          bot_id: "BBOT",
        };
      case "users.info": {
        const u = users.get(String(args.user));
        if (!u) return { ok: false, error: "user_not_found" };
        return { ok: true, user: { ...userRecord(u), tz: u.tz ?? "Europe/Amsterdam" } };
      }
      case "users.list":
        return {
          ok: true,
          members: [...users.values()].map(userRecord),
          response_metadata: { next_cursor: "" },
        };
      case "usergroups.users.list": {
        const members = usergroups.get(String(args.usergroup));
        return members ? { ok: true, users: members } : { ok: false, error: "no_such_subteam" };
      }
      case "users.conversations": {
        const all = memberships.get(String(args.user)) ?? [];
        const from = Number(args.cursor ? Buffer.from(String(args.cursor), "base64").toString() : 0);
        const limit = Number(args.limit ?? 100);
        const next = from + limit;
        return {
          ok: true,
          channels: all.slice(from, next).map((id) => ({ id, name: id.toLowerCase() })),
          response_metadata: {
            next_cursor: next < all.length ? Buffer.from(String(next)).toString("base64") : "",
          },
        };
      }
      case "conversations.info": {
        const id = String(args.channel ?? "");
        // A channel's name is its id in lower case (incident-42 for C0001, as the harness's payloads name it);
        // a G… channel is private, as Slack's older ids were.
        return /^[CG][A-Z0-9]+$/.test(id)
          ? {
              ok: true,
              channel: {
                id,
                name: id === "C0001" ? "incident-42" : id.toLowerCase(),
                is_private: id.startsWith("G"),
              },
            }
          : { ok: false, error: "channel_not_found" };
      }
      case "conversations.members": {
        // The same memberships, seen from the channel (paged by its limit).
        const all = [...memberships].filter(([, cs]) => cs.includes(String(args.channel))).map(([u]) => u);
        const from = Number(args.cursor ? Buffer.from(String(args.cursor), "base64").toString() : 0);
        const next = from + Number(args.limit ?? 100);
        return {
          ok: true,
          members: all.slice(from, next),
          response_metadata: {
            next_cursor: next < all.length ? Buffer.from(String(next)).toString("base64") : "",
          },
        };
      }
      case "chat.postMessage":
      case "chat.update":
      case "chat.postEphemeral": {
        if (checkSurface(method, "message", args).length > 0) return { ok: false, error: "invalid_blocks" };
        if (unknownFiles(method, args).length > 0) return { ok: false, error: "invalid_blocks" };
        const ts = method === "chat.update" ? String(args.ts) : `${tsCounter++}.000100`;
        if (method !== "chat.postEphemeral")
          messages.set(`${channel} ${ts}`, { text: args.text, blocks: args.blocks });
        return method === "chat.postEphemeral"
          ? { ok: true, message_ts: ts }
          : { ok: true, channel, ts, message: { text: args.text, blocks: args.blocks, ts } };
      }
      case "chat.unfurl": {
        // Each unfurl is a small message of its own: Slack checks its blocks the same way.
        const unfurls = (args.unfurls ?? {}) as Record<string, { blocks?: unknown }>;
        const bad = Object.entries(unfurls).filter(
          ([url, u]) => checkSurface(`chat.unfurl ${url}`, "message", u).length > 0,
        );
        if (Object.keys(unfurls).length === 0 || bad.length > 0)
          return { ok: false, error: "invalid_unfurls" };
        return { ok: true };
      }
      case "views.open":
      case "views.update":
      case "views.push":
      case "views.publish": {
        const view = args.view as Record<string, unknown> | undefined;
        const surface = view?.type === "home" ? "home" : "modal";
        if (checkSurface(method, surface, view).length > 0) return { ok: false, error: "invalid_arguments" };
        return { ok: true, view: { id: `V${tsCounter++}`, hash: "h", ...view } };
      }
      case "files.getUploadURLExternal": {
        const length = Number(args.length);
        if (typeof args.filename !== "string" || !args.filename || !Number.isInteger(length) || length < 1)
          return { ok: false, error: "invalid_arguments" };
        const id = `F${String(fileCounter++).padStart(8, "0")}`;
        uploads.set(id, {
          id,
          filename: args.filename,
          length,
          body: null,
          bytes: null,
          altText: typeof args.alt_text === "string" ? args.alt_text : undefined,
          deleted: false,
          shared: null,
        });
        return { ok: true, upload_url: `${url}/upload/${id}`, file_id: id };
      }
      case "files.completeUploadExternal": {
        const files = (typeof args.files === "string" ? JSON.parse(args.files) : args.files) as
          | { id: string; title?: string }[]
          | undefined;
        if (!Array.isArray(files) || files.length === 0) return { ok: false, error: "invalid_arguments" };
        for (const f of files) {
          const u = uploads.get(f.id);
          // Slack refuses to complete a file whose bytes never arrived.
          if (!u || u.body === null) return { ok: false, error: "file_not_found" };
        }
        const str = (v: unknown) => (typeof v === "string" ? v : undefined);
        for (const f of files) {
          const u = uploads.get(f.id);
          if (u)
            u.shared = {
              channelId: str(args.channel_id),
              threadTs: str(args.thread_ts),
              title: f.title,
              comment: str(args.initial_comment),
            };
        }
        return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title })) };
      }
      case "chat.getPermalink":
        return {
          ok: true,
          channel,
          permalink: `https://acme.slack.com/archives/${channel}/p${String(args.message_ts).replace(".", "")}`,
        };
      case "files.delete": {
        const u = uploads.get(String(args.file));
        if (!u) return { ok: false, error: "file_not_found" };
        if (u.deleted) return { ok: false, error: "file_deleted" };
        u.deleted = true;
        return { ok: true };
      }
      case "conversations.open":
        return { ok: true, channel: { id: `D${String(args.users ?? "X").split(",")[0]}` } };
      case "oauth.v2.access":
        return {
          ok: true,
          access_token: "xoxb-oauth-installed-token",
          token_type: "bot",
          scope: "commands,chat:write",
          bot_user_id: BOT_USER_ID,
          app_id: "A0001",
          team: { id: "T0OAUTH", name: "OAuth Team" },
          enterprise: null,
          is_enterprise_install: false,
          authed_user: { id: "U0INSTALLER" },
        };
      default:
        return { ok: true };
    }
  }

  let inFlight = 0;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    inFlight++;
    res.once("close", () => {
      inFlight--;
    });
    const rawBytes = await readBody(req);
    const raw = rawBytes.toString("utf8");
    const url = new URL(req.url ?? "/", "http://localhost");
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    if (url.pathname.startsWith("/response/")) {
      const id = decodeURIComponent(url.pathname.slice("/response/".length));
      const body = JSON.parse(raw || "{}") as Record<string, unknown>;
      const problems = [
        ...checkSurface(`response_url ${id}`, "message", body),
        ...unknownFiles(`response_url ${id}`, body),
      ];
      responses.push({ id, body, at: Date.now() });
      notify();
      if (problems.length > 0) return send(400, { ok: false, error: "invalid_blocks" });
      return send(200, { ok: true });
    }
    if (url.pathname.startsWith("/upload/")) {
      const upload = uploads.get(decodeURIComponent(url.pathname.slice("/upload/".length)));
      if (!upload || req.method !== "POST") return send(404, { ok: false, error: "unknown_upload" });
      upload.body = raw;
      upload.bytes = await uploadedFile(rawBytes, req.headers["content-type"]);
      notify();
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`OK - ${upload.length}`);
      return;
    }
    if (url.pathname.startsWith("/api/")) {
      const method = url.pathname.slice("/api/".length);
      let args: Record<string, unknown>;
      try {
        args = parseApiArgs(raw, req.headers["content-type"]);
      } catch {
        return send(200, { ok: false, error: "invalid_json" });
      }
      const auth = req.headers.authorization;
      const token = auth?.startsWith("Bearer ") ? auth.slice(7) : (args.token as string | undefined);
      calls.push({ method, args, token, at: Date.now() });
      notify();
      const fault = takeFault(method, args);
      if (fault?.latencyMs) await new Promise((r) => setTimeout(r, fault.latencyMs));
      if (fault?.holdUntil) await fault.holdUntil.catch(() => undefined);
      if (fault?.retryAfterSec !== undefined) {
        return send(429, { ok: false, error: "ratelimited" }, { "retry-after": String(fault.retryAfterSec) });
      }
      if (fault?.error) return send(200, { ok: false, error: fault.error });
      if (method === "functions.completeSuccess" || method === "functions.completeError") {
        const result = completeFunction(method, args, token);
        notify();
        return send(200, result);
      }
      const answered = answer(method, args);
      notify();
      return send(200, answered);
    }
    send(404, { ok: false, error: "unknown_path" });
  }

  const server: Server = createServer((req, res) => {
    if (unreachable && (req.url ?? "").startsWith("/api/")) {
      req.socket.destroy();
      return;
    }
    handle(req, res).catch((e: unknown) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const waitFor = <T>(find: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    events.until(find, () => `fake Slack: ${what}`, timeoutMs);

  return {
    url,
    apiUrl: `${url}/api/`,
    calls,
    responses,
    violations,
    users,
    usergroups,
    memberships,
    uploads,
    completions,
    waitForCompletion: (executionId, timeoutMs = 115_000) =>
      waitFor(
        () => completions.find((c) => c.executionId === executionId && c.accepted),
        `a completion of function execution ${executionId}`,
        timeoutMs,
      ),
    responseUrl: (id = `r${Math.random().toString(36).slice(2)}`) => `${url}/response/${id}`,
    messageAt: (channel, ts) => messages.get(`${channel} ${ts}`),
    waitForMessage: (channel, ts, predicate, timeoutMs = 115_000) =>
      waitFor(
        () => {
          const m = messages.get(`${channel} ${ts}`);
          return m && predicate(m) ? m : undefined;
        },
        `the message ${ts} in ${channel} as expected`,
        timeoutMs,
      ),
    addFault: (f) => faults.push({ ...f }),
    setUnreachable: (on) => {
      unreachable = on;
    },
    setRefuseSlackFiles: (on) => {
      refuseSlackFiles = on;
    },
    callsTo: (method) => calls.filter((c) => c.method === method),
    responsesTo: (id) => responses.filter((r) => r.id === id),
    inFlight: () => inFlight,
    waitForCall: (method, predicate = () => true, timeoutMs = 115_000) =>
      waitFor(() => calls.find((c) => c.method === method && predicate(c)), `a ${method} call`, timeoutMs),
    waitForResponse: (id, predicate = () => true, timeoutMs = 115_000) =>
      waitFor(
        () => responses.find((r) => r.id === id && predicate(r)),
        `a response_url post to ${id}`,
        timeoutMs,
      ),
    clear: () => {
      calls.length = 0;
      responses.length = 0;
      completions.length = 0;
      violations.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close").catch(() => undefined);
    },
  };
}
