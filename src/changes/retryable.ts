import type { ChangeError } from "../store/index.js";

/**
 * Failures a second attempt of the same request would meet again: what it names does not exist, the
 * setting moved since it was asked for, the key or plan may not do it, the API refused the values.
 */
const SAME_AGAIN = new Set([
  "not_found",
  "usage",
  "changed_since",
  "forbidden",
  "plan_not_eligible",
  "bad_request",
  "invalid_argument",
  // Other settings moved with the write: a Retry would act as if nothing happened.
  "other_settings_moved",
]);

/** Whether Retry on a failed request could succeed (a timeout, a 5xx, a rate limit, a lost connection). */
export function retryCanHelp(lastError: Pick<ChangeError, "kind"> | null): boolean {
  return lastError === null || !SAME_AGAIN.has(lastError.kind);
}
