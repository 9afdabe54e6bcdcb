/** The fake Slack's people (test/support/harness.ts): alice is a workspace admin, bob a member, carol the owner. */
export const ALICE = "U0001";
export const BOB = "U0002";
export const CAROL = "U0003";
