import type { WebClient } from "@slack/web-api";
import { incidentChartSpec } from "../charts/incident-chart.js";
import { renderPng } from "../charts/render.js";
import type { Clock } from "../clock.js";
import { slackErrorCode } from "../errors.js";
import type { Logger } from "../log.js";
import type { IncidentPicture } from "../services/incident.js";
import {
  type ChartMitigation,
  type ChartThreshold,
  chartAltText,
  type IncidentChart,
  incidentChart,
} from "../services/incident-chart.js";

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

export interface ChartInput {
  threshold?: ChartThreshold | null;
  mitigations?: readonly ChartMitigation[];
}

/** Draw the chart of `picture` to PNG bytes, or null when there is nothing to draw. */
export async function drawIncidentChart(
  picture: Pick<IncidentPicture, "zoneId" | "range" | "traffic">,
  input: ChartInput = {},
): Promise<{ chart: IncidentChart; png: Buffer } | null> {
  const chart = incidentChart(picture, input);
  if (!chart) return null;
  return { chart, png: await renderPng(incidentChartSpec(chart)) };
}

/** Draw and upload the chart of `picture`; the outcome says which fallback applies when there is no picture. */
export async function postIncidentChart(
  env: { clock: Clock },
  client: WebClient,
  picture: Pick<IncidentPicture, "zoneId" | "range" | "traffic">,
  logger: Logger,
  input: ChartInput = {},
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
      filename: `incident-zone-${picture.zoneId}-${picture.range.window}.png`,
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
