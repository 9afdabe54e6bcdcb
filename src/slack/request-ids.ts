import { randomBytes } from "node:crypto";
import type { ChangeButtonValue } from "./blocks/approvals.js";

/** A fresh approval-request id for a button (22 url-safe characters, like the store's). */
export const newRequestId = (): string => randomBytes(16).toString("base64url").slice(0, 22);

/** What a typed change's Confirm carries: a fresh request id, the kind, its parameters, how long if temporary. */
export function newChangeRequest(
  kind: { name: string },
  p: unknown,
  temporaryMs?: number,
): ChangeButtonValue {
  return { r: newRequestId(), k: kind.name, p, ...(temporaryMs !== undefined ? { t: temporaryMs } : {}) };
}
