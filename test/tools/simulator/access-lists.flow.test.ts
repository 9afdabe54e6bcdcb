/**
 * The simulator's access lists where the documents are silent: the adversary's readings (the order of the lists,
 * the spelling of their names, the answer for an id that does not exist), each staged with a pin and judged
 * against the OpenAPI documents; the friendly simulator keeps the convenient reading.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SIM_API_KEY, SIM_IDS, type Simulator, startSimulator } from "../../../tools/simulator/index.js";
import { documentsAjv, type Json, operationFor } from "../../support/openapi.js";

const ZONE = SIM_IDS.customerAccessList.zoneId;
const LISTS = `/shield/shield-zone/${ZONE}/access-lists`;

let sim: Simulator;
beforeEach(async () => {
  sim = await startSimulator({ adversary: {} });
});
afterEach(async () => {
  await sim.close();
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: {
      AccessKey: SIM_API_KEY,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
};

interface Listing {
  managedLists: { listId: number; name: string }[] | null;
  customLists: { listId: number; name: string }[] | null;
}
const listing = async () => (await call("GET", LISTS)).body as unknown as Listing;

const { ajv, toJsonSchema } = documentsAjv({ nullReferences: true });
/** Problems of an answer against the schema its operation documents for that status (none: it conforms). */
function undocumented(method: string, path: string, answer: { status: number; body: Json }): string[] {
  const op = operationFor(method, path);
  const responses = op?.doc.responses as Record<string, { content?: Record<string, { schema?: Json }> }>;
  const schema = responses?.[String(answer.status)]?.content?.["application/json"]?.schema;
  if (!op || !schema) return [`${method} ${path} does not document ${answer.status}`];
  const validate = ajv.compile(toJsonSchema(schema, op.family) as Json);
  return validate(answer.body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

describe("access lists where the documents are silent", () => {
  it("friendly: the lists in the order they were made, their names as sent, NotFound problem details", async () => {
    await call("POST", LISTS, { name: "edgeops: blocked IPs", type: 0, content: "" });
    const l = await listing();
    expect(l.managedLists?.map((m) => m.listId)).toEqual([1, 2, 3]);
    expect(l.customLists?.map((c) => c.name)).toEqual([
      SIM_IDS.customerAccessList.name,
      "edgeops: blocked IPs",
    ]);
    expect((await call("GET", `${LISTS}/1`)).status).toBe(404);
  });

  it('"access-lists.order": the lists come back in another order', async () => {
    await call("POST", LISTS, { name: "edgeops: blocked IPs", type: 0, content: "" });
    sim.setAdversary({ pin: { "access-lists.order": "reverse" } });
    const l = await listing();
    expect(l.managedLists?.map((m) => m.listId)).toEqual([3, 2, 1]);
    expect(l.customLists?.map((c) => c.name)).toEqual([
      "edgeops: blocked IPs",
      SIM_IDS.customerAccessList.name,
    ]);
  });

  it('"access-lists.name-spelling": a name comes back respelled, the same way in every answer about the list', async () => {
    sim.setAdversary({ pin: { "access-lists.name-spelling": "upper-case" } });
    const created = await call("POST", LISTS, { name: "edgeops: blocked IPs", type: 0, content: "" });
    expect(undocumented("POST", LISTS, created)).toEqual([]);
    const id = (created.body.data as { id: number; name: string }).id;
    expect((created.body.data as { name: string }).name).toBe("EDGEOPS: BLOCKED IPS");
    expect(((await call("GET", `${LISTS}/${id}`)).body.data as { name: string }).name).toBe(
      "EDGEOPS: BLOCKED IPS",
    );
    const patched = await call("PATCH", `${LISTS}/${id}`, { content: "203.0.113.7" });
    expect((patched.body.data as { name: string }).name).toBe("EDGEOPS: BLOCKED IPS");
    expect((await listing()).customLists?.find((c) => c.listId === id)?.name).toBe("EDGEOPS: BLOCKED IPS");
    // What is stored is what was sent: only the answers respell it.
    expect(sim.state.accessLists.get(ZONE)?.find((l) => l.id === id)?.name).toBe("edgeops: blocked IPs");

    sim.setAdversary({ pin: { "access-lists.name-spelling": "padded" } });
    expect((await listing()).customLists?.find((c) => c.listId === id)?.name).toBe(" edgeops: blocked IPs ");
  });

  it('"access-lists.unknown-id": an unknown zone, list or configuration is answered with a documented status, the error in the envelope', async () => {
    sim.setAdversary({ pin: { "access-lists.unknown-id": "envelope" } });
    const cases: [string, string, unknown, number][] = [
      ["GET", `/shield/shield-zone/${SIM_IDS.unknownShieldZone}/access-lists`, undefined, 200],
      [
        "POST",
        `/shield/shield-zone/${SIM_IDS.unknownShieldZone}/access-lists`,
        { name: "x", type: 0, content: "" },
        400,
      ],
      ["GET", `${LISTS}/1`, undefined, 200],
      ["PATCH", `${LISTS}/1`, { content: "" }, 400],
      ["PATCH", `${LISTS}/configurations/1`, { action: 2 }, 400],
    ];
    for (const [method, path, body, status] of cases) {
      const answer = await call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(status);
      expect(answer.body.error, `${method} ${path}`).toMatchObject({ statusCode: 404, success: false });
      expect(undocumented(method, path, answer), `${method} ${path}`).toEqual([]);
    }
  });
});
