import { describe, expect, it } from "vitest";
import { type ConfigState, withKeptMeanwhile } from "../../src/alerts/drift.js";

const state = (snapshot: ConfigState["snapshot"], reported: ConfigState["reported"] = {}): ConfigState => ({
  readAt: 0,
  snapshot,
  reported,
});

describe("a Keep clicked while an evaluation ran", () => {
  it("stays kept in what the evaluation records, and the setting is no longer reported", () => {
    const started = state({ wafMode: 1, ddosSensitivity: 2 });
    const latest = state({ wafMode: 0, ddosSensitivity: 2 });
    const result = state({ wafMode: 1, ddosSensitivity: 2 }, { wafMode: 0 });
    expect(withKeptMeanwhile(result, started, latest)).toEqual(state({ wafMode: 0, ddosSensitivity: 2 }));
  });

  it("a kept deleted list leaves the snapshot; nothing kept leaves the evaluation's state as it is", () => {
    const list = { enabled: true, action: 2 };
    const started = state({ "list:edgeops: blocked IPs": list });
    const kept = withKeptMeanwhile(state({ "list:edgeops: blocked IPs": list }), started, state({}));
    expect(kept.snapshot).toEqual({});
    const result = state({ wafMode: 0 }, { ddosMode: 1 });
    expect(withKeptMeanwhile(result, started, started)).toEqual(result);
    expect(withKeptMeanwhile(result, null, started)).toEqual(result);
  });
});
