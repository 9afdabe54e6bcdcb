import { describe, expect, it } from "vitest";
import { createAdversary, seedFromEnv } from "../../../tools/simulator/adversary.js";

const items = Array.from({ length: 20 }, (_, i) => i);

describe("the simulator's adversary", () => {
  it("is friendly without a seed: the first option, no inconvenient branch, the order unchanged", () => {
    const a = createAdversary();
    expect(a.strict).toBe(false);
    expect(a.choose("x.spelling", ["waf", "WAF", "Waf"])).toBe("waf");
    expect(a.chance("x.drop", 1)).toBe(false);
    expect(a.order("x.order", items)).toEqual(items);
  });

  it("answers the same for the same seed, label and salt, whatever was asked before", () => {
    const first = createAdversary({ seed: 42 });
    const second = createAdversary({ seed: 42 });
    second.choose("other", [1, 2, 3]);
    second.order("other", items);
    expect(second.order("x.order", items, 9)).toEqual(first.order("x.order", items, 9));
    expect(second.choose("x.spelling", ["a", "b", "c", "d"], "zone-1")).toBe(
      first.choose("x.spelling", ["a", "b", "c", "d"], "zone-1"),
    );
  });

  it("varies its readings across seeds and salts", () => {
    const spellings = new Set<string>();
    const orders = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const a = createAdversary({ seed });
      spellings.add(a.choose("x.spelling", ["a", "b", "c"]));
      orders.add(a.order("x.order", items, seed % 3).join(","));
    }
    expect(spellings).toEqual(new Set(["a", "b", "c"]));
    expect(orders.size).toBeGreaterThan(30);
    const chances = Array.from({ length: 1000 }, (_, i) =>
      createAdversary({ seed: i }).chance("x.drop", 0.25),
    );
    const taken = chances.filter(Boolean).length;
    expect(taken).toBeGreaterThan(180);
    expect(taken).toBeLessThan(320);
  });

  it("keeps every item when it reorders them", () => {
    const a = createAdversary({ seed: 3 });
    expect([...a.order("x.order", items)].sort((p, q) => p - q)).toEqual(items);
  });

  it("answers a pinned reading whatever the seed, by index or by value", () => {
    const a = createAdversary({
      seed: 5,
      pin: { "x.spelling": 2, "x.case": "WAF", "x.drop": true, "x.order": "reverse" },
    });
    expect(a.strict).toBe(true);
    expect(a.choose("x.spelling", ["a", "b", "c"])).toBe("c");
    expect(a.choose("x.case", ["waf", "WAF"])).toBe("WAF");
    expect(a.chance("x.drop", 0)).toBe(true);
    expect(a.order("x.order", [1, 2, 3])).toEqual([3, 2, 1]);
    expect(() => a.choose("x.case", ["waf", "Waf"])).toThrow(/not an option of x.case/);
  });

  it("reads EDGE_SIMULATOR_SEED as a whole number, unset or empty as friendly, anything else as an error", () => {
    expect(seedFromEnv(undefined)).toBeUndefined();
    expect(seedFromEnv(" ")).toBeUndefined();
    expect(seedFromEnv("1009")).toBe(1009);
    expect(() => seedFromEnv("strict")).toThrow(/whole number/);
    expect(() => seedFromEnv("-1")).toThrow(/whole number/);
  });
});
