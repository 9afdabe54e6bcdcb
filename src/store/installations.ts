import type { Installation, InstallationQuery, InstallationStore } from "@slack/bolt";
import type { RepoContext } from "./context.js";
import { guard, StoreError } from "./errors.js";

/** What a user of a workspace with no stored installation (or one without a bot token) reads. */
export const NOT_INSTALLED_SENTENCE =
  "edgeops has no installation for this workspace (it was removed, or installed on another deployment). A workspace admin can install it again from this deployment's /slack/install page.";

/**
 * Bolt's InstallationStore over the installations table. The whole installation JSON (bot and user
 * tokens included) is sealed with purpose "installation", bound to `T:<teamId>` or `E:<enterpriseId>`.
 */
export interface InstallationsRepo extends InstallationStore {
  storeInstallation<AuthVersion extends "v1" | "v2">(
    installation: Installation<AuthVersion, boolean>,
  ): Promise<void>;
  fetchInstallation(query: InstallationQuery<boolean>): Promise<Installation<"v1" | "v2", boolean>>;
  deleteInstallation(query: InstallationQuery<boolean>): Promise<void>;
  /** Like fetchInstallation for a workspace, but undefined instead of an error when there is none. */
  findByTeam(teamId: string): Promise<Installation<"v1" | "v2", boolean> | undefined>;
  /** The workspaces of an enterprise (Enterprise Grid) with an installation of their own. */
  teamsOfEnterprise(enterpriseId: string): Promise<string[]>;
  /** Number of stored installations. */
  count(): Promise<number>;
}

const PURPOSE = "installation";

function keyOf(q: {
  teamId?: string | undefined;
  enterpriseId?: string | undefined;
  isEnterpriseInstall?: boolean | undefined;
}): string {
  if (q.isEnterpriseInstall && q.enterpriseId) return `E:${q.enterpriseId}`;
  if (q.teamId) return `T:${q.teamId}`;
  if (q.enterpriseId) return `E:${q.enterpriseId}`;
  throw new StoreError("invalid", "An installation query needs a team id or an enterprise id");
}

export function createInstallationsRepo(ctx: RepoContext): InstallationsRepo {
  const { db, vault, now } = ctx;

  async function fetchByKey(key: string): Promise<Installation<"v1" | "v2", boolean> | undefined> {
    const row = await db.selectFrom("installations").selectAll().where("id", "=", key).executeTakeFirst();
    if (!row) return undefined;
    return JSON.parse(vault.open(key, PURPOSE, row.ciphertext)) as Installation<"v1" | "v2", boolean>;
  }

  return guard("installations", {
    async storeInstallation<AuthVersion extends "v1" | "v2">(
      installation: Installation<AuthVersion, boolean>,
    ): Promise<void> {
      const enterpriseId = installation.enterprise?.id;
      const teamId = installation.team?.id;
      const key = keyOf({
        teamId,
        enterpriseId,
        isEnterpriseInstall: installation.isEnterpriseInstall === true,
      });
      const at = now();
      const ciphertext = vault.seal(key, PURPOSE, JSON.stringify(installation));
      await db
        .insertInto("installations")
        .values({
          id: key,
          teamId: teamId ?? null,
          enterpriseId: enterpriseId ?? null,
          isEnterpriseInstall: installation.isEnterpriseInstall ? 1 : 0,
          ciphertext,
          installedAt: at,
          updatedAt: at,
        })
        .onConflict((oc) =>
          oc.column("id").doUpdateSet({
            teamId: teamId ?? null,
            enterpriseId: enterpriseId ?? null,
            isEnterpriseInstall: installation.isEnterpriseInstall ? 1 : 0,
            ciphertext,
            updatedAt: at,
          }),
        )
        .execute();
    },

    async fetchInstallation(query: InstallationQuery<boolean>): Promise<Installation<"v1" | "v2", boolean>> {
      const key = keyOf(query);
      const found = await fetchByKey(key);
      if (!found) {
        throw new StoreError(
          "invalid",
          `No Slack installation stored for ${key.startsWith("E:") ? "enterprise" : "workspace"} ${key.slice(2)}`,
          {
            teamId: key.slice(2),
            userMessage: NOT_INSTALLED_SENTENCE,
          },
        );
      }
      return found;
    },

    async deleteInstallation(query: InstallationQuery<boolean>): Promise<void> {
      await db.deleteFrom("installations").where("id", "=", keyOf(query)).execute();
    },

    async findByTeam(teamId: string) {
      return fetchByKey(`T:${teamId}`);
    },

    async teamsOfEnterprise(enterpriseId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("installations")
        .select("teamId")
        .where("enterpriseId", "=", enterpriseId)
        .where("teamId", "is not", null)
        .execute();
      return rows.flatMap((r) => (r.teamId ? [r.teamId] : []));
    },

    async count(): Promise<number> {
      const r = await db
        .selectFrom("installations")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  });
}
