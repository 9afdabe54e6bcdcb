import type { KnownBlock } from "@slack/types";
import { dayMonthEitherWay } from "../../edge/schemas/date-key.js";
import { type RateLimitMetrics, UNDECIDED_DAY_MONTH } from "../../edge/schemas/shield.js";
import type { NamedRateLimitRule, ZoneRateLimits } from "../../services/rate-limits.js";
import { skippedText } from "./apps.js";
import { context, fields, header, packLines, section } from "./block-kit.js";
import { mrkdwn } from "./mrkdwn.js";
import { type Reply, reply } from "./reply.js";

const BARS = "▁▂▃▄▅▆▇█";

/** What a series that never moves draws instead of a line of equal bars (which reads as a level). */
export const STEADY = "steady";

/**
 * A text sparkline: one bar per value, scaled to the largest. A series whose values are all the same draws
 * no line but "steady" (as wide as the line would be), since a row of full or empty bars reads as a peak or
 * a gap that is not there.
 */
export function sparkline(values: readonly number[]): string {
  if (values.length > 1 && values.every((v) => v === values[0])) return STEADY.padEnd(values.length);
  const max = Math.max(0, ...values);
  return values
    .map((v) =>
      max === 0 ? BARS[0] : BARS[Math.min(BARS.length - 1, Math.round((v / max) * (BARS.length - 1)))],
    )
    .join("");
}

const n = (v: number) => v.toLocaleString("en-US");

/** "Login · rate limit 7010 on shop.example.com (zone 18401)": a rule with its name and zone, as known. */
export function ruleWords(rule: NamedRateLimitRule): string {
  const zone =
    rule.zoneId === null
      ? ""
      : rule.domain === null
        ? ` on shield zone ${rule.zoneId}`
        : ` on ${rule.domain} (zone ${rule.zoneId})`;
  return `${rule.name ? `${rule.name} · ` : ""}rate limit ${rule.id}${zone}`;
}

export function rateLimitMessage(
  id: number,
  m: RateLimitMetrics,
  rule: NamedRateLimitRule | null = null,
): Reply {
  const o = m.overview;
  const count = (v: number | undefined) => (v === undefined ? "—" : n(v));
  const days = m.days.slice(-28);
  const blocks: KnownBlock[] = [
    header(`${rule?.name ? `${rule.name} · ` : ""}Rate limit ${id} · breaches`),
    context(
      rule === null
        ? "The rule's name and zone could not be read (the Edge API did not say)."
        : mrkdwn`${ruleWords(rule)}${rule.zoneId === null ? " (its zone was not given)" : ""}`,
    ),
    fields([
      `*Total*\n${count(o?.totalBreaches)}`,
      `*Blocked*\n${count(o?.blockedBreaches)}`,
      `*Challenged*\n${count(o?.challengedBreaches)}`,
      `*Logged*\n${count(o?.loggedBreaches)}`,
    ]),
    context(
      o
        ? "The rule's overall counters, over a period the Edge API does not give."
        : "The rule's overall counters did not come: unknown.",
    ),
  ];
  let summary = o ? `${n(o.totalBreaches)} breaches over a period the Edge API does not give` : "breaches";
  if (days.length === 0) {
    blocks.push(context("No daily figures for the past 28 days."));
  } else {
    const totals = days.map((d) => d.totalBreaches);
    const sum = totals.reduce((a, b) => a + b, 0);
    const busiest = days.reduce((best, d) => (d.totalBreaches > best.totalBreaches ? d : best), days[0]!);
    summary = `${n(sum)} breaches in the past ${days.length} days`;
    blocks.push(
      section(
        `*Past ${days.length} days*\n\`${sparkline(totals)}\`\n${days[0]!.day} → ${days[days.length - 1]!.day}`,
      ),
      context(`Busiest day: ${busiest.day} with ${n(busiest.totalBreaches)} · total ${n(sum)}`),
    );
    if (m.unreadableDays.length > 0) {
      const why = m.unreadableDays.every(dayMonthEitherWay)
        ? `a date ${UNDECIDED_DAY_MONTH} (no day of the answer says which)`
        : "a date edgeops could not read";
      blocks.push(
        context(
          `${m.unreadableDays.length} of these days came with ${why}; they are shown last, as the Edge API wrote them (${m.unreadableDays.slice(0, 3).join(", ")}).`,
        ),
      );
    }
  }
  return reply(`Rate limit ${id}: ${summary}`, blocks);
}

/** A zone's rate-limit rules by name, busiest first, and how to see one rule's days. */
export function zoneRateLimitsMessage(v: ZoneRateLimits): Reply {
  const where = v.domain === null ? `shield zone ${v.zoneId}` : `${v.domain} (zone ${v.zoneId})`;
  const lines = v.rules.map((r) => {
    const count = r.breaches === null ? "—" : n(r.breaches);
    const breaches = v.countersCame ? ` · ${count} breaches in 28 days` : "";
    return mrkdwn`${r.name ?? "(no name)"} · rate limit ${r.id}${breaches}`;
  });
  const blocks: KnownBlock[] = [header(`Rate limits · ${where}`)];
  if (lines.length === 0) blocks.push(section(`Shield zone ${v.zoneId} has no rate-limit rules.`));
  else blocks.push(...packLines(lines, 40, "rate limits"));
  if (!v.complete)
    blocks.push(
      context(
        `These are the first ${n(v.rules.length)} rules edgeops read; the Edge API's list may go on (partial).`,
      ),
    );
  if (v.skipped > 0) blocks.push(context(skippedText(v.skipped, "rate limit", "an id")));
  const unknown = v.rules.filter((r) => r.breaches === null).length;
  if (!v.countersCame)
    blocks.push(context("The breach counters did not come: the rules are listed without them."));
  else if (unknown > 0)
    blocks.push(
      context(
        `No breach counters came for ${n(unknown)} ${unknown === 1 ? "rule" : "rules"} (shown as —): ${unknown === 1 ? "its" : "their"} breaches are unknown.`,
      ),
    );
  const first = v.rules[0];
  if (first) blocks.push(context(`One rule's past 28 days: /edge ratelimit ${first.id}`));
  const partial = v.complete ? "" : " (partial)";
  return reply(`${n(v.rules.length)} rate limits in ${where}${partial}`, blocks);
}
