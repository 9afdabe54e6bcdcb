/**
 * Watch the event loop: a timer asks to run every `everyMs`; how late it ran is how long the loop was
 * stalled (by synchronous work such as a blocking database wait). `stop()` returns the longest stall.
 */
export function watchEventLoop(everyMs = 5): { stop(): number } {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - everyMs);
    last = now;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      longest = Math.max(longest, performance.now() - last - everyMs);
      return longest;
    },
  };
}

/**
 * The longest stall a store wait may cause before it counts as freezing the event loop. A busy wait that
 * blocks the thread stalls it for the whole lock wait (seconds); a loaded two-core machine running several
 * test files at once delays a 5 ms timer by tens of milliseconds, now and then a few hundred.
 */
export const FROZEN_LOOP_MS = 500;
