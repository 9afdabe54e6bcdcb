import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Service } from "kubernetes-models/v1/Service";
import type { K8sObject } from "./kustomize.js";

/**
 * Checks an object against the Kubernetes OpenAPI schema of its kind, through kubernetes-models' generated
 * validators, and also refuses fields the schema does not have. The validators alone accept a misspelt field
 * (`readinesProbe`) as if it were absent, where `kubectl apply` (strict field validation) refuses it; so the
 * validator runs on a proxy that records which fields it looked at: a field it never read, in an object whose
 * keys it never listed (a map, such as labels), is unknown to the schema.
 */

interface ModelClass {
  readonly apiVersion: string;
  readonly kind: string;
  readonly prototype: { validate(): void };
}

/** The kinds deploy/kubernetes/ uses; another kind needs its model here first. */
const MODELS: readonly ModelClass[] = [Deployment, Service, PodDisruptionBudget, Ingress];

interface Visited {
  readonly path: string;
  readonly value: object;
  readonly read: Set<string>;
  listed: boolean;
}

function unknownFields(validate: (data: unknown) => void, data: object): string[] {
  const visited = new Map<object, Visited>();
  const proxies = new WeakMap<object, object>();
  const watch = (value: unknown, path: string): unknown => {
    if (value === null || typeof value !== "object") return value;
    const known = proxies.get(value);
    if (known) return known;
    const v: Visited = { path, value, read: new Set(), listed: false };
    if (!Array.isArray(value)) visited.set(value, v);
    const proxy = new Proxy(value, {
      get(target, key) {
        if (typeof key === "string") v.read.add(key);
        return watch(Reflect.get(target, key), `${path}/${String(key)}`);
      },
      has(target, key) {
        if (typeof key === "string") v.read.add(key);
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        v.listed = true;
        return Reflect.ownKeys(target);
      },
    });
    proxies.set(value, proxy);
    return proxy;
  };
  validate(watch(data, ""));
  return [...visited.values()]
    .filter((v) => !v.listed)
    .flatMap((v) =>
      Object.keys(v.value)
        .filter((k) => !v.read.has(k))
        .map((k) => `${v.path}/${k}`),
    );
}

/** Throws naming the object and every problem: an unknown kind, a schema error, a field the schema lacks. */
export function validateAgainstSchema(o: K8sObject): void {
  const what = `${o.kind} ${o.metadata?.name}`;
  const model = MODELS.find((m) => m.apiVersion === o.apiVersion && m.kind === o.kind);
  if (!model) throw new Error(`${what}: no Kubernetes schema for ${o.apiVersion} ${o.kind} in this test`);
  const validate = (data: unknown) => model.prototype.validate.call(data);
  try {
    validate(o);
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
  const unknown = unknownFields(validate, o);
  if (unknown.length > 0)
    throw new Error(`${what}: fields the Kubernetes schema does not have: ${unknown.join(", ")}`);
}
