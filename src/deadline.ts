import type { Clock } from "./clock.js";

/**
 * The value of `work`, or of `onTimeout()` when `ms` pass first on `clock`. The timer is cleared either way
 * and never keeps the process alive; a late rejection of `work` is handled by the race.
 */
export async function withDeadline<T>(
  clock: Clock,
  work: Promise<T>,
  ms: number,
  onTimeout: () => T,
): Promise<T> {
  let cancel: (() => void) | undefined;
  const late = new Promise<T>((resolve) => {
    cancel = clock.setTimeout(() => resolve(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    cancel?.();
  }
}
