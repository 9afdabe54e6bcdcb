import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { CLOSING_BACKSTOP_MS } from "../../src/app/run.js";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.js";
import { silentLogger } from "../../src/log.js";
import { opsRoutes, READINESS_CHECK_TIMEOUT_MS, type ReadinessCheck } from "../../src/ops/health.js";
import { createMetrics } from "../../src/ops/metrics.js";
import { EVENTS_PATH } from "../../src/slack/transport/threaded-receiver.js";
import { selectTransport } from "../../src/slack/transport/transport.js";
import { createManualClock } from "../support/clock.js";
import { validateAgainstSchema } from "../support/kubernetes-schema.js";
import { type K8sObject, renderKustomization } from "../support/kustomize.js";

/**
 * deploy/kubernetes/ can't be applied here (no cluster, no kustomize binary), so both overlays are rendered
 * in-process (test/support/kustomize.ts, which refuses what it does not render) and every object is checked
 * against the Kubernetes schema of its kind. Then the invariants the Dockerfile and compose.yaml tests keep:
 * a non-root user, no secret value anywhere, probes on endpoints edgeops serves (asked of src/ops, not
 * copied), variables edgeops reads, and a configuration that loads into the transport the overlay names.
 */

const root = new URL("../../", import.meta.url).pathname;
const OVERLAYS = { http: "http", "socket-mode": "socket" } as const;
const render = (overlay: string) => renderKustomization(`${root}deploy/kubernetes/overlays/${overlay}`);

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean }; [from: string]: unknown };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  timeoutSeconds?: number;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports: { name?: string; containerPort: number }[];
  env?: EnvVar[];
  envFrom?: unknown[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown> & { capabilities?: { drop?: string[] } };
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  containers: Container[];
  initContainers?: unknown[];
  volumes?: unknown[];
  securityContext: Record<string, unknown>;
  terminationGracePeriodSeconds?: number;
  enableServiceLinks?: boolean;
  automountServiceAccountToken?: boolean;
}
interface Deployment extends K8sObject {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

const only = <T extends K8sObject>(objects: K8sObject[], kind: string): T[] =>
  objects.filter((o) => o.kind === kind) as T[];
const deploymentOf = (objects: K8sObject[]): Deployment => {
  const ds = only<Deployment>(objects, "Deployment");
  expect(ds).toHaveLength(1);
  return ds[0]!;
};
const containerOf = (d: Deployment): Container => {
  expect(d.spec.template.spec.containers).toHaveLength(1);
  expect(d.spec.template.spec.initContainers).toBeUndefined();
  return d.spec.template.spec.containers[0]!;
};
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Variables whose value is a credential; URLs that carry a password (PostgreSQL, Redis) count too. */
const CREDENTIALS = [
  ...CONFIG_VARIABLES.filter((v) => /(TOKEN|SECRET|PASSWORD|_KEYS?)$/.test(v)),
  "DATABASE_URL",
  "REDIS_URL",
];
/** Slack tokens (as src/log.ts recognises them), and a URL's user:password@. */
const SECRET_LOOKING = /\b(?:xox[abposr]|xapp|xwfp)-[A-Za-z0-9-]{6,}|:\/\/[^/\s:@]+:[^/\s@]+@/;

/** What an operator puts in the Secret "edgeops" for one workspace (docs/operations.md). */
const SECRET: Record<string, string> = {
  DATABASE_URL: "postgres://edgeops:pw@postgres.example:5432/edgeops",
  REDIS_URL: "redis://:pw@redis.example:6379",
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
  SLACK_BOT_TOKEN: "xoxb-1-test",
  SLACK_SIGNING_SECRET: "signing-secret",
  SLACK_APP_TOKEN: "xapp-1-test",
};

/** The environment the container gets, with the Secret above. */
function environmentOf(c: Container, secret: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (e.value !== undefined) env[e.name] = e.value;
    else if (ref && secret[ref.key] !== undefined) env[e.name] = secret[ref.key]!;
    else if (ref && ref.optional !== true) throw new Error(`the Secret needs ${ref.key}`);
  }
  return env;
}

function everyString(value: unknown, path = ""): [string, string][] {
  if (typeof value === "string") return [[path, value]];
  if (value && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => everyString(v, `${path}/${k}`));
  return [];
}

/** Status of a GET on one of edgeops' operations routes, answered in-process (src/ops/health.ts). */
async function statusOf(
  path: string,
  state: { failingCheck?: boolean; stopping?: boolean },
): Promise<number> {
  const checks: ReadinessCheck[] = [
    { name: "store", check: () => (state.failingCheck ? "PostgreSQL does not answer" : undefined) },
  ];
  const route = opsRoutes({
    metrics: createMetrics({ defaults: false }),
    edge: { queueStats: () => ({ keys: 0, waiting: 0, inFlight: 0 }) },
    checks,
    stopping: () => state.stopping === true,
    inFlight: () => 0,
    logger: silentLogger,
    clock: createManualClock(0),
  }).find((r) => r.path === path);
  if (!route) throw new Error(`edgeops serves no ${path}`);
  return new Promise((resolve) => {
    let status = 0;
    const res = {
      headersSent: false,
      setHeader: () => res,
      writeHead: (s: number) => {
        status = s;
        return res;
      },
      end: () => resolve(status),
    };
    route.handler(
      { method: "GET", url: path, headers: {} } as IncomingMessage,
      res as unknown as ServerResponse,
    );
  });
}

/** Mebibytes of a memory quantity, cores of a CPU quantity. */
const mib = (q: string) =>
  Number(/^(\d+)Mi$/.exec(q)?.[1] ?? /^(\d+)Gi$/.exec(q)?.[1] ?? Number.NaN) * (q.endsWith("Gi") ? 1024 : 1);
const cores = (q: string) => (q.endsWith("m") ? Number(q.slice(0, -1)) / 1000 : Number(q));

describe("deploy/kubernetes", () => {
  for (const [overlay, transport] of Object.entries(OVERLAYS)) {
    describe(`the ${overlay} overlay`, () => {
      const objects = render(overlay);
      const deployment = deploymentOf(objects);
      const container = containerOf(deployment);
      const pod = deployment.spec.template.spec;

      it("renders objects that are valid against the Kubernetes schemas, with no field the schemas lack", () => {
        expect(objects.map((o) => o.kind).sort()).toEqual(
          transport === "http"
            ? ["Deployment", "Ingress", "PodDisruptionBudget", "Service"]
            : ["Deployment", "PodDisruptionBudget", "Service"],
        );
        for (const o of objects) validateAgainstSchema(o);
      });

      it("runs three replicas of the Dockerfile's image as it does: its entry point, non-root, read-only root", () => {
        expect(deployment.spec.replicas).toBe(3);
        expect(selects(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(
          true,
        );
        expect(container.image).toBe("edgeops");
        // The port the image exposes and its PORT.
        const dockerfile = readFileSync(`${root}Dockerfile`, "utf8");
        const exposed = Number(/^EXPOSE (\d+)$/m.exec(dockerfile)?.[1]);
        expect(Number(/^\s*PORT=(\d+)/m.exec(dockerfile)?.[1])).toBe(exposed);
        expect(container.ports.map((p) => p.containerPort)).toEqual([exposed]);
        // The image's CMD (node dist/main.js, test/ops/docker.process.test.ts) runs, whatever the transport.
        expect(container.command).toBeUndefined();
        expect(container.args).toBeUndefined();
        expect(pod.securityContext.runAsNonRoot).toBe(true);
        // The Dockerfile's USER is "node": the kubelet can only check runAsNonRoot against a numeric user.
        expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
        expect(container.securityContext).toMatchObject({
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
        });
        expect(container.securityContext.runAsUser ?? pod.securityContext.runAsUser).toBeGreaterThan(0);
        expect(container.securityContext.privileged).not.toBe(true);
        expect(container.securityContext.capabilities?.drop).toContain("ALL");
        // The rest of the "restricted" Pod Security Standard.
        expect(pod.securityContext.seccompProfile).toEqual({ type: "RuntimeDefault" });
        // On PostgreSQL with ENCRYPTION_KEY from the environment edgeops writes no file: no volume at all.
        expect(pod.volumes).toBeUndefined();
        expect(pod.automountServiceAccountToken).toBe(false);
      });

      it("sets only variables edgeops reads, every credential from the Secret, and no secret value anywhere", () => {
        expect(container.envFrom, "envFrom would set variables nobody listed").toBeUndefined();
        // Service links would add EDGEOPS_SERVICE_HOST and the like, which edgeops does not read.
        expect(pod.enableServiceLinks).toBe(false);
        const names = (container.env ?? []).map((e) => e.name);
        expect(new Set(names).size, "a variable set twice").toBe(names.length);
        for (const name of names) expect(CONFIG_VARIABLES as readonly string[], name).toContain(name);
        for (const e of container.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (CREDENTIALS.includes(e.name)) {
            expect(e.value, `${e.name} written in the manifest`).toBeUndefined();
            expect(ref, `${e.name} from the Secret`).toMatchObject({ name: "edgeops", key: e.name });
          }
          if (e.valueFrom) expect(Object.keys(e.valueFrom), e.name).toEqual(["secretKeyRef"]);
        }
        expect(objects.filter((o) => o.kind === "Secret" || o.kind === "ConfigMap")).toEqual([]);
        for (const [path, s] of objects.flatMap((o) => everyString(o, `${o.kind}`)))
          expect(SECRET_LOOKING.test(s), `${path}: ${s}`).toBe(false);
      });

      it(`loads into edgeops' production configuration on PostgreSQL and Redis, in ${transport === "http" ? "HTTP mode" : "Socket Mode"}`, () => {
        const config = loadConfig(environmentOf(container, SECRET));
        expect(config.production).toBe(true);
        expect(config.store.databaseUrl).toBe(SECRET.DATABASE_URL);
        expect(config.redis.url).toBe(SECRET.REDIS_URL);
        expect(config.redis.expectedReplicas).toBe(deployment.spec.replicas);
        expect(selectTransport(config).kind).toBe(transport);
        // Without PostgreSQL or Redis the pod does not start (the Secret must have them).
        const { DATABASE_URL: _db, ...noDatabase } = SECRET;
        expect(() => environmentOf(container, noDatabase)).toThrow("the Secret needs DATABASE_URL");
        const { REDIS_URL: _redis, ...noRedis } = SECRET;
        expect(() => environmentOf(container, noRedis)).toThrow("the Secret needs REDIS_URL");
      });

      it("probes endpoints edgeops serves on PORT: liveness stays up through an outage, readiness does not", async () => {
        const port = loadConfig(environmentOf(container, SECRET)).port;
        const portOf = (p: Probe) =>
          typeof p.httpGet?.port === "number"
            ? p.httpGet.port
            : container.ports.find((cp) => cp.name === p.httpGet?.port)?.containerPort;
        for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
          expect(probe?.httpGet).toBeDefined();
          expect(portOf(probe!)).toBe(port);
        }
        const live = container.livenessProbe!.httpGet!.path;
        const started = container.startupProbe!.httpGet!.path;
        const ready = container.readinessProbe!.httpGet!.path;
        // A restart would not bring PostgreSQL back, and a stopping replica must be left to drain.
        for (const path of [live, started]) {
          expect(await statusOf(path, {}), path).toBe(200);
          expect(await statusOf(path, { failingCheck: true }), path).toBe(200);
          expect(await statusOf(path, { stopping: true }), path).toBe(200);
        }
        expect(await statusOf(ready, {})).toBe(200);
        expect(await statusOf(ready, { failingCheck: true })).toBe(503);
        expect(await statusOf(ready, { stopping: true })).toBe(503);
        // The kubelet waits longer than edgeops gives each readiness check.
        expect(container.readinessProbe!.timeoutSeconds! * 1000).toBeGreaterThan(READINESS_CHECK_TIMEOUT_MS);
      });

      it("drains within terminationGracePeriodSeconds: preStop, then SHUTDOWN_TIMEOUT_MS, then closing", () => {
        const preStop = container.lifecycle?.preStop?.exec?.command ?? ["sleep", "0"];
        expect(preStop[0]).toBe("sleep");
        expect(preStop).toHaveLength(2);
        const preStopMs = Number(preStop[1]) * 1000;
        const { shutdownTimeoutMs } = loadConfig(environmentOf(container, SECRET));
        expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(
          preStopMs + shutdownTimeoutMs + CLOSING_BACKSTOP_MS,
        );
      });

      it("asks for the memory and CPU the bench measured (bench/results.json)", () => {
        const bench = JSON.parse(readFileSync(`${root}bench/results.json`, "utf8")) as {
          memory: { peakSettledMiB: number; rounds: Record<string, { peakRssMiB: number }>[] };
        };
        const peak = Math.max(
          ...bench.memory.rounds.flatMap((r) => Object.values(r).map((m) => m?.peakRssMiB ?? 0)),
        );
        const { requests, limits } = container.resources;
        expect(mib(requests.memory!)).toBeGreaterThanOrEqual(bench.memory.peakSettledMiB);
        expect(mib(limits.memory!)).toBeGreaterThanOrEqual(peak);
        expect(cores(requests.cpu!)).toBeGreaterThan(0);
        expect(cores(limits.cpu!)).toBeGreaterThanOrEqual(cores(requests.cpu!));
      });

      it("keeps two of the three replicas through a voluntary disruption", () => {
        const pdbs = only<
          K8sObject & { spec: { maxUnavailable?: number; selector: { matchLabels: Record<string, string> } } }
        >(objects, "PodDisruptionBudget");
        expect(pdbs).toHaveLength(1);
        expect(selects(pdbs[0]!.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(
          true,
        );
        expect(pdbs[0]!.spec.maxUnavailable).toBe(1);
      });
    });
  }

  type Service = K8sObject & {
    spec: {
      selector: Record<string, string>;
      ports: { name?: string; port: number; targetPort: string | number }[];
    };
  };
  type Ingress = K8sObject & {
    spec: {
      rules: {
        http: {
          paths: {
            path: string;
            pathType: string;
            backend: { service: { name: string; port: { name?: string; number?: number } } };
          }[];
        };
      }[];
    };
  };
  /** Does an Ingress path of type Prefix take this request path (element by element, as Kubernetes does)? */
  const prefixTakes = (prefix: string, path: string) =>
    prefix === "/" || path === prefix.replace(/\/$/, "") || path.startsWith(`${prefix.replace(/\/$/, "")}/`);

  it("http: the Ingress routes Slack's events path, and nothing else edgeops serves, to the replicas' PORT", () => {
    const objects = render("http");
    const container = containerOf(deploymentOf(objects));
    const podLabels = deploymentOf(objects).spec.template.metadata.labels;
    const port = loadConfig(environmentOf(container, SECRET)).port;
    const ingresses = only<Ingress>(objects, "Ingress");
    expect(ingresses).toHaveLength(1);
    const paths = ingresses[0]!.spec.rules.flatMap((r) => r.http.paths);
    const routeOf = (requestPath: string) =>
      paths.find((p) => (p.pathType === "Exact" ? p.path === requestPath : prefixTakes(p.path, requestPath)));
    const events = routeOf(EVENTS_PATH);
    expect(events, EVENTS_PATH).toBeDefined();
    const service = only<Service>(objects, "Service").find(
      (s) => s.metadata.name === events!.backend.service.name,
    );
    expect(service).toBeDefined();
    expect(selects(service!.spec.selector, podLabels)).toBe(true);
    const servicePort = service!.spec.ports.find((p) =>
      events!.backend.service.port.name !== undefined
        ? p.name === events!.backend.service.port.name
        : p.port === events!.backend.service.port.number,
    );
    const target = servicePort?.targetPort;
    expect(
      typeof target === "number" ? target : container.ports.find((p) => p.name === target)?.containerPort,
    ).toBe(port);
    // /healthz, /readyz and /metrics stay inside the cluster.
    const opsPaths = opsRoutes({
      metrics: createMetrics({ defaults: false }),
      edge: { queueStats: () => ({ keys: 0, waiting: 0, inFlight: 0 }) },
      checks: [],
      stopping: () => false,
      inFlight: () => 0,
      logger: silentLogger,
      clock: createManualClock(0),
    }).map((r) => r.path);
    expect(opsPaths).toContain("/metrics");
    for (const p of opsPaths) expect(routeOf(p), p).toBeUndefined();
  });

  it("docs/operations.md's Secret has every key a pod can't start without", () => {
    const operations = readFileSync(`${root}docs/operations.md`, "utf8");
    const section = operations.split(/^## /m).find((s) => s.startsWith("Kubernetes\n")) ?? "";
    for (const overlay of Object.keys(OVERLAYS))
      for (const e of containerOf(deploymentOf(render(overlay))).env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref && ref.optional !== true) expect(section, `${overlay}: ${ref.key}`).toContain(`${ref.key}=`);
      }
  });

  it("socket-mode: nothing comes in, so there is no Ingress, and SLACK_APP_TOKEN comes from the Secret", () => {
    const objects = render("socket-mode");
    expect(only(objects, "Ingress")).toEqual([]);
    const env = containerOf(deploymentOf(objects)).env ?? [];
    expect(env.find((e) => e.name === "SLACK_APP_TOKEN")?.valueFrom?.secretKeyRef).toEqual({
      name: "edgeops",
      key: "SLACK_APP_TOKEN",
    });
    expect(env.find((e) => e.name === "SLACK_SIGNING_SECRET")).toBeUndefined();
  });
});
