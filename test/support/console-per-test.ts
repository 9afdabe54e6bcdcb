import { afterEach } from "vitest";
import { type ConsoleDriver, startConsole } from "../tools/console/support.js";

/** `startConsole` for tests that each start their own local console: it is closed after the test. */
export function consolePerTest(): typeof startConsole {
  let c: ConsoleDriver | undefined;
  afterEach(async () => {
    await c?.close();
    c = undefined;
  });
  return async (...args) => {
    c = await startConsole(...args);
    return c;
  };
}
