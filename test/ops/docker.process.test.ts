import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const dockerfile = readFileSync(new URL("../../Dockerfile", import.meta.url), "utf8");
const IMAGE = "$" + "{NODE_IMAGE}";
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));

describe("Dockerfile", () => {
  it("builds in one stage and runs production files only in a slim Node LTS stage, as a non-root user", () => {
    const froms = instructions.filter((l) => l.startsWith("FROM "));
    expect(froms).toEqual([`FROM ${IMAGE} AS build`, `FROM ${IMAGE} AS runtime`]);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:(22|24)-bookworm-slim$/m);
    const runtime = instructions.slice(instructions.indexOf(`FROM ${IMAGE} AS runtime`));
    expect(runtime.filter((l) => l.startsWith("COPY"))).toEqual([
      "COPY --from=build /app/package.json ./package.json",
      "COPY --from=build /app/node_modules ./node_modules",
      "COPY --from=build /app/dist ./dist",
    ]);
    expect(runtime).toContain("USER node");
    expect(runtime.findLast((l) => l.startsWith("USER "))).toBe("USER node");
    expect(runtime.join("\n")).toMatch(/DATA_DIR=\/data/);
    expect(runtime).toContain('VOLUME ["/data"]');
    expect(runtime.find((l) => l.startsWith("HEALTHCHECK"))).toMatch(/\/healthz/);
    // One entry point for every transport: the environment picks Socket Mode, HTTP or OAuth.
    const entry = instructions.filter((l) => l.startsWith("CMD ") || l.startsWith("ENTRYPOINT "));
    expect(entry).toEqual(['CMD ["node", "dist/main.js"]']);
    // The image runs the bot as `npm run start:prod` does (and so does the bench's bot, from that script).
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(`exec ${(JSON.parse(entry[0]?.slice("CMD ".length) ?? "[]") as string[]).join(" ")}`).toBe(
      pkg.scripts["start:prod"],
    );
  });

  it(".dockerignore keeps secrets and local state out of the build context", () => {
    const ignore = readFileSync(new URL("../../.dockerignore", import.meta.url), "utf8").split("\n");
    for (const entry of ["node_modules", "dist", "data", ".env", ".git"]) expect(ignore).toContain(entry);
  });

  it("scripts/docker-smoke.sh runs the Dockerfile's own commands (drift check)", async () => {
    const { stdout } = await run("bash", ["scripts/docker-smoke.sh", "--check"], { cwd: root });
    expect(stdout).toContain("the Dockerfile and this script agree");
  });

  const smoke = process.env.CI === "true" || process.env.EDGEOPS_DOCKER_SMOKE === "1";
  it.runIf(smoke)(
    "docker smoke: the Dockerfile's build and start commands in a clean copy answer /healthz and stop on SIGTERM",
    async () => {
      const { stdout } = await run("bash", ["scripts/docker-smoke.sh"], {
        cwd: root,
        timeout: 600_000,
        maxBuffer: 16 * 1024 * 1024,
      });
      expect(stdout).toContain("/healthz: ok");
      expect(stdout).toContain("SIGTERM: graceful stop, exit 0");
      expect(stdout).toContain("docker-smoke: passed");
    },
    660_000,
  );
});
