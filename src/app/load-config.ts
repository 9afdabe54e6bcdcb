import { type Config, ConfigError, loadConfig } from "../config.js";

/**
 * The configuration from the environment, or `<name>: <the sentence>` on stderr and exit 1: a
 * configuration mistake is the operator's to fix, not a stack trace. Every entry point starts here.
 */
export function loadConfigOrExit(name: string, env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${name}: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
}
