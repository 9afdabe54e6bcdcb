import type { WebClient } from "@slack/web-api";
import { incidentChartSpec } from "../charts/incident-chart.js";
import type { Clock } from "../clock.js";
import type { Deps } from "../deps.js";
import { slackErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import type { IncidentPicture } from "../services/incident.js";
import {
  type ChartExtra,
  type ChartMitigation,
  type ChartSource,
  chartAltText,
  type IncidentChart,
  incidentChart,
  timelineMitigations,
} from "../services/incident-chart.js";
import { buildTimeline, type Timeline } from "../services/timeline.js";

/**
 * The incident chart as a Slack file: drawn (src/charts), uploaded through the files API without a channel (so
 * it is not posted as a message of its own) and shown by an image block that names the file. Anything that keeps
 * the picture out (nothing to draw, no files:write scope, a failed upload) leaves the card's text sparklines.
 */

export interface PostedChart {
  fileId: string;
  altText: string;
  /** How long drawing took (spec → PNG), ms. */
  renderMs: number;
}

export type ChartOutcome =
  | { posted: PostedChart; png: Buffer; chart: IncidentChart }
  | { fallback: "empty" | "missing_scope" | "upload_failed" | "render_failed" };

export type ChartInput = ChartExtra;

/** Draw the chart of `picture` to PNG bytes, or null when there is nothing to draw. */
export async function drawIncidentChart(
  picture: ChartSource,
  input: ChartInput = {},
): Promise<{ chart: IncidentChart; png: Buffer } | null> {
  const chart = incidentChart(picture, input);
  if (!chart) return null;
  // Vega, Vega-Lite and resvg load with the first picture drawn (~35 MiB a replica that draws none never pays).
  const { renderPng } = await import("../charts/render.js");
  return { chart, png: await renderPng(incidentChartSpec(chart)) };
}

/** Draw and upload the chart of `picture`; the outcome says which fallback applies when there is no picture. */
export async function postIncidentChart(
  env: { clock: Clock },
  client: WebClient,
  picture: ChartSource,
  logger: Logger,
  input: ChartInput = {},
  /** The file's name; default after the zone and the window. */
  filename = `incident-zone-${picture.zoneId}-${picture.range.window}.png`,
): Promise<ChartOutcome> {
  const started = env.clock.elapsed();
  let drawn: Awaited<ReturnType<typeof drawIncidentChart>>;
  try {
    drawn = await drawIncidentChart(picture, input);
  } catch (err) {
    logger.warn({ err, zoneId: picture.zoneId }, "drawing the incident chart failed");
    return { fallback: "render_failed" };
  }
  if (!drawn) return { fallback: "empty" };
  const renderMs = env.clock.elapsed() - started;
  const altText = chartAltText(drawn.chart);
  try {
    // files.getUploadURLExternal, the bytes to the upload URL, files.completeUploadExternal: with no channel the
    // file stays the app's own until a message shows it.
    const done = await client.filesUploadV2({
      file: drawn.png,
      filename,
      title: `Shield zone ${picture.zoneId}, last ${picture.range.words}`,
      alt_text: altText,
    });
    const fileId = uploadedFileId(done);
    if (!fileId) {
      logger.warn({ zoneId: picture.zoneId }, "the chart upload answered without a file id");
      return { fallback: "upload_failed" };
    }
    logger.info(
      { zoneId: picture.zoneId, fileId, renderMs, bytes: drawn.png.length },
      "incident chart posted",
    );
    return { posted: { fileId, altText, renderMs }, png: drawn.png, chart: drawn.chart };
  } catch (err) {
    const code = slackErrorCode(err);
    if (code === "missing_scope") return { fallback: "missing_scope" };
    logger.warn({ err, zoneId: picture.zoneId }, "uploading the incident chart failed");
    return { fallback: "upload_failed" };
  }
}

function uploadedFileId(done: unknown): string | undefined {
  const completions = (done as { files?: { files?: { id?: unknown }[] }[] }).files ?? [];
  const id = completions[0]?.files?.[0]?.id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** Delete a chart a new one replaced; best effort (without files:write, or once gone, it stays or is gone). */
export async function deleteChartFile(client: WebClient, fileId: string, logger: Logger): Promise<void> {
  try {
    await client.files.delete({ file: fileId });
  } catch (err) {
    const code = slackErrorCode(err);
    if (code !== "missing_scope" && code !== "file_not_found" && code !== "file_deleted")
      logger.info({ err, fileId }, "could not delete a replaced incident chart");
  }
}

/** Approvers named on a card's chart at most (the rest stay ids). */
const NAMES_READ = 10;

/**
 * The marks of the card's chart: the changes asked in `channelId` (the card's readers see those) that took
 * effect on the zone in the window, with who approved them by name. None when the store can't be read.
 */
export async function cardChartInput(
  deps: Pick<Deps, "store" | "clock">,
  client: WebClient,
  teamId: string,
  picture: Pick<IncidentPicture, "zoneId" | "range">,
  channelId: string,
  logger: Logger,
): Promise<ChartInput> {
  const timeline = await channelMitigations(deps, teamId, picture, channelId, logger);
  if (!timeline) return {};
  return { mitigations: await namedMitigations(client, timeline, logger) };
}

/** The zone's timeline in the window as `channelId`'s readers see it (the chart's marks), or null when unread. */
export async function channelMitigations(
  deps: Pick<Deps, "store" | "clock">,
  teamId: string,
  picture: { zoneId: number; range: Pick<IncidentPicture["range"], "window" | "to"> },
  channelId: string,
  logger: Logger,
): Promise<Timeline | null> {
  try {
    return await buildTimeline(deps, {
      teamId,
      zoneId: picture.zoneId,
      window: picture.range.window,
      audience: { kind: "channels", channelIds: new Set([channelId]) },
      now: picture.range.to,
    });
  } catch (err) {
    logger.info({ err, zoneId: picture.zoneId }, "the chart's mitigation marks could not be read");
    return null;
  }
}

/** The timeline's mitigations as marks, approvers named through users.info (at most NAMES_READ; the rest ids). */
export async function namedMitigations(
  client: WebClient,
  timeline: Timeline,
  logger: Logger,
): Promise<ChartMitigation[]> {
  const ids = new Set<string>();
  timelineMitigations(timeline, (id) => {
    ids.add(id);
    return id;
  });
  const names = new Map<string, string>();
  await Promise.all(
    [...ids].slice(0, NAMES_READ).map(async (id) => {
      try {
        const { user } = await client.users.info({ user: id });
        const name = user?.profile?.display_name || user?.real_name || user?.name;
        if (name) names.set(id, name);
      } catch (err) {
        logger.debug({ err, id }, "no name for the chart");
      }
    }),
  );
  return timelineMitigations(timeline, (id) => names.get(id) ?? id);
}
