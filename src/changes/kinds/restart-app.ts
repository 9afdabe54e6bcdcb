import { z } from "zod";
import { edgeClientFor } from "../../services/edge-access.js";
import type { ChangeKind } from "../kind.js";

export const restartAppParams = z.object({
  appId: z.string().regex(/^[\w-]{1,100}$/),
  /** The name shown to people; the id is what is restarted. */
  appName: z.string().max(200),
});
export type RestartAppParams = z.output<typeof restartAppParams>;

/** Restart every pod of a Magic Containers application: a one-off action with no undo. */
export const restartAppKind: ChangeKind<RestartAppParams, null> = {
  name: "restart_app",
  params: restartAppParams,
  approvers: "policy",
  policyName: "restart",
  risk: "high",
  oneOff: true,
  describe: (p) => `Restart application ${p.appName}`,
  target: (p) => `application ${p.appId}`,
  details: (p) => [
    { label: "Application", value: p.appName },
    { label: "Id", value: p.appId },
  ],
  askAgain: (p) => `/edge restart ${p.appId}`,
  readCurrent: async () => null,
  inForce: () => false,
  async apply(deps, scope, p) {
    const client = await edgeClientFor(deps, scope.teamId);
    await client.restartApp(p.appId);
  },
};
