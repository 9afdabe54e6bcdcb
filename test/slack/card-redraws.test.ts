import { describe, expect, it } from "vitest";
import { CardRedraws } from "../../src/slack/card-redraws.js";

/** A draw the test ends by hand, recording when it started. */
function gate(log: string[], name: string) {
  let end = () => {};
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  return {
    draw: async () => {
      log.push(`${name} started`);
      await ended;
      log.push(`${name} ended`);
    },
    end: () => end(),
  };
}

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe("CardRedraws", () => {
  it("draws one card one redraw at a time; those asked while one waits are one, the last asked", async () => {
    const redraws = new CardRedraws();
    const log: string[] = [];
    const first = gate(log, "first");
    const second = gate(log, "second");
    const third = gate(log, "third");
    const a = redraws.redraw("R1", first.draw);
    await turns();
    const b = redraws.redraw("R1", second.draw);
    const c = redraws.redraw("R1", third.draw);
    await turns();
    expect(log).toEqual(["first started"]);
    first.end();
    await a;
    await turns();
    expect(log).toEqual(["first started", "first ended", "third started"]);
    third.end();
    await Promise.all([b, c]);
    expect(log).toEqual(["first started", "first ended", "third started", "third ended"]);
    expect(redraws.size).toBe(0);
  });

  it("draws different cards at the same time", async () => {
    const redraws = new CardRedraws();
    const log: string[] = [];
    const one = gate(log, "R1");
    const two = gate(log, "R2");
    const both = [redraws.redraw("R1", one.draw), redraws.redraw("R2", two.draw)];
    await turns();
    expect(log).toEqual(["R1 started", "R2 started"]);
    one.end();
    two.end();
    await Promise.all(both);
    expect(redraws.size).toBe(0);
  });

  it("a redraw that fails does not stop the next", async () => {
    const redraws = new CardRedraws();
    const failed = redraws.redraw("R1", async () => {
      throw new Error("Slack said no");
    });
    await turns();
    let drawn = false;
    const next = redraws.redraw("R1", async () => {
      drawn = true;
    });
    await expect(failed).rejects.toThrow("Slack said no");
    await next;
    expect(drawn).toBe(true);
    expect(redraws.size).toBe(0);
  });

  it("knows the drawing it last sent for each card, and no other: a changed drawing or another card is new", () => {
    const redraws = new CardRedraws();
    const drawing = JSON.stringify(["C1", "1.000", "Approval needed", [{ type: "section" }]]);
    expect(redraws.alreadySent("R1", drawing)).toBe(false);
    redraws.sentNow("R1", drawing);
    expect(redraws.alreadySent("R1", drawing)).toBe(true);
    expect(redraws.alreadySent("R2", drawing)).toBe(false);
    expect(redraws.alreadySent("R1", drawing.replace("needed", "given"))).toBe(false);
    redraws.sentNow("R1", drawing.replace("needed", "given"));
    expect(redraws.alreadySent("R1", drawing)).toBe(false);
  });

  it("remembers the last 2,000 cards it drew: the least recently drawn is forgotten and drawn again", () => {
    const redraws = new CardRedraws();
    for (let i = 0; i <= 2_000; i++) redraws.sentNow(`R${i}`, `drawing ${i}`);
    expect(redraws.alreadySent("R0", "drawing 0")).toBe(false);
    expect(redraws.alreadySent("R1", "drawing 1")).toBe(true);
    expect(redraws.alreadySent("R2000", "drawing 2000")).toBe(true);
  });
});
