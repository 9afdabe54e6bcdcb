import { context, header, packLines } from "./block-kit.js";
import { code, joinMrkdwn, mrkdwn } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

/** What the help lists of one subcommand. */
export interface HelpEntry {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly examples: readonly string[];
}

export function helpReply(subcommands: readonly HelpEntry[]): Reply {
  const lines = subcommands
    .filter((s) => s.name !== "help")
    .map(
      (s) =>
        mrkdwn`*${code(`/edge ${s.usage}`)}*\n${s.summary}\n_e.g._ ${joinMrkdwn(
          s.examples.map((e) => code(e)),
          "  ",
        )}\n`,
    );
  return reply("edgeops commands", [
    header("edgeops: your edge platform from Slack"),
    ...packLines(lines, 45, "commands"),
    context(
      "Answers are visible only to you; add `public` to any command to answer in the channel. Leave out a zone, DNS zone, app or pull zone id and a menu lets you search for it by name.",
    ),
  ]);
}
