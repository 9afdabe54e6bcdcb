import { context, header, packLines, type Reply } from "../blocks/common.js";
import type { Subcommand } from "./types.js";

export function helpReply(subcommands: readonly Subcommand[]): Reply {
  const lines = subcommands
    .filter((s) => s.name !== "help")
    .map(
      (s) => `*\`/edge ${s.usage}\`*\n${s.summary}\n_e.g._ ${s.examples.map((e) => `\`${e}\``).join("  ")}`,
    );
  return {
    text: "edgeops commands",
    blocks: [
      header("edgeops: your edge platform from Slack"),
      ...packLines(
        lines.map((l) => `${l}\n`),
        45,
        "commands",
      ),
      context("Answers are visible only to you; add `public` to any command to answer in the channel."),
    ],
  };
}

export function helpCommand(all: () => readonly Subcommand[]): Subcommand {
  return {
    name: "help",
    usage: "help",
    summary: "This list.",
    examples: ["/edge help"],
    run: async () => helpReply(all()),
  };
}
