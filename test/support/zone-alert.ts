import type { Store, Watch } from "../../src/store/index.js";

/** A zone watch on `zoneId` in `channelId`, created by `createdBy` and first polled at `nextPollAt`. */
export async function zoneWatch(
  store: Store,
  o: {
    teamId: string;
    channelId: string;
    createdBy: string;
    zoneId: number;
    label?: string;
    nextPollAt: number;
  },
): Promise<Watch> {
  const created = await store.watches.createIfRoom(
    {
      teamId: o.teamId,
      channelId: o.channelId,
      createdBy: o.createdBy,
      kind: "zone",
      target: String(o.zoneId),
      options: o.label ? { label: o.label } : {},
      nextPollAt: o.nextPollAt,
    },
    { perChannel: 10, perWorkspace: 10 },
  );
  if (created.kind !== "created") throw new Error("no watch");
  return created.item;
}

/**
 * The zone watch's first attack alert, opened as the poller opens one: WAF at 420/min against a usual 12;
 * `topOffenderOfGroups`: its top offender is the busiest of that many groups read (not all were).
 */
export async function openWafAlert(
  store: Store,
  watch: Watch,
  o: { label: string | null; topOffender: string; topOffenderOfGroups?: number },
) {
  const subject = {
    kind: "zone",
    shieldZoneId: Number(watch.target),
    label: o.label,
    readings: [{ signal: "waf", count: 420, mean: 12, z: 9, over: true }],
    topOffender: o.topOffender,
    ...(o.topOffenderOfGroups === undefined ? {} : { topOffenderOfGroups: o.topOffenderOfGroups }),
    ddosSensitivity: 1,
  };
  const episode = await store.episodes.open({
    watchId: watch.id,
    teamId: watch.teamId,
    channelId: watch.channelId,
    subject: watch.target,
    seq: 1,
    kind: "attack",
    details: { subject, reopened: 0, opening: subject },
  });
  if (!episode) throw new Error("no episode");
  return episode;
}
