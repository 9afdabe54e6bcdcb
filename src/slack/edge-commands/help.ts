import { helpReply } from "../blocks/help.js";
import type { Subcommand } from "./types.js";

export function helpCommand(all: () => readonly Subcommand[]): Subcommand {
  return {
    name: "help",
    usage: "help",
    summary: "This list.",
    examples: ["/edge help"],
    run: async () => helpReply(all()),
  };
}
