import { createHash } from "node:crypto";
import type { WebClient } from "@slack/web-api";
import { alertChart, alertChartInput } from "../alerts/chart.js";
import type { ZoneState } from "../alerts/evaluate.js";
import type { AlertChartRecord, EpisodeDetails } from "../alerts/view.js";
import type { Deps } from "../deps.js";
import type { Logger } from "../log.js";
import { timelineMitigations } from "../services/incident-chart.js";
import type { AlertEpisode, Watch } from "../store/index.js";
import {
  channelMitigations,
  deleteChartFile,
  namedMitigations,
  postIncidentChart,
} from "./incident-chart.js";

/**
 * The chart on a zone alert's parent: drawn with the incident chart's modules from the samples the watch already
 * read, uploaded as the incident card's is, and recorded on the episode (EpisodeDetails.chart) so that whoever
 * renders the parent (the poller, the buttons) shows it. Drawn again only when what it is drawn from changed (a
 * new bucket, a mitigation that took effect): the same data keeps the same file.
 */

export interface Redrawn {
  /** The episode, with the chart record the parent should show. */
  episode: AlertEpisode;
  /** The files the parent may have shown before, to delete once Slack shows the new parent. */
  replaced: string[];
}

/** The digest of what a chart is drawn from (EpisodeDetails.chart.digest). */
export const alertChartDigest = (v: unknown): string =>
  createHash("sha256").update(JSON.stringify(v)).digest("base64url");

/** Bring the episode's chart up to date with `state` (the watch's, after this evaluation). Never throws. */
export async function redrawAlertChart(
  deps: Pick<Deps, "store" | "clock">,
  client: WebClient,
  watch: Watch,
  state: ZoneState | null,
  episode: AlertEpisode,
  now: number,
  logger: Logger,
): Promise<Redrawn> {
  const same: Redrawn = { episode, replaced: [] };
  const details = episode.details as EpisodeDetails | null;
  if (details?.subject?.kind !== "zone") return same;
  const zoneId = details.subject.shieldZoneId;
  const sensitivity = watch.options.sensitivity ?? "normal";
  try {
    if (!alertChartInput(zoneId, state, sensitivity)) return same;
    // Changes asked in the watch's channel, as its readers see them: the parent is read there.
    const timeline = await channelMitigations(
      deps,
      watch.teamId,
      { zoneId, range: { window: "1h", to: now } },
      watch.channelId,
      logger,
    );
    // The data's digest names approvers by id, so an unchanged chart costs no users.info.
    const byId = timeline ? timelineMitigations(timeline, (id) => id) : [];
    const digest = alertChartDigest(alertChart(zoneId, state, sensitivity, byId));
    if (details.chart?.digest === digest) return same;

    const named = timeline ? await namedMitigations(client, timeline, logger) : [];
    const input = alertChartInput(zoneId, state, sensitivity, named);
    const outcome = input
      ? await postIncidentChart(
          deps,
          client,
          input.source,
          logger,
          input.extra,
          `alert-zone-${zoneId}-${episode.id}.png`,
        )
      : ({ fallback: "empty" } as const);
    const record: AlertChartRecord =
      "posted" in outcome
        ? { digest, fileId: outcome.posted.fileId, altText: outcome.posted.altText }
        : { digest, fileId: null, altText: "" };
    if ("fallback" in outcome)
      logger.info(
        { episodeId: episode.id, fallback: outcome.fallback },
        "the alert's parent goes without a chart",
      );
    const updated = await deps.store.episodes.update(episode.id, episode.version, {
      details: { ...details, chart: record } satisfies EpisodeDetails,
    });
    if (!updated) {
      // The episode moved meanwhile (a click, another replica): the next evaluation draws again.
      if (record.fileId) await deleteChartFile(client, record.fileId, logger);
      return same;
    }
    const old = [
      ...(details.chart?.fileId ? [details.chart.fileId] : []),
      ...(details.chart?.replaced ?? []),
    ];
    return { episode: updated, replaced: old.filter((id) => id !== record.fileId) };
  } catch (err) {
    logger.warn({ err, episodeId: episode.id }, "drawing the alert's chart failed; the parent keeps its own");
    return same;
  }
}

/**
 * The parent with a new picture was not sent (Slack failed, muted, another replica): the files it replaced may
 * still show, so the record keeps them, to delete once a parent is sent. Best effort.
 */
export async function keepReplaced(
  deps: Pick<Deps, "store">,
  redrawn: Redrawn,
  logger: Logger,
): Promise<void> {
  if (redrawn.replaced.length === 0) return;
  const e = (await deps.store.episodes.get(redrawn.episode.id)) ?? redrawn.episode;
  const details = e.details as EpisodeDetails | null;
  if (!details?.chart) return;
  const replaced = [...new Set([...(details.chart.replaced ?? []), ...redrawn.replaced])].slice(-20);
  const kept = await deps.store.episodes
    .update(e.id, e.version, { details: { ...details, chart: { ...details.chart, replaced } } })
    .catch(() => undefined);
  if (!kept) logger.info({ episodeId: e.id }, "could not keep the replaced chart files; they stay in Slack");
}
