import { describe, expect, it } from "vitest";
import { loosening } from "../../../src/changes/kinds/policy.js";
import { DEFAULT_POLICY, type PolicyValues } from "../../../src/store/index.js";

const base: PolicyValues = {
  ...DEFAULT_POLICY,
  approvers: { kind: "list", users: ["U1", "U2"], usergroups: ["S1"] },
};

describe("which policy changes loosen the two-person rule", () => {
  it("tightening or keeping: none", () => {
    expect(loosening(base, base)).toEqual([]);
    expect(loosening(base, { ...base, expiryMinutes: 10 })).toEqual([]);
    expect(loosening(base, { ...base, approvalsNeeded: 3 })).toEqual([]);
    expect(loosening(base, { ...base, approvers: { kind: "list", users: ["U1"], usergroups: [] } })).toEqual(
      [],
    );
    expect(loosening({ ...base, approvals: "off" }, { ...base, approvals: "required" })).toEqual([]);
  });

  it("each way of loosening is named", () => {
    expect(loosening(base, { ...base, approvals: "off" })).toEqual(["turns approvals off"]);
    expect(loosening(base, { ...base, expiryMinutes: 31 })).toEqual(["gives requests longer to be approved"]);
    expect(loosening({ ...base, approvalsNeeded: 2 }, base)).toEqual(["needs fewer approvers"]);
    expect(loosening(base, { ...base, approvers: { kind: "list", users: ["U3"], usergroups: [] } })).toEqual([
      "changes who can approve",
    ]);
    expect(loosening(base, { ...base, approvers: { kind: "admins" } })).toEqual(["changes who can approve"]);
    expect(loosening({ ...base, approvers: { kind: "admins" } }, base)).toEqual(["changes who can approve"]);
  });
});
