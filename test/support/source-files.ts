import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The checkout's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Every .ts/.js/.mjs file under `dir` (not .d.ts, not under a `fixtures` folder). */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "fixtures" ? [] : sourceFiles(path);
    return /\.(ts|js|mjs)$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** A path from the root, with forward slashes: "src/clock.ts". */
export const fromRoot = (path: string) => relative(ROOT, path).split(sep).join("/");

/** A file's code without its comments (a comment may name setTimeout; code may not). */
export function codeOf(path: string): string {
  return readFileSync(path, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/**
 * The files whose code matches any of `patterns`, as "path: name" lines (each file once a pattern): what
 * the architecture checks (time in src, waits in tests) report.
 */
export function matchesIn(files: readonly string[], patterns: readonly [string, RegExp][]): string[] {
  return files.flatMap((file) => {
    const text = codeOf(file);
    return patterns.filter(([, re]) => re.test(text)).map(([what]) => `${fromRoot(file)}: ${what}`);
  });
}
