import type { EdgeClient } from "../../edge/client.js";
import { edgeClientFor } from "../../services/edge-access.js";
import type { ChangeKind } from "../kind.js";

type OneOffFields = "oneOff" | "approvers" | "readCurrent" | "inForce" | "apply";

/**
 * A one-off action (purge, restart, a WAF rule review) decided by the channel's policy: one Edge call,
 * nothing to read back, never "already in force", no undo.
 */
export function oneOffKind<P>(
  kind: Omit<ChangeKind<P, null>, OneOffFields> & {
    /** The Edge call that makes the change. */
    call(client: EdgeClient, p: P): Promise<unknown>;
  },
): ChangeKind<P, null> {
  const { call, ...rest } = kind;
  return {
    ...rest,
    approvers: "policy",
    oneOff: true,
    readCurrent: async () => null,
    inForce: () => false,
    async apply(deps, scope, p) {
      await call(await edgeClientFor(deps, scope.teamId), p);
      return undefined;
    },
  };
}
