import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.js";

/**
 * compose.yaml (three replicas, PostgreSQL, Redis, Caddy) can't be started here: there is no container
 * engine. So its configuration is checked: it parses, the bots read only variables edgeops knows (with
 * a configuration loadConfig accepts), every service has a health check, and Caddy balances over
 * exactly the bot replicas on their /readyz.
 */

const root = new URL("../../", import.meta.url);
const composeText = readFileSync(new URL("compose.yaml", root), "utf8");
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const example = readFileSync(new URL(".env.example", root), "utf8");
const caddyfile = readFileSync(new URL("deploy/Caddyfile", root), "utf8");

interface Service {
  build?: unknown;
  image?: string;
  env_file?: string | string[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[] | string; interval?: string };
  depends_on?: Record<string, { condition: string }> | string[];
  stop_grace_period?: string;
  volumes?: string[];
}

const bots = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
const seconds = (d: string) => Number(/^(\d+)s$/.exec(d)?.[1] ?? Number.NaN);

describe("compose.yaml", () => {
  it("runs three bot replicas, PostgreSQL, Redis and a load balancer, each with a health check", () => {
    expect(bots.map(([name]) => name)).toEqual(["bot-1", "bot-2", "bot-3"]);
    for (const name of ["postgres", "redis", "caddy"]) expect(compose.services[name], name).toBeDefined();
    for (const [name, s] of Object.entries(compose.services)) {
      const test = s.healthcheck?.test;
      expect(Array.isArray(test) ? test.length : (test ?? "").length, `${name} health check`).toBeGreaterThan(
        1,
      );
    }
    for (const [, s] of bots) {
      expect(JSON.stringify(s.healthcheck?.test)).toContain("/readyz");
      expect(s.depends_on).toMatchObject({
        postgres: { condition: "service_healthy" },
        redis: { condition: "service_healthy" },
      });
      // A replica drains (SHUTDOWN_TIMEOUT_MS) before the engine kills it.
      expect(seconds(s.stop_grace_period ?? "0s") * 1000).toBeGreaterThan(loadConfig({}).shutdownTimeoutMs);
    }
  });

  it("the bots read only edgeops' own variables, share one PostgreSQL and one Redis, and their configuration loads", () => {
    for (const [name, s] of bots) {
      expect(s.env_file, name).toBe(".env");
      for (const v of Object.keys(s.environment ?? {}))
        expect(CONFIG_VARIABLES as readonly string[], `${name}: ${v}`).toContain(v);
      const env = s.environment ?? {};
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/edgeops:.*@postgres:5432\/edgeops$/);
      expect(env.REDIS_URL).toBe("redis://redis:6379");
      expect(Number(env.EXPECTED_REPLICAS)).toBe(bots.length);
      // .env starts as a copy of .env.example; compose's environment wins over it.
      const fromExample = Object.fromEntries(
        [...example.matchAll(/^([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1] ?? "", (m[2] ?? "").trim()]),
      );
      const merged = Object.fromEntries(
        Object.entries({ ...fromExample, ...env }).map(([k, v]) => [
          k,
          v.replace(/\$\{POSTGRES_PASSWORD[^}]*\}/, "secret"),
        ]),
      );
      const config = loadConfig({ ...merged, ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") });
      expect(config.production).toBe(true);
      expect(config.store.databaseUrl).toBe("postgres://edgeops:secret@postgres:5432/edgeops");
    }
  });

  it("every variable compose.yaml interpolates is documented in .env.example", () => {
    const used = new Set([...composeText.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] ?? ""));
    expect([...used].sort()).toEqual(["EDGEOPS_HOST", "POSTGRES_PASSWORD"]);
    for (const v of used)
      expect(
        (CONFIG_VARIABLES as readonly string[]).includes(v) || new RegExp(`^# ${v}=`, "m").test(example),
        `${v} in .env.example`,
      ).toBe(true);
  });

  it("Caddy balances over exactly the bot replicas, on PORT, only those whose /readyz answers", () => {
    const upstreams = /reverse_proxy\s+([^{]+)\{/.exec(caddyfile)?.[1]?.trim().split(/\s+/) ?? [];
    expect(upstreams).toEqual(bots.map(([name]) => `${name}:3000`));
    for (const [, s] of bots) expect(s.environment?.PORT).toBe("3000");
    expect(caddyfile).toMatch(/health_uri \/readyz/);
    expect(caddyfile).toMatch(/lb_policy round_robin/);
    expect(compose.services.caddy?.volumes).toContain("./deploy/Caddyfile:/etc/caddy/Caddyfile:ro");
  });
});
