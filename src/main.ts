import { ConfigError, loadConfig } from "./config.js";
import { createLogger } from "./log.js";

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`edgeops: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const logger = createLogger({ level: config.logLevel });
  logger.info({ edgeApiUrl: config.edge.baseUrl }, "edgeops starting");
}

void main();
