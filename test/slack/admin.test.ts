import type { WebClient } from "@slack/web-api";
import { describe, expect, it } from "vitest";
import { AdminDirectory } from "../../src/slack/admin.js";

interface Member {
  id: string;
  is_admin?: boolean;
  is_owner?: boolean;
}

/** A workspace as users.list and users.info describe it, counting the calls; `pages` > 1 cuts the list short. */
function workspace(members: Member[], pages = 1) {
  const calls: string[] = [];
  const client = {
    users: {
      list: async () => {
        calls.push("users.list");
        return { ok: true, members, response_metadata: { next_cursor: pages > 1 ? "more" : "" } };
      },
      info: async ({ user }: { user: string }) => {
        calls.push("users.info");
        return { ok: true, user: members.find((m) => m.id === user) ?? { id: user } };
      },
    },
  } as unknown as WebClient;
  return { client, calls, members };
}

describe("AdminDirectory.isAdmin", () => {
  it("takes the workspace's admin list read less than a minute ago, without users.info", async () => {
    let now = 1_000_000;
    const admins = new AdminDirectory([], () => now);
    const ws = workspace([{ id: "UOWNER", is_owner: true }, { id: "UMEMBER" }]);
    expect(await admins.listAdmins(ws.client, "T1")).toEqual(["UOWNER"]);
    now += 59_000;
    expect(await admins.isAdmin(ws.client, "T1", "UOWNER")).toBe(true);
    expect(await admins.isAdmin(ws.client, "T1", "UMEMBER")).toBe(false);
    expect(ws.calls).toEqual(["users.list"]);
  });

  it("asks users.info once the list is a minute old, so an admin demoted since is refused as before", async () => {
    let now = 1_000_000;
    const admins = new AdminDirectory([], () => now);
    const ws = workspace([{ id: "UOWNER", is_owner: true }]);
    await admins.listAdmins(ws.client, "T1");
    now += 60_000;
    ws.members[0] = { id: "UOWNER" };
    expect(await admins.isAdmin(ws.client, "T1", "UOWNER")).toBe(false);
    expect(ws.calls).toEqual(["users.list", "users.info"]);
  });

  it("asks users.info for someone missing from a list Slack cut short", async () => {
    const admins = new AdminDirectory([], () => 1_000_000);
    const ws = workspace([{ id: "UOWNER", is_owner: true }], 6);
    await admins.listAdmins(ws.client, "T1");
    ws.members.push({ id: "ULATER", is_admin: true });
    expect(await admins.isAdmin(ws.client, "T1", "ULATER")).toBe(true);
    expect(ws.calls.filter((c) => c === "users.info")).toEqual(["users.info"]);
  });
});
