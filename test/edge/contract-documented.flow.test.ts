/**
 * Every answer an operation documents, through the client: each documented status other than 200 with
 * bodies generated from its documented schema (../shared/reference/edge-api, read in place), and each
 * documented 200 answer with one object that may be null made null. An error status is the error it
 * means, a 2xx is an answer or a refusal, and neither is ever "an answer edgeops could not understand".
 */
import { describe, expect, it } from "vitest";
import { describeEdgeError, type EdgeErrorKind } from "../../src/edge/errors.js";
import { OPERATIONS, type OperationName } from "../../src/edge/operations.js";
import {
  documentedOperation,
  everyNullObject,
  generate,
  type Mode,
  rng,
} from "../support/answer-generator.js";
import { EVERY_OPERATION } from "../support/every-operation.js";
import { useSimulatorClient } from "../support/sim-client.js";

const s = useSimulatorClient();

/** What each documented error status means. */
const MEANS: Record<number, EdgeErrorKind> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  500: "server",
};
/** Bodies of each documented schema: everything, nothing optional, every nullable null, and mixes. */
const BODIES: Array<[Mode, number]> = [
  ["full", 1],
  ["absent", 1],
  ["nulls", 1],
  ["random", 1],
  ["random", 2],
  ["random", 3],
];

/** The call's outcome: "answered", or the error's kind and sentence. */
async function outcome(name: OperationName): Promise<{ kind: string; sentence: string }> {
  return EVERY_OPERATION[name](s.client).then(
    () => ({ kind: "answered", sentence: "" }),
    (e: unknown) => ({ kind: (e as { kind?: string }).kind ?? "thrown", sentence: describeEdgeError(e) }),
  );
}

const names = Object.keys(EVERY_OPERATION) as OperationName[];

/** Whether a generated answer says it failed: `success: false` of its own or in `error` / `errorResponse`. */
function saysRefused(answer: unknown): boolean {
  const b = answer !== null && typeof answer === "object" ? (answer as Record<string, unknown>) : {};
  const failed = (e: unknown) =>
    e !== null && typeof e === "object" && (e as { success?: unknown }).success === false;
  return b.success === false || failed(b.error) || failed(b.errorResponse);
}

describe("every status an operation documents reads as what it means", () => {
  for (const name of names) {
    const row = OPERATIONS[name];
    const op = documentedOperation(row.method, row.path);
    const statuses = op.statuses.filter((x) => x.status !== 200);
    if (statuses.length === 0) continue;
    it(`${name}: ${statuses.map((x) => x.status).join(", ")}`, async () => {
      const wrong: string[] = [];
      for (const { status, schema } of statuses) {
        const bodies: Array<[string, unknown]> = schema
          ? BODIES.map(([mode, seed]) => [
              `${mode} ${seed}`,
              generate(op.family, schema, mode, rng(seed), seed).answer,
            ])
          : [["no body", "none"]];
        for (const [label, body] of bodies) {
          s.sim.clearFaults();
          s.sim.addFault({ path: /./, status, body });
          const got = await outcome(name);
          const expected = MEANS[status];
          const ok =
            expected !== undefined
              ? got.kind === expected
              : status < 300 && got.kind !== "invalid_response" && got.kind !== "thrown";
          if (!ok)
            wrong.push(
              `${status} ${label}: ${got.kind} (expected ${expected ?? "an answer or a refusal"}) ${JSON.stringify(body).slice(0, 160)}`,
            );
        }
      }
      expect(wrong.slice(0, 6)).toEqual([]);
    });
  }
});

describe("a documented answer with an object null reads it as absent", () => {
  for (const name of names) {
    const row = OPERATIONS[name];
    const op = documentedOperation(row.method, row.path);
    const ok = op.statuses.find((x) => x.status === 200)?.schema;
    if (ok === undefined) continue;
    it(name, async () => {
      const wrong: string[] = [];
      for (const { place, answer } of everyNullObject(op.family, ok, 1)) {
        s.sim.clearFaults();
        s.sim.addFault({ path: /./, status: 200, body: answer });
        const got = await outcome(name);
        // The envelope's `data` null is the answer itself missing: that one may be refused as unreadable.
        // A generated `success: false` (the answer's own, or its error envelope's) is the API's refusal.
        if (
          got.kind !== "answered" &&
          !(place === "data" && got.kind === "invalid_response") &&
          !(saysRefused(answer) && got.kind !== "invalid_response" && got.kind !== "thrown")
        )
          wrong.push(`${place} null: ${got.kind}: ${got.sentence}`);
      }
      expect(wrong).toEqual([]);
    });
  }
});
