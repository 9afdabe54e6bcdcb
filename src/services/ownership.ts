import type { Deps } from "../deps.js";
import { UserError } from "../errors.js";

/** Something a channel member created that only its creator or an admin may change (a schedule, a watch). */
export interface Owned {
  id: string;
  createdBy: string;
  channelId: string;
}

export interface ActorInput {
  teamId: string;
  userId: string;
  /** Asked only when the user is not the creator (it may call Slack). */
  isAdmin: () => Promise<boolean>;
}

/**
 * Let the creator or an admin act on `thing`; anyone else is refused with a sentence naming who can,
 * and the refusal is audit-logged as `<noun>.<action>`.
 */
export async function requireCreatorOrAdmin<T extends Owned>(
  deps: Deps,
  actor: ActorInput,
  thing: T,
  noun: "schedule" | "watch",
  action: string,
): Promise<T> {
  if (thing.createdBy === actor.userId || (await actor.isAdmin())) return thing;
  await deps.store.audit.append({
    teamId: actor.teamId,
    userId: actor.userId,
    action: `${noun}.${action}`,
    target: `${noun}:${thing.id}`,
    outcome: "refused",
    details: { reason: "not creator or admin", createdBy: thing.createdBy, channelId: thing.channelId },
  });
  throw new UserError(
    "not_admin",
    `Only the person who created ${noun} ${thing.id} or a workspace admin can ${action} it: ask them, or an admin or owner.`,
  );
}
