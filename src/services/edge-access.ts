import type { Config } from "../config.js";
import type { Deps } from "../deps.js";
import type { EdgeClient, ForKeyOptions } from "../edge/client.js";
import { keyId } from "../edge/queue.js";
import { UserError } from "../errors.js";
import type { ApiKeyRecord } from "../store/index.js";

export const NO_KEY_SENTENCE = "No Edge API key for this workspace yet: an admin can run /edge key.";

export interface EdgeAccess {
  readonly client: EdgeClient;
  /** A hash of the API key, never the key: what per-key caches are keyed by. */
  readonly keyId: string;
}

/** Whose Edge API key answers a workspace's requests. */
export type KeySource = "own" | "deployment" | "none";

export type KeyInUse =
  | { source: "own"; apiKey: string; record: ApiKeyRecord }
  | { source: "deployment"; apiKey: string }
  | { source: "none" };

/**
 * Whether the deployment's EDGE_API_KEY answers for a workspace that stored no key of its own. A
 * single-token install serves one workspace, its operator's. With OAuth installs any workspace can
 * install the app, so the operator's key serves only the workspaces named in EDGE_API_KEY_TEAMS.
 */
export function deploymentKeyServes(config: Config, teamId: string): boolean {
  if (config.edge.defaultApiKey === undefined) return false;
  const oauthInstalls = config.slack.clientId !== undefined;
  return !oauthInstalls || config.edge.defaultApiKeyTeams.includes(teamId);
}

/** The workspace's own key, else the deployment's key where it serves this workspace, else none. */
export async function keyInUse(deps: Deps, teamId: string): Promise<KeyInUse> {
  const record = await (deps.storedKey ? deps.storedKey(teamId) : deps.store.keys.get(teamId));
  if (record) return { source: "own", apiKey: record.apiKey, record };
  const deploymentKey = deps.config.edge.defaultApiKey;
  if (deploymentKey !== undefined && deploymentKeyServes(deps.config, teamId))
    return { source: "deployment", apiKey: deploymentKey };
  return { source: "none" };
}

/**
 * Deps that read each workspace's stored key once, for as long as they are used (one change in flight:
 * Deps.storedKey). The decrypted key lives only in the returned deps' closure; a failed read is not kept.
 */
export function readingKeysOnce(deps: Deps): Deps {
  if (deps.storedKey) return deps;
  const reads = new Map<string, Promise<ApiKeyRecord | undefined>>();
  const storedKey = (teamId: string) => {
    let read = reads.get(teamId);
    if (!read) {
      const reading = deps.store.keys.get(teamId);
      reads.set(teamId, reading);
      reading.catch(() => {
        if (reads.get(teamId) === reading) reads.delete(teamId);
      });
      read = reading;
    }
    return read;
  };
  return { ...deps, storedKey };
}

/**
 * An Edge API client with the key that answers for this workspace, else a sentence saying what to do.
 * `background`: for alert polling, whose calls wait behind the key's commands; `signal`: aborts its calls.
 */
export async function edgeAccessFor(
  deps: Deps,
  teamId: string,
  options: ForKeyOptions = {},
): Promise<EdgeAccess> {
  const key = await keyInUse(deps, teamId);
  if (key.source === "none") throw new UserError("no_key", NO_KEY_SENTENCE);
  return { client: deps.edge.forKey(key.apiKey, options), keyId: keyId(key.apiKey) };
}

export async function edgeClientFor(deps: Deps, teamId: string): Promise<EdgeClient> {
  return (await edgeAccessFor(deps, teamId)).client;
}
