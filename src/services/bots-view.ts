import type { Deps } from "../deps.js";
import { edgeClientFor } from "./edge-access.js";

/** What /edge bots shows: detection settings and categories, read in parallel. */
export async function readBotSettings(deps: Deps, teamId: string, zoneId: number) {
  const client = await edgeClientFor(deps, teamId);
  const [detection, categories] = await Promise.allSettled([
    client.getBotDetection(zoneId),
    client.getBotCategories(zoneId),
  ]);
  // Both fail on a plan without them: the bot detection sentence is the one shown, whichever came first.
  if (detection.status === "rejected") throw detection.reason;
  if (categories.status === "rejected") throw categories.reason;
  return { detection: detection.value, categories: categories.value };
}
