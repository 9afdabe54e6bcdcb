import { closestMatch } from "leven";

/**
 * The one known word what was typed is a slip from (a letter or two; three in a longer word), or undefined:
 * for the sentences that refuse a word, wherever it is read.
 */
export function nearest(typed: string, known: readonly string[]): string | undefined {
  const maxDistance = typed.length > 7 ? 3 : typed.length > 3 ? 2 : 1;
  return closestMatch(typed.toLowerCase(), known, { maxDistance });
}

/** " Did you mean aiscraper?", or "" when no known word is near. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const near = nearest(typed, known);
  return near === undefined ? "" : ` Did you mean ${near}?`;
}
