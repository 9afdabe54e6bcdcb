import { afterEach, describe, expect, it } from "vitest";
import { type ProcessWorld, startProcessWorld, waitUntilReady } from "./process-support.js";

let world: ProcessWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const listAppsCalls = (w: ProcessWorld) => w.sim.requests.filter((r) => r.path.includes("/apps")).length;

describe("npm start as a process", () => {
  it("SIGTERM to the process npm start runs (not only to node) drains the command in flight and exits 0", async () => {
    world = await startProcessWorld();
    const w = world;
    const bot = w.spawn("npm", ["start"], { env: w.env({ SHUTDOWN_TIMEOUT_MS: "8000" }) });
    await waitUntilReady(`http://127.0.0.1:${await bot.port()}`, 10_000);
    w.sim.setLatency(1500);
    const cmd = await bot.command("apps");
    expect(cmd.status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (listAppsCalls(w) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(listAppsCalls(w)).toBe(1);

    // What an orchestrator or a shell reaches when it signals npm's child, e.g. `kill <pid>` from ps.
    process.kill(bot.childOfNpm(), "SIGTERM");
    const { code } = await bot.exited;
    expect(code).toBe(0);
    await bot.waitForLog("edgeops stopped");
    // The command in flight got its real answer, not the restart sentence.
    const answers = w.slack.responsesTo(cmd.responseId);
    expect(answers).toHaveLength(1);
    expect(JSON.stringify(answers[0]?.body)).not.toContain("restarting");
  }, 60_000);
});

describe("process-wide handlers (the real process, a fault injected with --import)", () => {
  const entry = ["--import", "tsx", "--import", "./test/ops/fixtures/fault.mjs", "src/main.ts"];

  it("an unhandled promise rejection is logged with its reason; edgeops keeps serving, then stops with exit 0", async () => {
    world = await startProcessWorld();
    const w = world;
    const bot = w.spawn(process.execPath, entry, { env: w.env({ EDGEOPS_TEST_FAULT: "rejection" }) });
    const port = await bot.port();
    bot.child.kill("SIGUSR2");
    const logged = await bot.waitForLog("unhandled promise rejection; edgeops keeps running");
    expect(logged.level).toBe("error");
    expect(JSON.stringify(logged.err)).toContain("test fault: a promise nobody awaited");
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const help = await bot.command("help");
    expect(help.status).toBe(200);
    await w.slack.waitForResponse(help.responseId);
    bot.child.kill("SIGTERM");
    expect((await bot.exited).code).toBe(0);
  }, 60_000);

  it("an uncaught exception is logged as fatal, edgeops drains as on SIGTERM and exits 1", async () => {
    world = await startProcessWorld();
    const w = world;
    const bot = w.spawn(process.execPath, entry, {
      env: w.env({ EDGEOPS_TEST_FAULT: "exception", SHUTDOWN_TIMEOUT_MS: "8000" }),
    });
    await waitUntilReady(`http://127.0.0.1:${await bot.port()}`, 10_000);
    w.sim.setLatency(1000);
    const cmd = await bot.command("apps");
    const deadline = Date.now() + 10_000;
    while (listAppsCalls(w) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    bot.child.kill("SIGUSR2");
    const { code } = await bot.exited;
    expect(code).toBe(1);
    const fatal = bot.logs.find((l) => l.msg === "uncaught exception; edgeops stops");
    expect(fatal?.level).toBe("fatal");
    expect(JSON.stringify(fatal?.err)).toContain("test fault: an exception nobody caught");
    expect(bot.logs.some((l) => l.msg === "edgeops stopped")).toBe(true);
    // The command in flight was finished before the exit.
    expect(w.slack.responsesTo(cmd.responseId)).toHaveLength(1);
  }, 60_000);
});
