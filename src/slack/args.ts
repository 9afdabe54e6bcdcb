/**
 * Split slash-command text into words. Double or single quotes (including Slack's curly quotes)
 * keep spaces inside one argument, so a cron expression can be typed as "0 9 * * 1-5".
 */
export function splitArgs(text: string): string[] {
  const normalised = text.replace(/[\u201C\u201D]/g, '"').replace(/[\u2018\u2019]/g, "'");
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of normalised.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3] ?? "");
  return out;
}

export interface ParsedCommand {
  subcommand: string;
  args: string[];
  /** The user asked for an in-channel answer with the word `public`. */
  isPublic: boolean;
}

export function parseCommandText(text: string): ParsedCommand {
  const words = splitArgs(text.trim());
  const isPublic = words.some((w) => w.toLowerCase() === "public");
  const rest = words.filter((w) => w.toLowerCase() !== "public");
  return { subcommand: (rest[0] ?? "").toLowerCase(), args: rest.slice(1), isPublic };
}
