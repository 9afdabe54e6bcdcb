/**
 * The detailed-metrics check written the straightforward way (zod records, then one pass per question): what
 * `overviewMetricSchema` in src/edge/schemas/shield.ts was before it was made cheaper, kept as the reference its
 * spec test compares it with, and timed beside it by bench/metrics-check.ts.
 */
import { z } from "zod";
import { nullish } from "../../src/edge/schemas/common.js";
import { dayMonthEitherWay, readDateKeys } from "../../src/edge/schemas/date-key.js";
import { detailedMetricsSchema, type MetricPoint, shieldEnvelope } from "../../src/edge/schemas/shield.js";

export const referenceOverviewMetricSchema = z
  .looseObject({
    metrics: nullish(z.record(z.string(), nullish(z.record(z.string(), z.number().int())))),
    totals: nullish(z.record(z.string(), z.number().int())),
  })
  .nullish()
  .transform((m) => {
    const raw = m?.metrics ?? {};
    const outer = Object.keys(raw);
    const inner = [...new Set(Object.values(raw).flatMap((i) => Object.keys(i ?? {})))];
    const readOuter = readDateKeys(outer);
    const readInner = readDateKeys(inner);
    const dated = (keys: string[], read: (k: string) => number | null) =>
      keys.filter((k) => read(k) !== null || dayMonthEitherWay(k)).length;
    const digits = (keys: string[]) => keys.filter((k) => /\d/.test(k)).length;
    const [datedOuter, datedInner] = [dated(outer, readOuter), dated(inner, readInner)];
    const timeOuter = datedOuter !== datedInner ? datedOuter > datedInner : digits(outer) >= digits(inner);
    const read = timeOuter ? readOuter : readInner;
    const time = (k: string) => read(k) ?? Number.NaN;
    const unreadableKeys = (timeOuter ? outer : inner).filter((k) => Number.isNaN(time(k)));
    const byTime = new Map<number, Record<string, number>>();
    const add = (at: number, name: string, v: number) => {
      if (Number.isNaN(at)) return;
      const values = byTime.get(at) ?? {};
      values[name] = (values[name] ?? 0) + v;
      byTime.set(at, values);
    };
    for (const [k, inner] of Object.entries(raw)) {
      for (const [ik, v] of Object.entries(inner ?? {})) {
        if (timeOuter) add(time(k), ik, v);
        else add(time(ik), k, v);
      }
    }
    const points: MetricPoint[] = [...byTime.entries()]
      .sort(([a], [b]) => a - b)
      .map(([at, values]) => ({ at, values }));
    return { points, totals: m?.totals ?? null, unreadableKeys };
  });

export const referenceDetailedMetricsSchema = detailedMetricsSchema(referenceOverviewMetricSchema);

export const referenceOverviewMetricsResponseSchema = shieldEnvelope(referenceDetailedMetricsSchema);
