import type { Deps } from "../deps.js";
import { edgeClientFor } from "./edge-access.js";

/** What /edge bots shows: detection settings and categories, read in parallel. */
export async function readBotSettings(deps: Deps, teamId: string, zoneId: number) {
  const client = await edgeClientFor(deps, teamId);
  const [detection, categories] = await Promise.all([
    client.getBotDetection(zoneId),
    client.getBotCategories(zoneId),
  ]);
  return { detection, categories };
}
