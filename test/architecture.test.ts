/**
 * The one-way house (docs/architecture.md), read from the import statements of src.
 *
 * (a) no import circle among src modules;
 * (b) the domain (src/changes, src/alerts, src/services, src/store, src/edge, and src/incident should the
 *     incident read model get its own folder) never imports src/slack, src/jobs or src/app;
 * (c) src/slack never imports src/jobs or src/app.
 *
 * The graph comes from a regex over `from "…"`, `import("…")` and bare `import "…"` (type-only imports count:
 * a domain module that names a Slack type still depends on Slack). Relative specifiers are resolved against
 * the importing file (`./x.js` is `./x.ts`); package imports are not part of the graph.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "src");

/**
 * Today's known violations, exact file → file. Engineers are removing them; the test fails on any
 * edge not listed here AND on any listed edge that no longer exists, so this list can only shrink: when your
 * change removes one, delete its line.
 */
const ALLOWED_UPWARD: readonly string[] = [];

/** Import circles known today, as the edges that lie on them. */
const ALLOWED_CIRCLE_EDGES: readonly string[] = [];

const DOMAIN = ["src/changes/", "src/alerts/", "src/services/", "src/store/", "src/edge/", "src/incident/"];
const ENTRIES_AND_ROOT = /^src\/(jobs|app)\//;

type Edge = readonly [from: string, to: string];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

const SPECIFIERS = [
  /\bfrom\s*["']([^"']+)["']/g, // import … from "x", export … from "x"
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g, // import("x")
  /^\s*import\s*["']([^"']+)["']/gm, // import "x"
];

const posix = (path: string) => path.split(sep).join("/");

/** Every src → src import edge, and the relative specifiers no file answers (a misread import). */
function importGraph(): { files: string[]; edges: Edge[]; unresolved: string[] } {
  const files = sourceFiles(SRC);
  const edges: Edge[] = [];
  const unresolved: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const specifiers = new Set<string>();
    for (const pattern of SPECIFIERS) for (const m of text.matchAll(pattern)) if (m[1]) specifiers.add(m[1]);
    for (const specifier of specifiers) {
      if (!specifier.startsWith(".")) continue;
      const base = resolve(dirname(file), specifier);
      const target = [base.replace(/\.js$/, ".ts"), base, `${base}.ts`, join(base, "index.ts")].find(
        (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
      );
      if (!target) unresolved.push(`${posix(relative(ROOT, file))} imports "${specifier}"`);
      else if (target.startsWith(SRC + sep))
        edges.push([posix(relative(ROOT, file)), posix(relative(ROOT, target))]);
    }
  }
  return { files: files.map((f) => posix(relative(ROOT, f))), edges, unresolved };
}

/** The edges whose two ends are in one strongly connected component: exactly the edges on some circle. */
function circleEdges(files: string[], edges: Edge[]): Edge[] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const [from, to] of edges) next.get(from)?.push(to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const component = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  let counter = 0;
  let components = 0;
  // Tarjan's algorithm; the graph (a few hundred files) is shallow enough for recursion.
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) === index.get(v)) {
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.set(w, components);
      } while (w !== v);
      components++;
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return edges.filter(([from, to]) => from !== to && component.get(from) === component.get(to));
}

const isUpward = ([from, to]: Edge) =>
  (DOMAIN.some((d) => from.startsWith(d)) && (to.startsWith("src/slack/") || ENTRIES_AND_ROOT.test(to))) ||
  (from.startsWith("src/slack/") && ENTRIES_AND_ROOT.test(to));

/** What is new (not allowed) and what is stale (allowed, but gone), as one readable message; "" when neither. */
function compare(what: string, found: readonly string[], allowed: readonly string[]): string {
  const added = found.filter((e) => !allowed.includes(e));
  const stale = allowed.filter((e) => !found.includes(e));
  const lines: string[] = [];
  if (added.length)
    lines.push(`New ${what} (remove the import; the house is one-way):`, ...added.map((e) => `  ${e}`));
  if (stale.length)
    lines.push(
      `Allowlisted ${what} that no longer exist (delete them from the list):`,
      ...stale.map((e) => `  ${e}`),
    );
  return lines.join("\n");
}

describe("the import graph of src", () => {
  const { files, edges, unresolved } = importGraph();
  const label = ([from, to]: Edge) => `${from} -> ${to}`;

  it("is read completely: every relative import names a file", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(100);
    expect(unresolved, "relative imports that resolve to no file").toEqual([]);
  });

  it("has no import circle beyond the allowlisted ones, and each allowlisted one still exists", () => {
    const found = [...new Set(circleEdges(files, edges).map(label))].sort();
    expect(compare("import-circle edges", found, ALLOWED_CIRCLE_EDGES), "circle edges").toBe("");
  });

  it("runs one way: the domain never imports slack, jobs or app, and slack never imports jobs or app", () => {
    const found = [...new Set(edges.filter(isUpward).map(label))].sort();
    expect(compare("upward imports", found, ALLOWED_UPWARD), "upward imports").toBe("");
  });

  it("finds a circle and an upward import when there is one (the checks are not vacuous)", () => {
    const a = "src/changes/a.ts";
    const b = "src/changes/b.ts";
    const c = "src/changes/c.ts";
    const ring: Edge[] = [
      [a, b],
      [b, c],
      [c, a],
    ];
    expect(circleEdges([a, b, c], ring)).toHaveLength(3);
    expect(circleEdges([a, b, c], ring.slice(0, 2))).toEqual([]);
    expect(isUpward(["src/store/x.ts", "src/slack/y.ts"])).toBe(true);
    expect(isUpward(["src/edge/x.ts", "src/app/compose.ts"])).toBe(true);
    expect(isUpward(["src/slack/x.ts", "src/jobs/y.ts"])).toBe(true);
    expect(isUpward(["src/slack/x.ts", "src/changes/y.ts"])).toBe(false);
    expect(isUpward(["src/jobs/x.ts", "src/slack/y.ts"])).toBe(false);
  });
});
