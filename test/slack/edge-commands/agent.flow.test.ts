/**
 * `/edge agent token|list|revoke`: a person's token for an AI agent, through the real receiver (signed
 * commands, the fake Slack, the store on SQLite and PostgreSQL). The token is shown once, to its owner;
 * only its hash is stored; it is never in a log, the audit or the Home.
 */
import { createHash } from "node:crypto";
import { describe, expect } from "vitest";
import { authenticateAgent } from "../../../src/services/agent-tokens.js";
import { storeInternals } from "../../../src/store/index.js";
import { openHome } from "../../support/app-home.js";
import { onBothStores } from "../../support/both-stores.js";
import { answerTo, type HarnessOptions, startHarness } from "../../support/harness.js";
import { BOB, CAROL } from "../../support/users.js";

const TOKEN = /edgeops_at_[A-Za-z0-9_-]{43}/;
const DAY = 24 * 3_600_000;

async function mintListRevoke(options: HarnessOptions) {
  const h = await startHarness(options);
  try {
    const minted = await answerTo(h, "agent token claude for 7d", BOB);
    const token = TOKEN.exec(minted.text)?.[0];
    expect(token, minted.text).toBeDefined();
    expect(minted.text).toContain("shown only this once");
    expect(minted.text).toContain("30 days unless you say");
    expect(minted.text).toContain("90 days at most");
    // Never offered to the channel.
    expect(minted.buttons).toEqual([]);
    expect(minted.body.response_type).toBe("ephemeral");

    // Stored as its hash only: no column of any row holds the token.
    const rows = await storeInternals(h.store).rawDb.selectFrom("agent_tokens").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(createHash("sha256").update(token!).digest("hex"));
    expect(JSON.stringify(rows)).not.toContain(token!.slice(11));
    expect(Number(rows[0]!.expires_at) - Number(rows[0]!.created_at)).toBe(7 * DAY);

    const identity = await authenticateAgent(h.deps, token);
    expect(identity).toMatchObject({ teamId: "T0001", userId: BOB, name: "claude" });

    // A second token of the same name is refused; another name is fine.
    expect((await answerTo(h, "agent token claude", BOB)).text).toContain(
      'You already have an agent token named "claude"',
    );

    const list = await answerTo(h, "agent list", BOB);
    expect(list.text).toContain("*Your agent tokens* (1)");
    expect(list.text).toContain("claude");
    expect(list.text).not.toContain(token!);
    // Carol has none: tokens are personal.
    expect((await answerTo(h, "agent list", CAROL)).text).toContain("*Your agent tokens* (0)");

    const home = await openHome(h, BOB);
    expect(home).toContain("*Your agent tokens* (1)");
    expect(home).not.toContain(token!);

    // Carol can't revoke Bob's token.
    expect((await answerTo(h, "agent revoke claude", CAROL)).text).toContain(
      "You have no active agent token",
    );
    const revoked = await answerTo(h, "agent revoke claude", BOB);
    expect(revoked.text).toContain("is revoked");
    await expect(authenticateAgent(h.deps, token)).rejects.toThrow("not valid");
    expect((await answerTo(h, "agent list", BOB)).text).toContain("*Your agent tokens* (0)");

    const audit = await h.store.audit.list("T0001", 20);
    expect(audit.map((a) => `${a.action} ${a.target} ${a.outcome}`)).toEqual(
      expect.arrayContaining(["agent.mint claude minted", "agent.revoke claude revoked"]),
    );
    await h.settled();
    for (const text of [JSON.stringify(audit), h.logs.text]) expect(text).not.toContain(token!.slice(11));
  } finally {
    await h.close();
  }
}

describe("/edge agent", () => {
  onBothStores(
    "mints a token shown once and stored hashed, lists it, and revokes it at once",
    mintListRevoke,
  );

  onBothStores("answers bad input with a sentence and mints nothing", async (options) => {
    const h = await startHarness(options);
    try {
      const cases: [string, string][] = [
        ["agent token claude for 95d", "from 1 hour to 90 days"],
        ["agent token claude for 400d", "a duration like 7d"],
        ["agent token claude for 30m", "from 1 hour to 90 days"],
        ["agent token claude for soon", "a duration like 7d"],
        ["agent token bad/name", "1 to 40 letters"],
        ["agent token one two", "For example: /edge agent token claude for 30d"],
        ["agent token public", "shown only to you"],
        ["agent", "/edge agent list"],
        ["agent revoke", "by name or id"],
      ];
      for (const [text, sentence] of cases)
        expect((await answerTo(h, text, BOB)).text, text).toContain(sentence);
      expect(await storeInternals(h.store).rawDb.selectFrom("agent_tokens").selectAll().execute()).toEqual(
        [],
      );
    } finally {
      await h.close();
    }
  });
});
