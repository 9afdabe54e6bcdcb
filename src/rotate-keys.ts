/**
 * npm run keys:rotate — re-encrypt every stored secret under the newest master key (the first entry
 * of ENCRYPTION_KEYS). Safe while the bot runs. Exit codes: 0 done, 1 configuration or storage error,
 * 2 some secrets could not be decrypted with any configured key.
 */
import { loadConfigOrExit } from "./app/load-config.js";
import { systemClock } from "./clock.js";
import { createLogger } from "./log.js";
import { openStore, StoreError } from "./store/index.js";
import { rotateAll } from "./store/rotate.js";

async function main(): Promise<number> {
  const config = loadConfigOrExit("keys:rotate");
  const logger = createLogger({ level: config.logLevel === "info" ? "warn" : config.logLevel });
  try {
    const store = await openStore({ clock: systemClock, config, logger });
    try {
      const r = await rotateAll(store);
      process.stdout.write(
        `Re-encrypted ${r.reEncrypted} secret${r.reEncrypted === 1 ? "" : "s"} under master key "${store.vault.currentKeyId}" (${r.alreadyCurrent} already current).\n`,
      );
      for (const f of r.failed) process.stderr.write(`Could not re-encrypt: ${f.message}\n`);
      return r.failed.length > 0 ? 2 : 0;
    } finally {
      await store.close();
    }
  } catch (e) {
    if (e instanceof StoreError) {
      process.stderr.write(`keys:rotate: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`keys:rotate: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
