import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateAgainstSchema } from "./kubernetes-schema.js";
import { KustomizeRefusal, renderKustomization } from "./kustomize.js";

/**
 * The in-process kustomize renders what deploy/kubernetes/ uses exactly, and refuses the rest (so the
 * rendering test can't pass on objects kustomize would render differently); the schema check refuses a
 * field Kubernetes does not have, as `kubectl apply` would.
 */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "edgeops-kustomize-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const HEAD = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";
const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
    - name: http
      port: 80
      targetPort: 3000
`;
function write(path: string, text: string): void {
  mkdirSync(join(dir, path, ".."), { recursive: true });
  writeFileSync(join(dir, path), text);
}
const patchOf = (target: string, ops: string) =>
  `patches:\n  - target:\n${target}\n    patch: |-\n${ops
    .split("\n")
    .map((l) => `      ${l}`)
    .join("\n")}\n`;
const ADD_PORT = "- op: add\n  path: /spec/ports/-\n  value: { name: metrics, port: 9090, targetPort: 9090 }";

describe("renderKustomization", () => {
  it("renders a base's resources through an overlay with a JSON 6902 patch on its target only", () => {
    write("base/kustomization.yaml", `${HEAD}resources:\n  - service.yaml\n`);
    write("base/service.yaml", `${SERVICE}---\n${SERVICE.replace("name: web", "name: other")}`);
    write(
      "overlay/kustomization.yaml",
      `${HEAD}resources:\n  - ../base\n${patchOf("      version: v1\n      kind: Service\n      name: web", ADD_PORT)}`,
    );
    const [web, other] = renderKustomization(join(dir, "overlay")) as unknown as {
      spec: { ports: { name: string }[] };
    }[];
    expect(web?.spec.ports.map((p) => p.name)).toEqual(["http", "metrics"]);
    expect(other?.spec.ports.map((p) => p.name)).toEqual(["http"]);
  });

  it("refuses kustomization fields, patch forms and targets it does not render", () => {
    write("service.yaml", SERVICE);
    const refusal = (kustomization: string) => {
      write("kustomization.yaml", kustomization);
      return () => renderKustomization(dir);
    };
    expect(refusal(`${HEAD}resources:\n  - service.yaml\ncommonLabels:\n  team: ops\n`)).toThrow(
      /the kustomization field "commonLabels" is not rendered/,
    );
    expect(refusal(`${HEAD}resources:\n  - service.yaml\nimages:\n  - name: web\n    newTag: "2"\n`)).toThrow(
      /"images" is not rendered/,
    );
    expect(
      refusal(
        `${HEAD}resources:\n  - service.yaml\npatches:\n  - patch: |-\n      kind: Service\n      metadata: {name: web}\n`,
      ),
    ).toThrow(/strategic merge/);
    expect(
      refusal(
        `${HEAD}resources:\n  - service.yaml\n${patchOf("      kind: Service\n      name: web\n      labelSelector: a=b", ADD_PORT)}`,
      ),
    ).toThrow(/target.labelSelector is not rendered/);
    expect(
      refusal(
        `${HEAD}resources:\n  - service.yaml\n${patchOf("      kind: Service\n      name: we.*", ADD_PORT)}`,
      ),
    ).toThrow(/is a pattern to kustomize/);
    expect(
      refusal(
        `${HEAD}resources:\n  - service.yaml\n${patchOf("      kind: Service\n      name: api", ADD_PORT)}`,
      ),
    ).toThrow(/matches nothing/);
    expect(refusal(`${HEAD}resources:\n  - service.yaml\n  - service.yaml\n`)).toThrow(/declared twice/);
    expect(refusal(`${HEAD}resources:\n  - https://github.com/example/manifests\n`)).toThrow(
      /not a local path/,
    );
    expect(refusal(`${HEAD}resources:\n  - service.yaml\n`)).not.toThrow();
    expect(() => refusal(`${HEAD}namePrefix: x-\n`)()).toThrow(KustomizeRefusal);
  });

  it("fails a patch whose path is not in the object, as kustomize does", () => {
    write("service.yaml", SERVICE);
    write(
      "kustomization.yaml",
      `${HEAD}resources:\n  - service.yaml\n${patchOf("      kind: Service\n      name: web", "- op: replace\n  path: /spec/clusterIP\n  value: None")}`,
    );
    expect(() => renderKustomization(dir)).toThrow(/clusterIP|unresolvable|does not exist/i);
  });
});

describe("validateAgainstSchema", () => {
  const service = () => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", labels: { "app.kubernetes.io/name": "web" } },
    spec: { selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
  });

  it("accepts a valid object, maps of any keys included", () => {
    expect(() => validateAgainstSchema(service())).not.toThrow();
  });

  it("refuses a wrong type, a misspelt field and a kind it has no schema for", () => {
    const wrongType = service();
    (wrongType.spec.ports[0] as { port: unknown }).port = "eighty";
    expect(() => validateAgainstSchema(wrongType)).toThrow(/Service web: .*port/);
    const misspelt = service() as ReturnType<typeof service> & { spec: { selectors?: unknown } };
    misspelt.spec.selectors = { app: "web" };
    expect(() => validateAgainstSchema(misspelt)).toThrow(
      "Service web: fields the Kubernetes schema does not have: /spec/selectors",
    );
    expect(() => validateAgainstSchema({ ...service(), kind: "Secret" })).toThrow(
      /no Kubernetes schema for v1 Secret/,
    );
  });
});
