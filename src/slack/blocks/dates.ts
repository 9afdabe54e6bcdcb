/**
 * Slack date formatting: `<!date^unix^{date_short_pretty} {time}|fallback>` shows the time in each
 * reader's own time zone. An unparseable date is shown as sent.
 */
export function slackDate(iso: string | null | undefined, format = "{date_short_pretty} {time}"): string {
  if (!iso) return "–";
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
  if (Number.isNaN(ms)) return iso.replace(/[<>&|]/g, "");
  const unix = Math.floor(ms / 1000);
  return `<!date^${unix}^${format}|${new Date(ms).toISOString().replace("T", " ").slice(0, 16)} UTC>`;
}

export function slackDateFromMs(ms: number, format = "{date_short_pretty} {time}"): string {
  return slackDate(new Date(ms).toISOString(), format);
}
