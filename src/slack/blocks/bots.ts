import type { KnownBlock } from "@slack/types";
import {
  type BotCategory,
  type BotDetection,
  botCategoryActionLabel,
  botCategoryLabel,
  botDetectionExecutionModeLabel,
  botDetectionSensitivityLabel,
  browserFingerprintAggressionLabel,
} from "../../edge/schemas/shield.js";
import { categoryButtons } from "./approvals.js";
import { actions, context, fields, header, section } from "./block-kit.js";
import type { MrkdwnInput } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

const ACTION_EMOJI: Record<number, string> = {
  0: ":heavy_minus_sign:",
  1: ":no_entry:",
  2: ":white_check_mark:",
};

export function categoryActionText(action: number): string {
  return `${ACTION_EMOJI[action] ?? ":grey_question:"} ${botCategoryActionLabel(action)}`;
}

export function botDetectionFields(d: BotDetection): string[] {
  return [
    `*Request integrity*\n${botDetectionSensitivityLabel(d.requestIntegrity.sensitivity)}`,
    `*IP address*\n${botDetectionSensitivityLabel(d.ipAddress.sensitivity)}`,
    `*Browser fingerprint*\n${botDetectionSensitivityLabel(d.browserFingerprint.sensitivity)}, aggression ${browserFingerprintAggressionLabel(d.browserFingerprint.aggression)}${d.browserFingerprint.complexEnabled ? ", complex checks on" : ""}`,
    `*Execution mode*\n${botDetectionExecutionModeLabel(d.executionMode)}`,
  ];
}

/** Categories 1..7 in their numeric order; 0 (None) and 255 (System) are not user-facing choices. */
export function userCategories(categories: readonly BotCategory[]): BotCategory[] {
  return categories.filter((c) => c.category >= 1 && c.category <= 7).sort((a, b) => a.category - b.category);
}

/**
 * Bot detection and each category with Block / Allow / Clear (but not its current action). `newId` gives each button the id of the
 * request it would create, so the same click delivered twice makes one request.
 */
export function botsMessage(
  zoneId: number,
  detection: BotDetection,
  categories: readonly BotCategory[],
  newId: () => string,
  banner?: MrkdwnInput,
): Reply {
  const blocks: KnownBlock[] = [];
  if (banner) blocks.push(section(banner));
  blocks.push(header(`Bot detection · shield zone ${zoneId}`), fields(botDetectionFields(detection)));
  const shown = userCategories(categories);
  if (shown.length === 0) {
    blocks.push(context("This zone reports no bot categories."));
  } else {
    blocks.push(section("*Bot categories*"));
    for (const c of shown) {
      const bots = c.bots.length ? `  _(${c.bots.length} known bot${c.bots.length === 1 ? "" : "s"})_` : "";
      blocks.push(section(`*${botCategoryLabel(c.category)}*: ${categoryActionText(c.action)}${bots}`));
      blocks.push(actions(...categoryButtons(zoneId, c.category, newId, c.action)));
    }
  }
  return reply(`Bot detection for shield zone ${zoneId}`, blocks);
}
