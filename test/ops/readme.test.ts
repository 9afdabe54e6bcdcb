import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
/** Configuration, endpoints and metrics moved from the README to docs/operations.md. */
const operations = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
const example = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");

/** Rows of docs/operations.md's "## Configuration" table: variable → default ("" for unset). */
function operationsConfigTable(): Map<string, string> {
  const section = operations.split(/^## /m).find((s) => s.startsWith("Configuration\n"));
  if (!section) throw new Error("docs/operations.md has no ## Configuration section");
  const rows = new Map<string, string>();
  for (const line of section.split("\n")) {
    const m = /^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|\s*([^|]+?)\s*\|\s*(.+?)\s*\|$/.exec(line.trim());
    if (!m) continue;
    const def = (m[2] ?? "").trim();
    rows.set(m[1] ?? "", def === "unset" ? "" : def.replace(/^`|`$/g, ""));
    expect((m[3] ?? "").trim().length, `${m[1]} has a meaning`).toBeGreaterThan(10);
  }
  return rows;
}

function envExample(): Map<string, string> {
  return new Map(
    [...example.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1] ?? "", (m[2] ?? "").trim()]),
  );
}

describe("README and docs/operations.md", () => {
  it("starts with the two quick-start commands", () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    expect(firstBlock.split("\n")[0]).toMatch(/^npm ci && npm start\s/);
    expect(firstBlock.split("\n")[1]).toMatch(/^npm test\s/);
    expect(readme.indexOf("npm ci && npm start")).toBeLessThan(400);
  });

  it("documents every configuration variable, with the same defaults as .env.example and loadConfig", () => {
    const table = operationsConfigTable();
    const env = envExample();
    expect([...table.keys()].sort()).toEqual([...CONFIG_VARIABLES].sort());
    expect([...table.keys()].sort()).toEqual([...env.keys()].sort());
    for (const [name, def] of table) expect(def, `default of ${name}`).toBe(env.get(name));
    // The defaults written down are the ones loadConfig applies.
    const fromExample = loadConfig(Object.fromEntries(env));
    expect(fromExample).toEqual(loadConfig({}));
  });

  it("names every endpoint and every metric the bot serves", async () => {
    const { createMetrics } = await import("../../src/ops/metrics.js");
    const names = (await createMetrics({ defaults: false }).registry.getMetricsAsJSON()).map((m) => m.name);
    for (const name of names) {
      const documented =
        operations.includes(`\`${name}\``) ||
        // edgeops_edge_queue_keys, `_waiting`, `_in_flight` share a row
        operations.includes(`\`_${name.replace(/^edgeops_edge_queue_/, "")}\``);
      expect(documented, `${name} in docs/operations.md`).toBe(true);
    }
    for (const path of ["/healthz", "/readyz", "/metrics"]) expect(operations).toContain(`\`GET ${path}\``);
  });
});
