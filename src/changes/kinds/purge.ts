import { z } from "zod";
import { oneOffKind } from "./one-off.js";

export const purgeParams = z.union([
  z.object({
    pullZoneId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    cacheTag: z
      .string()
      .regex(/^[\w.:/-]{1,200}$/)
      .optional(),
  }),
  z.object({ url: z.string().url().max(1500) }),
]);
export type PurgeParams = z.output<typeof purgeParams>;

/** Purge a pull zone's cache (all, or one cache tag) or one URL: a one-off action with no undo. */
export const purgeKind = oneOffKind<PurgeParams>({
  name: "purge",
  params: purgeParams,
  policyName: "purge",
  risk: "medium",
  describe: (p) =>
    "url" in p
      ? `Purge ${p.url} from the cache`
      : p.cacheTag
        ? `Purge cache tag ${p.cacheTag} of pull zone ${p.pullZoneId}`
        : `Purge the whole cache of pull zone ${p.pullZoneId}`,
  target: (p) => ("url" in p ? `url ${p.url}` : `pull zone ${p.pullZoneId}`),
  details: (p) =>
    "url" in p
      ? [{ label: "URL", value: p.url }]
      : [
          { label: "Pull zone", value: String(p.pullZoneId) },
          { label: "Files", value: p.cacheTag ? `tagged ${p.cacheTag}` : "all" },
        ],
  askAgain: (p) => ("url" in p ? `/edge purge url ${p.url}` : `/edge purge ${p.pullZoneId}`),
  call: (client, p) => ("url" in p ? client.purgeUrl(p.url) : client.purgePullZone(p.pullZoneId, p.cacheTag)),
});
