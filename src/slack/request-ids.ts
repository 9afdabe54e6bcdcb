import { randomBytes } from "node:crypto";

/** A fresh approval-request id for a button (22 url-safe characters, like the store's). */
export const newRequestId = (): string => randomBytes(16).toString("base64url").slice(0, 22);
