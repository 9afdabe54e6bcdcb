import { blocksText, type Harness } from "./harness.js";

/** The message the bot posts in `channel` whose text includes `words` (waited for), and its text. */
export async function postIn(h: Harness, channel: string, words: string) {
  const post = await h.slack.waitForCall(
    "chat.postMessage",
    (c) => c.args.channel === channel && blocksText(c.args.blocks).includes(words),
  );
  return { post, text: blocksText(post.args.blocks) };
}
