/**
 * The value of `work`, or of `onTimeout()` when `ms` pass first. The timer is cleared either way and
 * never keeps the process alive; a late rejection of `work` is handled by the race.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout()), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
