import type { Deps } from "../deps.js";
import type { EdgeClient } from "../edge/client.js";
import { keyId } from "../edge/queue.js";
import { UserError } from "../errors.js";

export const NO_KEY_SENTENCE = "No Edge API key for this workspace yet: an admin can run /edge key.";

export interface EdgeAccess {
  readonly client: EdgeClient;
  /** A hash of the API key, never the key: what per-key caches are keyed by. */
  readonly keyId: string;
}

/** The workspace's own key, else the deployment's EDGE_API_KEY, else a sentence saying what to do. */
export async function edgeAccessFor(deps: Deps, teamId: string): Promise<EdgeAccess> {
  const stored = await deps.store.keys.get(teamId);
  const apiKey = stored?.apiKey ?? deps.config.edge.defaultApiKey;
  if (!apiKey) throw new UserError("no_key", NO_KEY_SENTENCE);
  return { client: deps.edge.forKey(apiKey), keyId: keyId(apiKey) };
}

export async function edgeClientFor(deps: Deps, teamId: string): Promise<EdgeClient> {
  return (await edgeAccessFor(deps, teamId)).client;
}
