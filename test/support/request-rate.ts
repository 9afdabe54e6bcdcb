/** The most of `times` (milliseconds) within any 1000 ms window: the busiest second of requests. */
export function busiestSecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi] as number) - (sorted[lo] as number) >= 1000) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}
