import { dropSchema, pgReachable, randomSchema, TEST_DATABASE_URL, tempDir } from "../support/helpers.js";
import { withoutPostgres } from "../support/postgres-required.js";
import { storeContract } from "./contract.js";

const reachable = await pgReachable();

if (reachable) {
  storeContract({
    engine: "postgres",
    async fresh() {
      const { dir, cleanup } = await tempDir();
      const schema = randomSchema();
      return {
        env: { DATA_DIR: dir, DATABASE_URL: TEST_DATABASE_URL },
        pgSchema: schema,
        dataDir: dir,
        async cleanup() {
          await dropSchema(schema);
          await cleanup();
        },
      };
    },
  });
} else {
  withoutPostgres("store contract (postgres)", "PostgreSQL store tests");
}
