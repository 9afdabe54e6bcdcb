import { afterEach } from "vitest";
import { type ConsoleDriver, startConsole } from "../tools/console/support.js";

/** Starts the local console (as startConsole does) for the test that asks; it is closed after that test. */
export function useConsolePerTest(): (
  options?: Parameters<typeof startConsole>[0],
) => Promise<ConsoleDriver> {
  let open: ConsoleDriver | undefined;
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  return async (options) => {
    open = await startConsole(options);
    return open;
  };
}
