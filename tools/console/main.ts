/**
 * `npm run console`: the local console explicitly, whatever Slack variables are set.
 * `printf '/edge apps\n' | npm run console --silent` runs it as a script and prints plain text.
 */
import { loadConfigOrExit } from "../../src/app/load-config.js";
import { ConfigError } from "../../src/config.js";
import { StoreError } from "../../src/store/index.js";
import { runConsole } from "./index.js";

async function main(): Promise<void> {
  const config = loadConfigOrExit("edgeops console");
  // A reader that goes away (`| head`) is not an error worth a stack trace.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
  });
  let handle: Awaited<ReturnType<typeof runConsole>>;
  try {
    handle = await runConsole({ config });
  } catch (e) {
    const known = e instanceof StoreError || e instanceof ConfigError;
    process.stderr.write(`edgeops console: ${known ? e.message : String(e)}\n`);
    process.exit(1);
  }
  const finish = (code: number) => {
    handle.stop().then(
      () => process.exit(code),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", () => finish(0));
  await handle.done;
  finish(0);
}

void main();
