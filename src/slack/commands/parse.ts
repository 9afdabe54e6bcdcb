import { usage } from "../../errors.js";

/** A positive whole-number id typed by a user, or a sentence with a correct example. */
export function parseId(arg: string | undefined, what: string, example: string): number {
  if (arg === undefined) throw usage(`Which ${what}? For example: ${example}`);
  const cleaned = arg.replace(/^#/, "");
  if (!/^\d{1,15}$/.test(cleaned) || Number(cleaned) < 1) {
    throw usage(`${capitalise(what)}s are numbers: ${example}`);
  }
  return Number(cleaned);
}

export function noMoreArgs(args: readonly string[], count: number, example: string): void {
  if (args.length > count) throw usage(`Too many words after the command. For example: ${example}`);
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
