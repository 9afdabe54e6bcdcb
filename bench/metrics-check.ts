/**
 * The check of one detailed-metrics answer, in this process (issue 40: `/edge zones`' zone checks): the simulator's
 * answer for a zone over the last hour at two-minute resolution (as checkZones reads it) is checked through
 * `shieldOverviewMetricsResponseSchema` N times, beside a floor of `JSON.parse` of the same text, interleaved in
 * rounds so both see the same load; the figure is the ratio of the medians. With `--reference`, the plain zod
 * reading of the same answer (test/support/metrics-reference.ts, what the schema was before it was made cheaper)
 * is timed in the same rounds. `--distinct k`: k answers, each over an hour ending two minutes before the last, checked
 * in turn (no two in a row share their time keys, which the check reads once per list of keys).
 *
 * `npx tsx bench/metrics-check.ts [--n 200] [--rounds 15] [--format iso|us|day-first|dotted|compact|iso-local]
 * [--distinct 1] [--reference]`
 */
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { request } from "undici";
import { METRICS_RESOLUTION, shieldOverviewMetricsResponseSchema } from "../src/edge/schemas/shield.js";
import { referenceOverviewMetricsResponseSchema } from "../test/support/metrics-reference.js";
import {
  DATE_KEY_FORMATS,
  type DateKeyFormat,
  SIM_API_KEY,
  SIM_IDS,
  startSimulator,
} from "../tools/simulator/index.js";
import { round } from "./common.js";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "200" },
    rounds: { type: "string", default: "15" },
    format: { type: "string", default: "iso" },
    distinct: { type: "string", default: "1" },
    reference: { type: "boolean", default: false },
  },
});
const n = Number(values.n);
const rounds = Number(values.rounds);
const distinct = Number(values.distinct);
const format = values.format as DateKeyFormat;
if (!DATE_KEY_FORMATS.includes(format)) throw new Error(`--format: one of ${DATE_KEY_FORMATS.join(", ")}`);

const HOUR = 3_600_000;
const BUCKET_MS = 120_000;

async function detailedAnswers(): Promise<string[]> {
  const sim = await startSimulator({ dateKeyFormat: format });
  try {
    const texts: string[] = [];
    for (let i = 0; i < distinct; i++) texts.push(await detailedAnswer(sim.url, sim.now() - i * BUCKET_MS));
    return texts;
  } finally {
    await sim.close();
  }
}

async function detailedAnswer(url: string, now: number): Promise<string> {
  const from = Math.floor((now - HOUR) / BUCKET_MS) * BUCKET_MS;
  const query = new URLSearchParams({
    StartDate: new Date(from).toISOString(),
    EndDate: new Date(now).toISOString(),
    Resolution: String(METRICS_RESOLUTION.twoMinutes),
  });
  const res = await request(`${url}/shield/metrics/overview/${SIM_IDS.firstShieldZone}/detailed?${query}`, {
    headers: { AccessKey: SIM_API_KEY },
  });
  if (res.statusCode !== 200) throw new Error(`the simulator answered ${res.statusCode}`);
  return await res.body.text();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** µs per call of `check` over n values JSON-parsed beforehand (outside the timing). */
function timeCheck(texts: string[], check: (v: unknown) => unknown): number {
  const parsed = Array.from(
    { length: n },
    (_, i) => JSON.parse(texts[i % texts.length] as string) as unknown,
  );
  const start = performance.now();
  for (const v of parsed) check(v);
  return ((performance.now() - start) * 1000) / n;
}

function timeParse(texts: string[]): number {
  const start = performance.now();
  for (let i = 0; i < n; i++) JSON.parse(texts[i % texts.length] as string);
  return ((performance.now() - start) * 1000) / n;
}

const texts = await detailedAnswers();
const checkNow = (v: unknown) => {
  const r = shieldOverviewMetricsResponseSchema.safeParse(v);
  if (!r.success) throw new Error(`the answer did not pass the check: ${r.error.message}`);
};
const checkReference = (v: unknown) => {
  const r = referenceOverviewMetricsResponseSchema.safeParse(v);
  if (!r.success) throw new Error(`the answer did not pass the reference: ${r.error.message}`);
};
// Warm-up: both compiled before anything is timed.
for (let i = 0; i < 3; i++) {
  timeParse(texts);
  timeCheck(texts, checkNow);
  if (values.reference) timeCheck(texts, checkReference);
}
const floor: number[] = [];
const now: number[] = [];
const reference: number[] = [];
for (let r = 0; r < rounds; r++) {
  floor.push(timeParse(texts));
  now.push(timeCheck(texts, checkNow));
  if (values.reference) reference.push(timeCheck(texts, checkReference));
}
const f = median(floor);
const c = median(now);
const out: Record<string, unknown> = {
  answerBytes: Buffer.byteLength(texts[0] as string),
  format,
  distinct,
  n,
  rounds,
  jsonParseUs: round(f, 1),
  checkUs: round(c, 1),
  ratio: round(c / f, 2),
};
if (values.reference) {
  const ref = median(reference);
  Object.assign(out, {
    referenceUs: round(ref, 1),
    referenceRatio: round(ref / f, 2),
    speedup: round(ref / c, 2),
  });
}
console.log(JSON.stringify(out));
