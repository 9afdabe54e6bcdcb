/**
 * A duration like 30m, 2h, 1h30m (and 1d, 1d12h with `days`) in ms; NaN for anything else. Callers set
 * their own bounds and sentence.
 */
export function durationMs(word: string | undefined, o: { days: boolean }): number {
  const m = word
    ? (o.days
        ? /^(?:(\d{1,2})d)?(?:(\d{1,3})h)?(?:(\d{1,4})m)?$/
        : /^()(?:(\d{1,2})h)?(?:(\d{1,4})m)?$/
      ).exec(word.toLowerCase())
    : null;
  return m && (m[1] || m[2] || m[3])
    ? ((Number(m[1] || 0) * 24 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 60_000
    : Number.NaN;
}
