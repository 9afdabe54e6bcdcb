import { describe, it } from "vitest";
import { describeUrl } from "../../src/store/db.js";
import {
  dropSchema,
  IN_CI,
  pgReachable,
  randomSchema,
  TEST_DATABASE_URL,
  tempDir,
} from "../support/helpers.js";
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
} else if (IN_CI) {
  describe("store contract (postgres)", () => {
    it("needs PostgreSQL under CI=true", () => {
      throw new Error(
        `PostgreSQL is not reachable at ${describeUrl(TEST_DATABASE_URL)} (TEST_DATABASE_URL); CI requires it`,
      );
    });
  });
} else {
  console.warn(
    `\n*** PostgreSQL store tests SKIPPED: nothing answers at ${describeUrl(TEST_DATABASE_URL)} (set TEST_DATABASE_URL) ***\n`,
  );
  describe.skip("store contract (postgres) — PostgreSQL not reachable, skipped", () => {
    it("skipped", () => {});
  });
}
