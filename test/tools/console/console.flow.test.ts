import { afterEach, describe, expect, it } from "vitest";
import { SIM_API_KEY, SIM_IDS, type Simulator, startSimulator } from "../../../tools/simulator/index.js";
import { buttonNumber, type ConsoleDriver, startConsole } from "./support.js";

let c: ConsoleDriver | undefined;
let realService: Simulator | undefined;
afterEach(async () => {
  await c?.close();
  await realService?.close();
  c = undefined;
  realService = undefined;
});

const sim = () => {
  const s = c?.handle.sim;
  if (!s) throw new Error("the console should be running the simulator");
  return s;
};

describe("local console, driven through standard input", () => {
  it("opens with a banner naming the Slack variables and saying the Edge API is simulated", async () => {
    c = await startConsole();
    expect(c.output).toContain("No Slack workspace is connected");
    for (const v of ["SLACK_APP_TOKEN", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"])
      expect(c.output).toContain(v);
    expect(c.output).toMatch(/Edge API: simulated by the built-in simulator/);
    expect(c.output).toContain("/as <user>");
    expect(c.output).toContain(`SQLite in ${c.dataDir}`);
  });

  it("lists applications and pages on by pressing the numbered Next page button", async () => {
    c = await startConsole();
    const first = await c.send("/edge apps");
    expect(first).toContain("--- #general · edgeops · only visible to alice ---");
    expect(first).toContain("== Magic Containers applications ==");
    expect(first).toContain(`20 read of ${SIM_IDS.appCount}`);
    expect(first).toMatch(/\[1\] Next page/);
    const appsCalls = () => sim().requests.filter((r) => r.method === "GET" && r.path === "/mc/apps");
    expect(appsCalls()).toHaveLength(1);
    expect(appsCalls()[0]?.query.nextCursor).toBeUndefined();
    expect(appsCalls()[0]?.headers.accesskey).toBe(SIM_API_KEY);

    const second = await c.send(String(buttonNumber(first, "Next page")));
    expect(second).toContain("only visible to alice · updated");
    expect(second).toContain("== Magic Containers applications ==");
    expect(appsCalls()).toHaveLength(2);
    expect(appsCalls()[1]?.query.nextCursor).toEqual(expect.any(String));
    // The replaced message has new content: no name from page one is on page two.
    const names = (s: string) => [...s.matchAll(/\*([a-z0-9-]+)\*\s{2}/g)].map((m) => m[1]);
    expect(names(second).some((n) => names(first).includes(n))).toBe(false);

    const third = await c.send(String(buttonNumber(second, "Next page")));
    expect(third).toContain(`${SIM_IDS.appCount - 40} read`);
    expect(third).not.toContain("Next page");
    expect(appsCalls()).toHaveLength(3);
  });

  it("a bot category Block with approval: bob asks (confirming the dialog), bob cannot approve, alice approves", async () => {
    c = await startConsole();
    const zone = SIM_IDS.firstShieldZone;
    await c.send("/as bob");
    const bots = await c.send(`/edge bots ${zone}`);
    expect(bots).toContain(`Bot detection · shield zone ${zone}`);
    const block = buttonNumber(bots, "Block", "first");

    // Declining the confirmation sends nothing.
    const declined = await c.send(String(block));
    expect(declined).toMatch(/\? Block \w/);
    expect(declined).toContain("y = Block, n = Cancel");
    const no = await c.send("n");
    expect(no).toContain("Confirm? [y/N] n\n");
    expect(no).toContain("Cancelled: nothing was sent.");
    expect(c.output).not.toContain("Approval needed");

    await c.send(String(block));
    const asked = await c.send("y");
    expect(asked).toMatch(/--- #general · edgeops ---\n== Approval needed: Block .+ on shield zone \d+ ==/);
    expect(asked).toContain("Requested by* @bob");
    expect(asked).toContain("needs a second person's approval");
    const writes = () =>
      sim().requests.filter((r) => r.method === "PUT" && r.path.includes("/bot-categorization/"));
    expect(writes()).toHaveLength(0);

    // The requester cannot approve his own request: refused at the click, no dialog first.
    const self = await c.send(String(buttonNumber(asked, "Approve")));
    expect(self).not.toMatch(/\? Approve/);
    expect(self).toContain("--- #general · edgeops · only visible to bob ---");
    expect(self).toContain("someone else has to approve it");
    expect(writes()).toHaveLength(0);

    await c.send("/as alice");
    const approved = await c.send(String(buttonNumber(c.output, "Approve")));
    expect(approved).toContain("updated");
    expect(approved).toMatch(/Applied/);
    expect(writes()).toHaveLength(1);
    expect(writes()[0]?.path).toMatch(
      new RegExp(`/shield/shield-zone/${zone}/bot-categorization/categories/\\d+$`),
    );
    expect(writes()[0]?.body).toEqual({ action: 1 });
  });

  it("DNS: Scan now says it started, then replaces the message with the finished scan", async () => {
    c = await startConsole();
    const zone = SIM_IDS.dnsZoneNoScan;
    const none = await c.send(`/edge dns ${zone}`);
    expect(none).toContain(`DNS zone ${zone} has not been scanned yet`);
    const scanned = await c.send(String(buttonNumber(none, "Scan now")));
    const started = scanned.indexOf(`Scanning DNS zone ${zone}`);
    const finished = scanned.indexOf("== DNS scan · ");
    expect(started).toBeGreaterThan(-1);
    expect(finished).toBeGreaterThan(started);
    expect(scanned.slice(finished)).toMatch(/Status\* :white_check_mark: Completed/);
    expect(scanned.match(/updated/g)).toHaveLength(2);
    const triggers = sim().requests.filter((r) => r.method === "POST" && r.path === "/dnszone/records/scan");
    expect(triggers).toHaveLength(1);
    expect(triggers[0]?.body).toEqual({ ZoneId: zone });
  });

  it("the key modal: an admin fills it, sees the field error, retries; the key is checked and used, never shown", async () => {
    const realKey = "real-key-0123456789abcdef";
    realService = await startSimulator({ apiKeys: [realKey] });
    c = await startConsole({ env: { EDGE_API_URL: realService.url } });

    const modal = await c.send("/edge key");
    expect(modal).toContain("=== Modal: Edge API key ===");
    // Required while there is no key (an empty field is refused).
    expect(modal).toContain("{1} Edge API key");
    expect(modal).not.toContain("Edge API key (optional)");
    expect(modal).toContain("[ Save (submit) | Cancel (/cancel) ]");

    const rejected = await c.send("wrong-key-0000000000");
    expect(rejected).toContain("! {1} Edge API key: The Edge API rejected this key.");
    expect(realService.requests.at(-1)?.headers.accesskey).toBe("wrong-key-0000000000");

    const saved = await c.send(realKey);
    expect(saved).toContain("Saved. The workspace now uses the key ending …cdef.");
    expect(c.output).not.toContain(realKey);
    expect(c.output).not.toContain("wrong-key");
    expect(saved).toContain("[ Done (/cancel) ]");
    expect(await c.send("/cancel")).toContain("(modal closed)");
    expect(await c.send("/cancel")).toContain("No modal is open.");

    realService.clearRequests();
    const apps = await c.send("/edge apps");
    expect(apps).toContain("Magic Containers applications");
    expect(realService.requests.map((r) => [r.path, r.headers.accesskey])).toEqual([["/mc/apps", realKey]]);
    expect(sim().requests.some((r) => r.headers.accesskey === realKey)).toBe(false);

    // Members cannot open it.
    await c.send("/as bob");
    expect(await c.send("/edge key")).toContain("Only workspace admins can set the Edge API key");
  });

  it("/cancel closes a modal without submitting, and the App Home's button opens the same modal", async () => {
    c = await startConsole();
    const home = await c.send("/home");
    expect(home).toContain("=== App Home of alice ===");
    expect(home).toContain("Pending approvals");
    const modal = await c.send(String(buttonNumber(home, "Set API key")));
    expect(modal).toContain("=== Modal: Edge API key ===");
    expect(await c.send("/cancel")).toContain("(modal closed)");
    expect(await c.send("/as bob")).toContain("You are now bob");
    expect(await c.send("/home")).not.toContain("Set API key");
  });

  it("unknown commands get a sentence, not a crash", async () => {
    c = await startConsole();
    expect(await c.send("/edge frobnicate")).toContain(
      `I don't know "/edge frobnicate". Try /edge help for the list of commands.`,
    );
    expect(await c.send("/deploy now")).toContain("/deploy is not a command here");
    expect(await c.send("hello bot")).toContain("Only slash commands reach edgeops");
    expect(await c.send("7")).toContain("There is no button [7] on screen.");
    expect(await c.send("/as mallory")).toContain('There is no user "mallory"');
    expect(await c.send("/help")).toContain("/in #<channel>");
    expect(await c.send("/edge help")).toContain("edgeops: your edge platform from Slack");
  });

  it("tells ephemeral from in-channel answers, shares in channel, and keeps others' ephemeral buttons theirs", async () => {
    c = await startConsole();
    expect(await c.send("/in #ops")).toContain("You are now in #ops.");
    const pub = await c.send("/edge zones public");
    expect(pub).toContain("--- #ops · edgeops ---\n== Shield zones ==");

    const mine = await c.send("/edge apps");
    expect(mine).toContain("--- #ops · edgeops · only visible to alice ---");
    const share = buttonNumber(mine, "Share in channel");
    await c.send("/as bob");
    expect(await c.send(String(share))).toContain(`Only alice can see [${share}]: /as alice first.`);
    await c.send("/as alice");
    const shared = await c.send(String(share));
    expect(shared).toContain("--- #ops · edgeops ---\n== Magic Containers applications ==");
    expect(shared).toContain("--- #ops · a message from edgeops was deleted ---");
  });

  it("with EDGE_API_KEY and EDGE_API_URL it talks to that service and starts no simulator", async () => {
    const key = "deployment-key-4242424242";
    realService = await startSimulator({ apiKeys: [key] });
    c = await startConsole({ env: { EDGE_API_KEY: key, EDGE_API_URL: realService.url } });
    expect(c.handle.sim).toBeUndefined();
    expect(c.output).toContain(`Edge API: ${realService.url} with the key from EDGE_API_KEY.`);
    expect(c.output).not.toContain(key);
    expect(await c.send("/edge zones")).toContain("== Shield zones ==");
    // The page, and (in the background) the lists that name its zones: all with that key.
    expect(realService.requests.filter((r) => r.query.perPage === "10").map((r) => r.path)).toEqual([
      "/shield/shield-zones",
    ]);
    expect(new Set(realService.requests.map((r) => r.headers.accesskey))).toEqual(new Set([key]));
  });

  it("/quit ends the session before the input does", async () => {
    c = await startConsole();
    c.type("/quit");
    // The session ends on /quit while the input is still open (the test's timeout is the guard).
    const ended = await c.handle.done.then(() => true);
    expect(ended).toBe(true);
  });
});
