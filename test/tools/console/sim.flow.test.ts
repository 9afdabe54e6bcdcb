/**
 * `/sim` in the local console: staging an attack and an app failure in the built-in simulator, calming
 * everything, and a sentence for every kind of bad input. What the bot then reads (`/edge apps`) shows the plan.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAdversary, SIM_IDS } from "../../../tools/simulator/index.js";
import { type ConsoleDriver, startConsole } from "./support.js";

let c: ConsoleDriver | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

const sim = () => {
  const s = c?.handle.sim;
  if (!s) throw new Error("the console should be running the simulator");
  return s;
};
/** The apps' page line of one app, e.g. ":red_circle: *name*  Failing  · …". */
const lineOf = (output: string, name: string) => output.split("\n").find((l) => l.includes(`*${name}*`));

describe("/sim in the local console", () => {
  it("is listed in the banner and /help", async () => {
    c = await startConsole();
    expect(c.output).toContain("/sim attack <zone>");
    const help = await c.send("/help");
    expect(help).toContain("/sim attack <zone id|domain> [minutes]");
    expect(help).toContain("/sim fail <app id|name> [minutes]");
    expect(help).toContain("/sim calm");
  });

  it("stages an attack on a zone named by domain, starting at the simulator's clock", async () => {
    c = await startConsole();
    const before = sim().now();
    const out = await c.send(`/sim attack ${SIM_IDS.domainUnderAttack.toUpperCase()} 20`);
    expect(out).toContain(`Attack staged on shield zone ${SIM_IDS.zoneUnderAttack}`);
    expect(out).toContain("for 20 minutes");
    const attacks = sim().state.shieldTraffic.get(SIM_IDS.zoneUnderAttack)?.attacks ?? [];
    // The seeded attack and ours.
    expect(attacks).toHaveLength(2);
    expect(attacks[1]).toMatchObject({ durationMinutes: 20, rampMinutes: 2, peakPerMinute: 3_000 });
    expect(attacks[1]?.startedAt).toBeGreaterThanOrEqual(before);
    expect(attacks[1]?.startedAt).toBeLessThanOrEqual(sim().now());

    const byId = await c.send(`/sim attack ${SIM_IDS.zoneQuiet}`);
    expect(byId).toContain(`Attack staged on shield zone ${SIM_IDS.zoneQuiet}`);
    expect(byId).toContain("for 30 minutes");
  });

  it("fails an app by name until calm, and /edge apps shows it", async () => {
    c = await startConsole();
    const app = sim().state.apps.find((a, i) => i < 20 && a.status === "active");
    if (!app) throw new Error("the first page should hold an active app");
    expect(lineOf(await c.send("/edge apps"), app.name)).toContain("Active");

    expect(await c.send(`/sim fail ${app.name}`)).toContain(
      `App ${app.id} is failing from now, until /sim calm.`,
    );
    expect(lineOf(await c.send("/edge apps"), app.name)).toContain("Failing");

    const calm = await c.send("/sim calm");
    expect(calm).toContain(
      `Calm: ended the attack on shield zone ${SIM_IDS.zoneUnderAttack}; ${app.id} back to active.`,
    );
    expect(lineOf(await c.send("/edge apps"), app.name)).toContain("Active");
  });

  it("fails an app for some minutes: back to active afterwards on the simulator's clock", async () => {
    c = await startConsole();
    const app = sim().state.apps[0];
    if (!app) throw new Error("no apps");
    expect(await c.send(`/sim fail ${app.id} 5`)).toContain(
      `App ${app.id} is failing from now and back to active in 5 minutes.`,
    );
    const timeline = sim().state.appStatusPlans.get(app.id) ?? [];
    expect(timeline.map((s) => s.status)).toEqual(["failing", "active"]);
    expect((timeline[1]?.at ?? 0) - (timeline[0]?.at ?? 0)).toBe(5 * 60_000);
  });

  it("answers bad input with a sentence that says what to type, and stages nothing", async () => {
    c = await startConsole();
    const cases: Array<[string, string]> = [
      ["/sim", "The simulator's fault plan:"],
      ["/sim help", "/sim attack <zone id|domain> [minutes]"],
      ["/sim explode", "/sim explode is not a fault the simulator knows."],
      ["/sim attack", "Which zone? For example: /sim attack shop.acme-example.com 20"],
      ["/sim attack nowhere.example", 'There is no shield zone "nowhere.example" in the simulator'],
      [`/sim attack ${SIM_IDS.unknownShieldZone}`, `There is no shield zone "${SIM_IDS.unknownShieldZone}"`],
      [
        `/sim attack ${SIM_IDS.zoneQuiet} soon`,
        '"soon" is not a number of minutes: give a whole number from 1 to 1440',
      ],
      [`/sim attack ${SIM_IDS.zoneQuiet} 0`, '"0" is not a number of minutes'],
      [`/sim attack ${SIM_IDS.zoneQuiet} 99999`, '"99999" is not a number of minutes'],
      [`/sim attack ${SIM_IDS.zoneQuiet} 5 extra`, "Too many words after /sim attack."],
      ["/sim fail", "Which app? For example: /sim fail"],
      ["/sim fail <script>", 'There is no app "<script>" in the simulator'],
      [`/sim fail ${SIM_IDS.appWithUnknownStatus} -3`, '"-3" is not a number of minutes'],
      ["/sim calm now", "/sim calm takes no arguments"],
    ];
    for (const [line, expected] of cases) expect(await c.send(line), line).toContain(expected);
    expect(sim().state.shieldTraffic.get(SIM_IDS.zoneQuiet)?.attacks).toEqual([]);
    expect(sim().state.appStatusPlans.size).toBe(0);
  });

  it("changes a zone's setting as the dashboard would (for /edge watch config), and says what to type on bad input", async () => {
    c = await startConsole();
    const zone = () => sim().state.shieldZones.find((z) => z.shieldZoneId === SIM_IDS.zoneUnderAttack);
    const watched = await c.send(`/edge watch config ${SIM_IDS.zoneUnderAttack}`);
    expect(watched).toContain(`Watching the settings of shield zone ${SIM_IDS.zoneUnderAttack}`);
    const requestsBefore = sim().requests.length;
    const mode = zone()?.wafExecutionMode === 0 ? "block" : "log";
    expect(await c.send(`/sim dashboard ${SIM_IDS.domainUnderAttack} waf-mode ${mode}`)).toContain(
      `Changed in the dashboard (not through edgeops): shield zone ${SIM_IDS.zoneUnderAttack} waf-mode`,
    );
    expect(zone()?.wafExecutionMode).toBe(mode === "log" ? 0 : 1);
    // Behind the API's back: no request reached the simulator's HTTP side.
    expect(
      sim()
        .requests.slice(requestsBefore)
        .filter((r) => r.method !== "GET"),
    ).toEqual([]);
    expect(await c.send(`/sim dashboard ${SIM_IDS.zoneUnderAttack} ddos challenge`)).toContain("→ challenge");
    expect(zone()?.dDoSShieldSensitivity).toBe(4);
    const cases: Array<[string, string]> = [
      ["/sim dashboard", "Which zone, setting and value?"],
      [`/sim dashboard ${SIM_IDS.zoneQuiet} waf-mode`, "Which zone, setting and value?"],
      ["/sim dashboard nowhere.example waf log", 'There is no shield zone "nowhere.example"'],
      [`/sim dashboard ${SIM_IDS.zoneQuiet} colour red`, '"colour" is not a setting /sim dashboard changes'],
      [
        `/sim dashboard ${SIM_IDS.zoneQuiet} waf-mode maybe`,
        '"maybe" is not a value of waf-mode: use log, block.',
      ],
      [`/sim dashboard ${SIM_IDS.zoneQuiet} waf on now`, "Too many words after /sim dashboard."],
    ];
    for (const [line, expected] of cases) expect(await c.send(line), line).toContain(expected);
  });

  it("turns the strict simulator on with a seed that replays, and back to friendly", async () => {
    c = await startConsole();
    expect(sim().adversary.strict).toBe(false);
    const strict = await c.send("/sim strict 7");
    expect(strict).toContain("Strict simulator, seed 7");
    expect(strict).toContain("/sim strict 7 replays them");
    expect(sim().adversary.seed).toBe(7);
    expect(sim().adversary.order("probe", [1, 2, 3, 4, 5, 6, 7, 8])).toEqual(
      createAdversary({ seed: 7 }).order("probe", [1, 2, 3, 4, 5, 6, 7, 8]),
    );
    const fresh = await c.send("/sim strict");
    expect(fresh).toMatch(/Strict simulator, seed \d+/);
    expect(sim().adversary.seed).toEqual(Number(/seed (\d+)/.exec(fresh)?.[1]));
    expect(await c.send("/sim friendly")).toContain("Friendly simulator");
    expect(sim().adversary.strict).toBe(false);
    for (const [line, expected] of [
      ["/sim strict seven", '"seven" is not a seed: give a whole number'],
      ["/sim strict 7 8", "/sim strict takes one seed at most"],
      ["/sim friendly now", "/sim friendly takes no arguments"],
    ] as const)
      expect(await c.send(line), line).toContain(expected);
    expect(sim().adversary.strict).toBe(false);
  });

  it("moves the console's time with /sim clock: a watch's checks, the alert and an app's planned recovery run without waiting", async () => {
    c = await startConsole();
    const app = sim().state.apps[0];
    if (!app) throw new Error("no apps");
    expect(await c.send("/sim clock")).toContain("(as this computer's clock)");
    await c.send("/in #incident");
    expect(await c.send(`/edge watch zone ${SIM_IDS.zoneQuiet}`)).toContain(
      `Watching shield zone ${SIM_IDS.zoneQuiet}`,
    );
    await c.send(`/sim fail ${app.id} 5`);
    // The watch's first checks learn the zone's usual, at the moved time.
    const moved = await c.send("/sim clock +3m");
    expect(moved).toMatch(/Console time moved 3 min forward, to \d{4}-\d\d-\d\d \d\d:\d\d UTC \(3 min ahead/);
    expect(await c.send("/edge watch list")).toMatch(/ · checked \d{4}-/);
    expect(await c.send(`/sim attack ${SIM_IDS.zoneQuiet} 6`)).toContain("Attack staged");
    const before = c.output.length;
    await c.send("/sim clock +4m");
    await c.until(
      () => c?.output.slice(before).includes(`Attack on shield zone ${SIM_IDS.zoneQuiet}`) ?? false,
      "the attack alert",
    );
    // Seven minutes on, at the simulator's clock too: the app failing for five is active again.
    expect(lineOf(await c.send("/edge apps"), app.name)).toContain("Active");
    const ahead = c.handle.deps.clock.now() - Date.now();
    expect(ahead).toBeGreaterThan(7 * 60_000 - 1_000);
    expect(ahead).toBeLessThan(7 * 60_000 + 1_000);
    expect(await c.send("/sim clock")).toContain("7 min ahead of this computer's clock");
  });

  it("answers a /sim clock it cannot do with what to type, and leaves the time alone", async () => {
    c = await startConsole();
    const cases: Array<[string, string]> = [
      ["/sim clock -5m", "Time only moves forward here"],
      ["/sim clock soon", '"soon" is not a duration to move by: give minutes or hours up to 24h'],
      ["/sim clock +25h", '"+25h" is not a duration to move by'],
      ["/sim clock +0m", '"+0m" is not a duration to move by'],
      ["/sim clock 5m 6m", "/sim clock takes one duration, e.g. /sim clock +30m"],
    ];
    for (const [line, expected] of cases) expect(await c.send(line), line).toContain(expected);
    expect(Math.abs(c.handle.deps.clock.now() - Date.now())).toBeLessThan(1_000);
  });

  it("says so when the console talks to a real Edge API", async () => {
    c = await startConsole({
      env: { EDGE_API_KEY: "real-key-not-the-simulator", EDGE_API_URL: "http://127.0.0.1:9" },
    });
    expect(c.handle.sim).toBeUndefined();
    expect(await c.send("/sim calm")).toContain("/sim needs the built-in simulator");
    expect(await c.send("/sim clock +5m")).toContain("this console talks to a real Edge API");
  });
});

describe("the console's App Home", () => {
  it("lists the open alerts of the console's channels (everyone is in every channel)", async () => {
    c = await startConsole();
    await c.send("/in #incident");
    const { store } = c.handle.deps;
    const created = await store.watches.createIfRoom(
      {
        teamId: "T0CONSOLE",
        channelId: "C0INCIDENT",
        createdBy: "U0ALICE",
        kind: "zone",
        target: String(SIM_IDS.zoneUnderAttack),
        options: { sensitivity: "normal", label: SIM_IDS.domainUnderAttack },
        nextPollAt: Date.now() + 3_600_000,
      },
      { perChannel: 10, perWorkspace: 10 },
    );
    if (created.kind === "full") throw new Error("full");
    await store.episodes.open({
      watchId: created.item.id,
      teamId: "T0CONSOLE",
      channelId: "C0INCIDENT",
      subject: String(SIM_IDS.zoneUnderAttack),
      seq: 1,
      kind: "attack",
      details: {
        subject: {
          kind: "zone",
          shieldZoneId: SIM_IDS.zoneUnderAttack,
          label: SIM_IDS.domainUnderAttack,
          readings: [],
          topOffender: null,
          ddosSensitivity: null,
        },
        reopened: 0,
      },
    });
    const home = await c.send("/home");
    expect(home).toContain("*Open alerts in your channels* (1)");
    expect(home).toContain(`Attack on ${SIM_IDS.domainUnderAttack} (shield zone ${SIM_IDS.zoneUnderAttack})`);
    expect(home).toContain("#incident");
  });
});
