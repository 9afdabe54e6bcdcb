import { z } from "zod";

/**
 * Helpers shared by the per-family schemas. Enums are tolerant: an integer the spec does not list is
 * kept (and labelled "Unknown (n)"), a string enum is matched case-insensitively and given the spec's
 * spelling; an unlisted string is kept as it came.
 */

/** A label map for an integer enum, and a helper that never fails. */
export type IntLabels = Readonly<Record<number, string>>;

export function intLabel(labels: IntLabels, value: number | null | undefined): string {
  if (value === null || value === undefined) return "Not set";
  return labels[value] ?? `Unknown (${value})`;
}

/** An integer enum value: any integer is accepted (unknown values are kept, not rejected). */
export const intEnum = () => z.number().int();

/** Optional-and-nullable integer enum, normalised to `number | null`. */
export const optIntEnum = () =>
  z
    .number()
    .int()
    .nullish()
    .transform((v) => v ?? null);

/**
 * A string enum compared case-insensitively: `Active` and `active` both become `active` (the spec's
 * spelling); an unlisted value is kept as it came (so the UI can show "Unknown (x)").
 */
export function looseStringEnum<const T extends readonly string[]>(values: T) {
  const byLower = new Map(values.map((v) => [v.toLowerCase(), v] as const));
  return z.string().transform((s): T[number] | (string & {}) => byLower.get(s.toLowerCase()) ?? s);
}

export function stringLabel(
  labels: Readonly<Record<string, string>>,
  value: string | null | undefined,
): string {
  if (value === null || value === undefined || value === "") return "Not set";
  const hit =
    labels[value] ?? Object.entries(labels).find(([k]) => k.toLowerCase() === value.toLowerCase())?.[1];
  return hit ?? `Unknown (${value})`;
}

/** `T | null | undefined` on the wire → `T | null` in the app. */
export const nullish = <S extends z.ZodType>(schema: S) => schema.nullish().transform((v) => v ?? null);

/** The body of a write whose 2xx status is the whole answer (never read). */
export const ignoredBody = z.unknown();

/**
 * A list whose rows need a field the document leaves optional (an id, a count): a row without it is
 * skipped and counted, so one such row does not fail the whole answer. Any other fault in a row still
 * fails it.
 */
export function rowsOf<S extends z.ZodType>(row: S, needed: readonly string[]) {
  return z.array(z.unknown()).transform((items, ctx) => {
    const rows: z.output<S>[] = [];
    let skipped = 0;
    items.forEach((item, i) => {
      const o = item !== null && typeof item === "object" ? (item as Record<string, unknown>) : undefined;
      if (o && needed.some((k) => o[k] === undefined || o[k] === null || o[k] === "")) {
        skipped++;
        return;
      }
      const r = row.safeParse(item);
      if (r.success) rows.push(r.data);
      else for (const issue of r.error.issues) ctx.addIssue({ ...issue, path: [i, ...issue.path] } as never);
    });
    return { rows, skipped };
  });
}
