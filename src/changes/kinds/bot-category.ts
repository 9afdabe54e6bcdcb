import { z } from "zod";
import {
  type BotCategoryAction,
  botCategoryActionLabel,
  botCategoryLabel,
} from "../../edge/schemas/shield.js";
import { edgeClientFor } from "../../services/edge-access.js";
import { moved } from "../details.js";
import type { ChangeKind } from "../kind.js";

export const botCategoryParams = z.object({
  shieldZoneId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  category: z.number().int().min(1).max(7),
  action: z.union([z.literal(0), z.literal(1), z.literal(2)]),
});
export type BotCategoryParams = z.output<typeof botCategoryParams>;

const actionWord = (a: number | null) => (a === null ? "unknown" : botCategoryActionLabel(a));

/** Set a bot category's action (Block / Allow / none) on a shield zone. */
export const botCategoryKind: ChangeKind<BotCategoryParams, number> = {
  name: "bot_category",
  params: botCategoryParams,
  approvers: "policy",
  policyName: "bot",
  risk: "medium",
  describe: (p) =>
    `${p.action === 0 ? "Clear" : botCategoryActionLabel(p.action)} ${botCategoryLabel(p.category)} on shield zone ${p.shieldZoneId}`,
  target: (p) => `shield zone ${p.shieldZoneId} / ${botCategoryLabel(p.category)}`,
  details: (p, observed) => [
    { label: "Shield zone", value: String(p.shieldZoneId) },
    { label: "Category", value: botCategoryLabel(p.category) },
    { label: "Action", value: moved(actionWord(observed), actionWord(p.action)) },
  ],
  askAgain: (p) => `/edge bots ${p.shieldZoneId}`,
  async readCurrent(deps, scope, p) {
    const client = await edgeClientFor(deps, scope.teamId);
    const categories = await client.getBotCategories(p.shieldZoneId);
    return categories.find((c) => c.category === p.category)?.action ?? null;
  },
  targetKey: (p, scope) => `${scope.teamId}/shield zone ${p.shieldZoneId}/bot category ${p.category}`,
  valueLabel: actionWord,
  inForce: (p, current) => current === p.action,
  lockKey: (p) => `shield-zone:${p.shieldZoneId}:bot-category:${p.category}`,
  async apply(deps, scope, p) {
    const client = await edgeClientFor(deps, scope.teamId);
    await client.setBotCategoryAction(p.shieldZoneId, p.category, p.action as BotCategoryAction);
  },
  undo: (p, observed) =>
    observed === 0 || observed === 1 || observed === 2 ? { ...p, action: observed } : undefined,
};
