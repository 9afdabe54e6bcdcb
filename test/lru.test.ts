import { describe, expect, it } from "vitest";
import { LruCache } from "../src/lru.js";

describe("LruCache", () => {
  it("holds at most max entries and drops the least recently used", () => {
    const lru = new LruCache<string, number>(3);
    lru.set("a", 1).set("b", 2).set("c", 3);
    expect(lru.get("a")).toBe(1); // a is now the most recently used
    lru.set("d", 4);
    expect([...lru.keys()]).toEqual(["c", "a", "d"]);
    expect(lru.has("b")).toBe(false);
    expect(lru.size).toBe(3);
  });

  it("peek and has do not count as use; setting an existing key does", () => {
    const lru = new LruCache<string, number>(2);
    lru.set("a", 1).set("b", 2);
    expect(lru.peek("a")).toBe(1);
    expect(lru.has("a")).toBe(true);
    lru.set("c", 3);
    expect([...lru.keys()]).toEqual(["b", "c"]);
    lru.set("b", 20);
    lru.set("d", 4);
    expect([...lru.keys()]).toEqual(["b", "d"]);
    expect(lru.get("b")).toBe(20);
  });

  it("keeps undefined values apart from missing keys, and deletes", () => {
    const lru = new LruCache<string, number | undefined>(2);
    lru.set("u", undefined).set("x", 1);
    expect(lru.get("u")).toBeUndefined();
    expect([...lru.keys()]).toEqual(["x", "u"]);
    expect(lru.delete("x")).toBe(true);
    expect(lru.delete("x")).toBe(false);
    lru.clear();
    expect(lru.size).toBe(0);
  });

  it("refuses a bound below one", () => {
    expect(() => new LruCache(0)).toThrow(RangeError);
    expect(() => new LruCache(1.5)).toThrow(RangeError);
  });
});
