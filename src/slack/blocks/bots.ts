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
import { context, fields, header, type Reply, section } from "./common.js";

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

export function botsMessage(
  zoneId: number,
  detection: BotDetection,
  categories: readonly BotCategory[],
): Reply {
  const blocks: KnownBlock[] = [
    header(`Bot detection · shield zone ${zoneId}`),
    fields(botDetectionFields(detection)),
  ];
  const shown = userCategories(categories);
  if (shown.length === 0) {
    blocks.push(context("This zone reports no bot categories."));
  } else {
    blocks.push(
      section(
        `*Bot categories*\n${shown.map((c) => `${categoryActionText(c.action)}  *${botCategoryLabel(c.category)}*${c.bots.length ? `  _(${c.bots.length} known bots)_` : ""}`).join("\n")}`,
      ),
    );
  }
  return { text: `Bot detection for shield zone ${zoneId}`, blocks };
}
