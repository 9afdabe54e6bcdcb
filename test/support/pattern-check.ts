import { expect } from "vitest";

/**
 * A check of source lines is not vacuous: each of `caught` matches one of its named `patterns`, and
 * none of `fine` does (each failure names its line).
 */
export function expectPatternsCatch(
  patterns: readonly [string, RegExp][],
  caught: readonly string[],
  fine: readonly string[],
): void {
  const matches = (line: string) => patterns.some(([, re]) => re.test(line));
  for (const line of caught) expect(matches(line), line).toBe(true);
  for (const line of fine) expect(matches(line), line).toBe(false);
}
