import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import jsonPatch, { type Operation } from "fast-json-patch";
import { parseAllDocuments, parse as parseYaml } from "yaml";

// fast-json-patch is CommonJS: Node's ESM loader finds its functions on the default export only.

/**
 * `kubectl kustomize` for the subset deploy/kubernetes/ uses, in-process (no kustomize binary here, and the
 * spec floor starts no process): `resources` (files and directories with their own kustomization) and
 * `patches` in JSON 6902 form aimed at one kind and name. Whatever else a kustomization says is refused with
 * the field's name, so a rendering can never quietly differ from kustomize's: teach this file the field, with
 * a test, before using it. Output order is the order of `resources` (kustomize sorts by kind; no check here
 * depends on order).
 */

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

export class KustomizeRefusal extends Error {
  override readonly name = "KustomizeRefusal";
}

const FILE_NAMES = ["kustomization.yaml", "kustomization.yml", "Kustomization"];
const KUSTOMIZATION_FIELDS = new Set(["apiVersion", "kind", "resources", "patches"]);
const PATCH_FIELDS = new Set(["target", "patch", "path"]);
const TARGET_FIELDS = new Set(["group", "version", "kind", "name", "namespace"]);
/** kustomize reads a target's fields as anchored regular expressions: only plain names mean themselves. */
const PLAIN = /^[A-Za-z0-9.-]*$/;

function kustomizationFile(dir: string): string {
  const found = FILE_NAMES.map((n) => join(dir, n)).filter((f) => existsSync(f));
  if (found.length === 0) throw new KustomizeRefusal(`${dir}: no kustomization.yaml`);
  if (found.length > 1) throw new KustomizeRefusal(`${dir}: more than one kustomization file`);
  return found[0]!;
}

function idOf(o: K8sObject): string {
  const group = o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "";
  return `${group}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}

function readResourceFile(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, "utf8")).flatMap((doc) => {
    if (doc.errors.length > 0) throw new KustomizeRefusal(`${file}: ${doc.errors[0]?.message}`);
    const o = doc.toJS() as K8sObject | null;
    if (o === null) return [];
    if (
      typeof o.apiVersion !== "string" ||
      typeof o.kind !== "string" ||
      typeof o.metadata?.name !== "string"
    )
      throw new KustomizeRefusal(`${file}: every object needs apiVersion, kind and metadata.name`);
    return [o];
  });
}

function matches(o: K8sObject, target: Record<string, string>): boolean {
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
  return (
    (target.group === undefined || target.group === group) &&
    (target.version === undefined || target.version === version) &&
    (target.kind === undefined || target.kind === o.kind) &&
    (target.name === undefined || target.name === o.metadata.name) &&
    (target.namespace === undefined || target.namespace === (o.metadata.namespace ?? ""))
  );
}

function applyPatches(dir: string, entries: unknown, objects: K8sObject[]): K8sObject[] {
  if (entries === undefined) return objects;
  if (!Array.isArray(entries)) throw new KustomizeRefusal(`${dir}: patches must be a list`);
  let out = objects;
  for (const entry of entries as Record<string, unknown>[]) {
    for (const field of Object.keys(entry))
      if (!PATCH_FIELDS.has(field))
        throw new KustomizeRefusal(`${dir}: patches[].${field} is not rendered by this test`);
    const target = entry.target as Record<string, string> | undefined;
    if (target === undefined)
      throw new KustomizeRefusal(
        `${dir}: a patch without a target (strategic merge) is not rendered by this test`,
      );
    for (const [field, value] of Object.entries(target)) {
      if (!TARGET_FIELDS.has(field))
        throw new KustomizeRefusal(`${dir}: patches[].target.${field} is not rendered by this test`);
      if (typeof value !== "string" || !PLAIN.test(value))
        throw new KustomizeRefusal(`${dir}: patches[].target.${field} "${value}" is a pattern to kustomize`);
    }
    if ((entry.patch === undefined) === (entry.path === undefined))
      throw new KustomizeRefusal(`${dir}: a patch needs exactly one of patch and path`);
    const text =
      typeof entry.path === "string" ? readFileSync(resolve(dir, entry.path), "utf8") : String(entry.patch);
    const ops = parseYaml(text) as unknown;
    if (!Array.isArray(ops))
      throw new KustomizeRefusal(
        `${dir}: a strategic-merge patch is not rendered by this test (JSON 6902 only)`,
      );
    let hit = 0;
    out = out.map((o) => {
      if (!matches(o, target)) return o;
      hit++;
      // validate: an operation on a path that isn't there fails, as it does in kustomize.
      return jsonPatch.applyPatch(jsonPatch.deepClone(o), ops as Operation[], true, false)
        .newDocument as K8sObject;
    });
    if (hit === 0)
      throw new KustomizeRefusal(`${dir}: a patch's target ${JSON.stringify(target)} matches nothing`);
  }
  return out;
}

/** The objects `kubectl kustomize <dir>` prints, for the subset above; anything else is a KustomizeRefusal. */
export function renderKustomization(dir: string): K8sObject[] {
  const k = parseYaml(readFileSync(kustomizationFile(dir), "utf8")) as Record<string, unknown>;
  for (const field of Object.keys(k))
    if (!KUSTOMIZATION_FIELDS.has(field))
      throw new KustomizeRefusal(`${dir}: the kustomization field "${field}" is not rendered by this test`);
  if (k.apiVersion !== "kustomize.config.k8s.io/v1beta1" || k.kind !== "Kustomization")
    throw new KustomizeRefusal(
      `${dir}: expected apiVersion kustomize.config.k8s.io/v1beta1, kind Kustomization`,
    );
  if (k.resources !== undefined && !Array.isArray(k.resources))
    throw new KustomizeRefusal(`${dir}: resources must be a list`);
  const objects: K8sObject[] = [];
  const ids = new Set<string>();
  for (const entry of (k.resources ?? []) as unknown[]) {
    if (typeof entry !== "string" || /^[a-z]+:\/\/|^github\.com\//i.test(entry))
      throw new KustomizeRefusal(`${dir}: resource ${JSON.stringify(entry)} is not a local path`);
    const path = resolve(dir, entry);
    if (!existsSync(path)) throw new KustomizeRefusal(`${dir}: resource ${entry} does not exist`);
    for (const o of statSync(path).isDirectory() ? renderKustomization(path) : readResourceFile(path)) {
      // kustomize: "may not add resource with an already registered id".
      if (ids.has(idOf(o))) throw new KustomizeRefusal(`${dir}: ${idOf(o)} is declared twice`);
      ids.add(idOf(o));
      objects.push(o);
    }
  }
  return applyPatches(dir, k.patches, objects);
}
