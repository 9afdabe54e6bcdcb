import { describe, it } from "vitest";
import { describeUrl } from "../../src/store/db.js";
import { IN_CI, TEST_DATABASE_URL } from "./helpers.js";

/**
 * Where PostgreSQL does not answer, the `title` block in its place: under CI (which requires PostgreSQL) a
 * test that fails saying so; elsewhere a warning that `what` is skipped, and a skipped block.
 */
export function withoutPostgres(title: string, what: string): void {
  const where = describeUrl(TEST_DATABASE_URL);
  if (IN_CI) {
    describe(title, () => {
      it("needs PostgreSQL under CI=true", () => {
        throw new Error(`PostgreSQL is not reachable at ${where} (TEST_DATABASE_URL); CI requires it`);
      });
    });
    return;
  }
  console.warn(`\n*** ${what} SKIPPED: nothing answers at ${where} (set TEST_DATABASE_URL) ***\n`);
  describe.skip(`${title} — PostgreSQL not reachable, skipped`, () => {
    it("skipped", () => {});
  });
}
