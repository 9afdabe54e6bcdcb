/**
 * The digest recorded as an episode's shown_digest hashes the alert's data, not its Slack message: it must change
 * whenever the rendered parent would (or a changed alert is never shown), and stay when nobody could tell the
 * difference (or every evaluation re-sends the same parent).
 */
import { describe, expect, it } from "vitest";
import { type AlertView, parentDigest, type SignalNumbers } from "../../src/alerts/view.js";
import { alertParentMessage } from "../../src/slack/blocks/alerts.js";

const NOW = Date.UTC(2026, 10, 26, 1, 0);

const reading = (o: Partial<SignalNumbers> = {}): SignalNumbers => ({
  signal: "waf",
  count: 120.2,
  mean: 10.4,
  z: 8.04,
  over: true,
  ...o,
});

function zoneAlert(o: Partial<AlertView> = {}, readings: SignalNumbers[] = [reading()]): AlertView {
  return {
    episodeId: "ep1",
    status: "firing",
    openedAt: NOW - 600_000,
    resolvedAt: null,
    acknowledgedBy: null,
    mutedUntil: null,
    reopened: 0,
    subject: {
      kind: "zone",
      shieldZoneId: 12,
      label: "shop.example.com",
      readings,
      topOffender: "203.0.113.7",
      ddosSensitivity: 1,
    },
    ...o,
  };
}

const rendered = (v: AlertView) => JSON.stringify(alertParentMessage(v, NOW));

/** Both views render the same parent and have the same digest. */
function expectSame(a: AlertView, b: AlertView) {
  expect(rendered(b)).toBe(rendered(a));
  expect(parentDigest(b, NOW)).toBe(parentDigest(a, NOW));
}

/** The views render different parents and have different digests. */
function expectDifferent(a: AlertView, b: AlertView) {
  expect(rendered(b)).not.toBe(rendered(a));
  expect(parentDigest(b, NOW)).not.toBe(parentDigest(a, NOW));
}

describe("parentDigest", () => {
  it("is the same for the same alert, and for numbers that differ below what the parent shows", () => {
    expectSame(zoneAlert(), zoneAlert());
    expectSame(zoneAlert(), zoneAlert({}, [reading({ count: 120.4, mean: 10.3, z: 8.01 })]));
  });

  it("treats a mute that has ended as no mute", () => {
    expectSame(zoneAlert(), zoneAlert({ mutedUntil: NOW - 1 }));
  });

  it("changes with everything the parent shows", () => {
    const base = zoneAlert();
    expectDifferent(base, zoneAlert({ mutedUntil: NOW + 3_600_000 }));
    expectDifferent(base, zoneAlert({ acknowledgedBy: "U0001" }));
    expectDifferent(base, zoneAlert({ status: "resolved", resolvedAt: NOW }));
    expectDifferent(base, zoneAlert({ reopened: 1 }));
    expectDifferent(base, zoneAlert({ untracked: { by: "U0001", at: NOW } }));
    expectDifferent(base, zoneAlert({}, [reading({ count: 121 })]));
    expectDifferent(base, zoneAlert({}, [reading({ z: 8.2 })]));
    expectDifferent(base, zoneAlert({}, [reading({ over: false })]));
    // A signal at zero is not listed; one barely above zero is, as 0/min.
    expectDifferent(
      zoneAlert({}, [reading(), reading({ signal: "bot", count: 0, mean: 0, z: 0, over: false })]),
      zoneAlert({}, [reading(), reading({ signal: "bot", count: 0.3, mean: 0, z: 0, over: false })]),
    );
  });

  it("changes with an app's status and since", () => {
    const app = zoneAlert({
      subject: {
        kind: "app",
        appId: "app-1",
        appName: "shop",
        status: "failing",
        transition: "failing",
        since: NOW - 60_000,
      },
    });
    const { subject } = app;
    if (subject.kind !== "app") throw new Error("an app alert");
    expectDifferent(app, { ...app, subject: { ...subject, status: "suspended" } });
    expectDifferent(app, { ...app, subject: { ...subject, since: NOW - 120_000 } });
    expectDifferent(app, { ...app, subject: { ...subject, sinceAtLeast: true } });
  });
});
