import { withDeadline } from "../deadline.js";
import type { Deps } from "../deps.js";
import { describeEdgeError, EdgeApiError } from "../edge/errors.js";
import type { ApiKeyInfo } from "../store/index.js";

export type KeyCheck = { ok: true } | { ok: false; reason: string };

/** Time allowed to check a key with the Edge API: a modal submission must be answered within 3 s. */
export const KEY_CHECK_DEADLINE_MS = 2_500;

/** Rough shape check before asking the API: no spaces, a sensible length. */
export function keyShapeProblem(key: string): string | undefined {
  if (key.length < 8 || key.length > 200)
    return "That doesn't look like an Edge API key: paste the whole key from the bunny.net dashboard.";
  if (/\s/.test(key)) return "An Edge API key has no spaces: paste just the key.";
  return undefined;
}

/** Ask the Edge API whether the key works (GET /mc/apps?limit=1), within the deadline. */
export async function checkKey(
  deps: Deps,
  apiKey: string,
  deadlineMs = KEY_CHECK_DEADLINE_MS,
): Promise<KeyCheck> {
  const check = deps.edge
    .forKey(apiKey)
    .listApps({ limit: 1 })
    .then((): KeyCheck => ({ ok: true }))
    .catch((err: unknown): KeyCheck => {
      if (err instanceof EdgeApiError && (err.kind === "unauthorized" || err.kind === "forbidden")) {
        return {
          ok: false,
          reason: "The Edge API rejected this key. Check that you copied the whole account API key.",
        };
      }
      return {
        ok: false,
        reason: `The key could not be checked, so it was not saved: ${describeEdgeError(err)}`,
      };
    });
  return withDeadline(deps.clock, check, deadlineMs, () => ({
    ok: false,
    reason: "The Edge API did not answer in time, so the key was not saved. Try again in a moment.",
  }));
}

export async function saveKey(
  deps: Deps,
  teamId: string,
  userId: string,
  apiKey: string,
): Promise<ApiKeyInfo> {
  const info = await deps.store.keys.set(teamId, apiKey, userId);
  await deps.store.audit.append({
    teamId,
    userId,
    action: "key.set",
    target: "edge_api_key",
    outcome: "ok",
    details: { fingerprint: info.fingerprint },
  });
  return info;
}

export async function removeKey(deps: Deps, teamId: string, userId: string): Promise<boolean> {
  const removed = await deps.store.keys.remove(teamId);
  await deps.store.audit.append({
    teamId,
    userId,
    action: "key.remove",
    target: "edge_api_key",
    outcome: removed ? "ok" : "none",
  });
  return removed;
}
