/**
 * Waiting for something that happens, never for time: `until(find)` checks now and again at each `notify()`
 * (a recorded call, a printed line, a finished write), and resolves with what `find` found. Its timeout is a
 * guard: it fails the test that waited in vain, saying what for; it never moves the test along.
 */
export interface EventWaiter {
  /** Something happened: check every waiting `find` again. */
  notify(): void;
  until<T>(find: () => T | undefined | false, what: () => string, guardMs?: number): Promise<T>;
}

export function eventWaiter(): EventWaiter {
  const waiters = new Set<() => void>();
  return {
    notify() {
      for (const check of [...waiters]) check();
    },
    until<T>(find: () => T | undefined | false, what: () => string, guardMs = 15_000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = () => {
          const found = find();
          if (found === undefined || found === false) return;
          waiters.delete(check);
          clearTimeout(guard);
          resolve(found);
        };
        const guard = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out after ${guardMs} ms waiting for ${what()}`));
        }, guardMs);
        waiters.add(check);
        check();
      });
    },
  };
}
