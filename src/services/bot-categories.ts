import type { BotCategoryAction } from "../edge/schemas/shield.js";
import { usage } from "../errors.js";
import { didYouMean } from "../suggest.js";

/** Names users type for the seven settable categories (1..7); 0 None and 255 System are not choices. */
const CATEGORY_NAMES: Record<string, number> = {
  seo: 1,
  aiscraper: 2,
  aiscrapers: 2,
  aitool: 3,
  aitools: 3,
  tool: 4,
  tools: 4,
  ads: 5,
  ad: 5,
  preview: 6,
  previews: 6,
  social: 7,
};

const ACTION_WORDS: Record<string, BotCategoryAction> = { clear: 0, none: 0, block: 1, allow: 2 };

export const BOT_EXAMPLE = "/edge bot 1234 aiscraper block";

export function parseCategory(word: string | undefined): number {
  if (word === undefined)
    throw usage(`Which category? seo, aiscraper, aitool, tool, ads, preview or social: ${BOT_EXAMPLE}`);
  const w = word.toLowerCase().replace(/[\s_-]/g, "");
  if (w === "0" || w === "none")
    throw usage(
      "Category 0 (None) is not a category of bots, so it can't be blocked or allowed. Use 1..7 or a name: " +
        BOT_EXAMPLE,
    );
  if (w === "255" || w === "system")
    throw usage(
      "The System category (255) is managed by bunny.net and is read-only. Use 1..7 or a name: " +
        BOT_EXAMPLE,
    );
  if (/^[1-7]$/.test(w)) return Number(w);
  const n = CATEGORY_NAMES[w];
  if (n === undefined)
    throw usage(
      `"${word}" is not a bot category.${didYouMean(w, Object.keys(CATEGORY_NAMES))} Use seo, aiscraper, aitool, tool, ads, preview, social or 1..7: ${BOT_EXAMPLE}`,
    );
  return n;
}

export function parseAction(word: string | undefined): BotCategoryAction {
  const a = word === undefined ? undefined : ACTION_WORDS[word.toLowerCase()];
  if (a !== undefined) return a;
  if (word === undefined) throw usage(`Say what to do: block, allow or clear: ${BOT_EXAMPLE}`);
  throw usage(
    `"${word}" is not an action.${didYouMean(word.toLowerCase(), ["block", "allow", "clear"])} Say what to do: block, allow or clear: ${BOT_EXAMPLE}`,
  );
}
