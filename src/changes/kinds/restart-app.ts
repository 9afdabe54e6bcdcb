import { z } from "zod";
import { oneOffKind } from "./one-off.js";

export const restartAppParams = z.object({
  appId: z.string().regex(/^[\w-]{1,100}$/),
  /** The name shown to people; the id is what is restarted. */
  appName: z.string().max(200),
});
export type RestartAppParams = z.output<typeof restartAppParams>;

/** Restart every pod of a Magic Containers application: a one-off action with no undo. */
export const restartAppKind = oneOffKind<RestartAppParams>({
  name: "restart_app",
  params: restartAppParams,
  policyName: "restart",
  risk: "high",
  describe: (p) => `Restart application ${p.appName}`,
  target: (p) => `application ${p.appId}`,
  details: (p) => [
    { label: "Application", value: p.appName },
    { label: "Id", value: p.appId },
  ],
  askAgain: (p) => `/edge restart ${p.appId}`,
  call: (client, p) => client.restartApp(p.appId),
});
