import type { Selectable, Updateable } from "kysely";
import { compiledOnce } from "./compiled.js";
import { parseJson, type RepoContext, readRow } from "./context.js";
import type { PoliciesTable } from "./db.js";
import { guard, StoreError } from "./errors.js";

export type ApprovalsMode = "required" | "off";
export type Approvers = { kind: "admins" } | { kind: "list"; users: string[]; usergroups: string[] };

export interface PolicyValues {
  approvals: ApprovalsMode;
  approvers: Approvers;
  expiryMinutes: number;
  /** How many distinct approvers a request needs when approvals are required. */
  approvalsNeeded: number;
  /** The changes approvals apply to: change names or risk levels; ["*"] is every change. */
  approvalsFor: string[];
}

/** Fields to change: a value sets it, null clears it (inherit again), absent leaves it alone. */
export interface PolicyPatch {
  approvals?: ApprovalsMode | null;
  approvers?: Approvers | null;
  expiryMinutes?: number | null;
  approvalsNeeded?: number | null;
  approvalsFor?: string[] | null;
  updatedBy?: string;
}

/** What one row holds: null means "inherit". */
export interface PolicyRow {
  teamId: string;
  /** undefined for the workspace row. */
  channelId: string | undefined;
  approvals: ApprovalsMode | null;
  approvers: Approvers | null;
  expiryMinutes: number | null;
  approvalsNeeded: number | null;
  approvalsFor: string[] | null;
  updatedBy: string | null;
  updatedAt: number;
}

export type PolicySource = "channel" | "workspace" | "default";

export interface EffectivePolicy extends PolicyValues {
  source: {
    approvals: PolicySource;
    approvers: PolicySource;
    expiryMinutes: PolicySource;
    approvalsNeeded: PolicySource;
    approvalsFor: PolicySource;
  };
}

export const DEFAULT_POLICY: Readonly<PolicyValues> = Object.freeze({
  approvals: "required",
  approvers: Object.freeze({ kind: "admins" }) as Approvers,
  expiryMinutes: 30,
  approvalsNeeded: 1,
  approvalsFor: Object.freeze(["*"]) as string[],
});

export const EVERY_CHANGE = "*";

export const MAX_APPROVALS_NEEDED = 10;

export const MAX_EXPIRY_MINUTES = 7 * 24 * 60;

export interface PoliciesRepo {
  /** Channel override over workspace over defaults, saying where each value came from. */
  getEffective(teamId: string, channelId?: string): Promise<EffectivePolicy>;
  getWorkspace(teamId: string): Promise<PolicyRow | undefined>;
  getChannel(teamId: string, channelId: string): Promise<PolicyRow | undefined>;
  listChannels(teamId: string): Promise<PolicyRow[]>;
  setWorkspace(teamId: string, patch: PolicyPatch): Promise<PolicyRow>;
  setChannel(teamId: string, channelId: string, patch: PolicyPatch): Promise<PolicyRow>;
  /** Remove a channel's overrides; true when there were some. */
  clearChannel(teamId: string, channelId: string): Promise<boolean>;
}

const WORKSPACE = "";
const SLACK_ID = /^[A-Z0-9][A-Z0-9_-]{1,40}$/i;

function validate(patch: PolicyPatch): void {
  const bad = (message: string) => new StoreError("invalid", message, { userMessage: message });
  if (patch.approvals != null && patch.approvals !== "required" && patch.approvals !== "off") {
    throw bad(`Approvals must be "required" or "off"`);
  }
  if (patch.expiryMinutes != null) {
    const m = patch.expiryMinutes;
    if (!Number.isInteger(m) || m < 1 || m > MAX_EXPIRY_MINUTES) {
      throw bad(`Expiry must be a whole number of minutes from 1 to ${MAX_EXPIRY_MINUTES}`);
    }
  }
  if (patch.approvalsNeeded != null) {
    const n = patch.approvalsNeeded;
    if (!Number.isInteger(n) || n < 1 || n > MAX_APPROVALS_NEEDED) {
      throw bad(`The number of approvers must be a whole number from 1 to ${MAX_APPROVALS_NEEDED}`);
    }
  }
  const f = patch.approvalsFor;
  if (f != null) {
    if (
      !Array.isArray(f) ||
      f.length < 1 ||
      f.length > 20 ||
      f.some((w) => typeof w !== "string" || !/^(\*|[a-z][a-z0-9_-]{0,29})$/.test(w))
    )
      throw bad("Approvals apply to 1 to 20 change names or risk levels, like purge,restart or high");
  }
  const a = patch.approvers;
  if (a != null) {
    if (a.kind === "list") {
      if (
        !Array.isArray(a.users) ||
        !Array.isArray(a.usergroups) ||
        a.users.length + a.usergroups.length === 0
      ) {
        throw bad("An approver list needs at least one user or user group");
      }
      for (const id of [...a.users, ...a.usergroups]) {
        if (typeof id !== "string" || !SLACK_ID.test(id))
          throw bad(`"${String(id)}" is not a Slack user or group id`);
      }
    } else if (a.kind !== "admins") {
      throw bad(`Approvers must be "admins" or a list`);
    }
  }
}

function normalizeApprovers(a: Approvers): Approvers {
  return a.kind === "admins"
    ? { kind: "admins" }
    : { kind: "list", users: [...new Set(a.users)], usergroups: [...new Set(a.usergroups)] };
}

export function createPoliciesRepo(ctx: RepoContext): PoliciesRepo {
  const { db, now } = ctx;

  const toRow = (r: Selectable<PoliciesTable>): PolicyRow =>
    readRow(r, {
      channelId: r.channelId === WORKSPACE ? undefined : r.channelId,
      approvals: r.approvals as ApprovalsMode | null,
      approvers: parseJson<Approvers>(r.approvers),
      approvalsFor: parseJson<string[]>(r.approvalsFor),
    });

  async function getRow(teamId: string, channelId: string): Promise<PolicyRow | undefined> {
    const r = await db
      .selectFrom("policies")
      .selectAll()
      .where("teamId", "=", teamId)
      .where("channelId", "=", channelId)
      .executeTakeFirst();
    return r ? toRow(r) : undefined;
  }

  /** One upsert statement that changes only the fields in the patch. */
  async function upsert(teamId: string, channelId: string, patch: PolicyPatch): Promise<PolicyRow> {
    validate(patch);
    const at = now();
    const set: Updateable<PoliciesTable> = { updatedAt: at, updatedBy: patch.updatedBy ?? null };
    if (patch.approvals !== undefined) set.approvals = patch.approvals;
    if (patch.approvers !== undefined) {
      set.approvers = patch.approvers === null ? null : JSON.stringify(normalizeApprovers(patch.approvers));
    }
    if (patch.expiryMinutes !== undefined) set.expiryMinutes = patch.expiryMinutes;
    if (patch.approvalsNeeded !== undefined) set.approvalsNeeded = patch.approvalsNeeded;
    if (patch.approvalsFor !== undefined)
      set.approvalsFor =
        patch.approvalsFor === null ? null : JSON.stringify([...new Set(patch.approvalsFor)].sort());
    const row = await db
      .insertInto("policies")
      .values({
        teamId: teamId,
        channelId: channelId,
        approvals: set.approvals ?? null,
        approvers: set.approvers ?? null,
        expiryMinutes: set.expiryMinutes ?? null,
        approvalsNeeded: set.approvalsNeeded ?? null,
        approvalsFor: set.approvalsFor ?? null,
        updatedBy: set.updatedBy ?? null,
        updatedAt: at,
      })
      .onConflict((oc) => oc.columns(["teamId", "channelId"]).doUpdateSet(set))
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRow(row);
  }

  const selectLayers = compiledOnce(db, (root, teamId: string, channelId: string) =>
    root
      .selectFrom("policies")
      .selectAll()
      .where("teamId", "=", teamId)
      .where("channelId", "in", [WORKSPACE, channelId]),
  );
  const selectWorkspace = compiledOnce(db, (root, teamId: string) =>
    root.selectFrom("policies").selectAll().where("teamId", "=", teamId).where("channelId", "=", WORKSPACE),
  );

  return guard("policies", {
    async getEffective(teamId: string, channelId?: string): Promise<EffectivePolicy> {
      const { rows } = channelId
        ? await selectLayers(db, teamId, channelId)
        : await selectWorkspace(db, teamId);
      const ws = rows.find((r) => r.channelId === WORKSPACE);
      const ch = channelId ? rows.find((r) => r.channelId === channelId) : undefined;
      const layers: [PolicySource, PolicyRow | undefined][] = [
        ["channel", ch ? toRow(ch) : undefined],
        ["workspace", ws ? toRow(ws) : undefined],
      ];
      function pick<K extends keyof PolicyValues>(k: K): [PolicyValues[K], PolicySource] {
        for (const [source, row] of layers) {
          const v = row?.[k];
          if (v !== null && v !== undefined) return [v as PolicyValues[K], source];
        }
        return [DEFAULT_POLICY[k], "default"];
      }
      const [approvals, s1] = pick("approvals");
      const [approvers, s2] = pick("approvers");
      const [expiryMinutes, s3] = pick("expiryMinutes");
      const [approvalsNeeded, s4] = pick("approvalsNeeded");
      const [approvalsFor, s5] = pick("approvalsFor");
      return {
        approvals,
        approvers: normalizeApprovers(approvers),
        expiryMinutes,
        approvalsNeeded,
        approvalsFor: [...approvalsFor],
        source: {
          approvals: s1,
          approvers: s2,
          expiryMinutes: s3,
          approvalsNeeded: s4,
          approvalsFor: s5,
        },
      };
    },
    getWorkspace: (teamId: string) => getRow(teamId, WORKSPACE),
    getChannel: (teamId: string, channelId: string) => getRow(teamId, channelId),
    async listChannels(teamId: string): Promise<PolicyRow[]> {
      const rows = await db
        .selectFrom("policies")
        .selectAll()
        .where("teamId", "=", teamId)
        .where("channelId", "<>", WORKSPACE)
        .orderBy("channelId")
        .execute();
      return rows.map(toRow);
    },
    setWorkspace: (teamId: string, patch: PolicyPatch) => upsert(teamId, WORKSPACE, patch),
    setChannel(teamId: string, channelId: string, patch: PolicyPatch) {
      if (!channelId) throw new StoreError("invalid", "setChannel needs a channel id");
      return upsert(teamId, channelId, patch);
    },
    async clearChannel(teamId: string, channelId: string): Promise<boolean> {
      if (!channelId) return false;
      const r = await db
        .deleteFrom("policies")
        .where("teamId", "=", teamId)
        .where("channelId", "=", channelId)
        .executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  });
}
