/**
 * The deployment files as an operator would use them. No container engine
 * or cluster runs here, so: every Kubernetes document parses, has the kind
 * it should, and wires up what the gateway needs (its config validates, its
 * secrets exist, its probes hit the ops routes, it runs locked down); the
 * Dockerfile has the stages and steps an image needs. (That the image's own
 * command starts from a clean production-only install is in
 * test/slow/deploy-image.test.ts: it runs `npm ci`.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../src/loader/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';
import { dockerfileProblems, parseDockerfile } from '../support/deploy-dockerfile.js';
import { k8sProblems, type K8sObject } from '../support/deploy-k8s.js';
import { k8sSchemaProblems } from '../support/k8s-schema.js';

const K8S_DIR = 'deploy/kubernetes';
const EXPECTED_KINDS: Readonly<Record<string, readonly string[]>> = {
  'sidecar.yaml': ['ConfigMap', 'Secret', 'Deployment', 'NetworkPolicy', 'NetworkPolicy'],
  'shared-gateway.yaml': ['ConfigMap', 'Secret', 'Deployment', 'Service', 'NetworkPolicy', 'PodDisruptionBudget', 'NetworkPolicy', 'NetworkPolicy'],
};

function loadK8s(file: string): K8sObject[] {
  const docs = parseAllDocuments(readFileSync(join(K8S_DIR, file), 'utf8'), { uniqueKeys: true });
  if (!Array.isArray(docs)) throw new Error(`${file}: no documents`);
  for (const doc of docs) if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
  return docs.map((doc) => doc.toJS() as K8sObject);
}

const clone = <T>(value: T): T => structuredClone(value);

t.test('every YAML file in deploy/kubernetes is one this test knows', async (t) => {
  const files = readdirSync(K8S_DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
  t.same(files, Object.keys(EXPECTED_KINDS).sort());
});

for (const [file, kinds] of Object.entries(EXPECTED_KINDS)) {
  t.test(`${file}: parses, has the expected kinds, and wires the gateway correctly`, async (t) => {
    const docs = loadK8s(file);
    t.same(
      docs.map((d) => d.kind),
      kinds,
    );
    t.same(k8sProblems(docs, { sidecar: file === 'sidecar.yaml' }), []);
  });
}

t.test('every object is valid against the Kubernetes API schemas', async (t) => {
  const docs = Object.keys(EXPECTED_KINDS).flatMap(loadK8s);
  for (const doc of docs) t.same(k8sSchemaProblems(doc), [], `${doc.kind} ${doc.metadata?.name}`);
  // The check is live: a wrong type is caught. (Unknown fields: test/slow/k8s-unknown-fields.test.ts.)
  const broken = structuredClone(docs.find((d) => d.kind === 'Deployment')!);
  (broken.spec as Record<string, unknown>).replicas = 'two';
  t.match(k8sSchemaProblems(broken).join('\n'), /spec\/replicas must be integer/);
});

t.test('the embedded gateway configs validate with the real config loader', async (t) => {
  for (const file of Object.keys(EXPECTED_KINDS)) {
    const configMap = loadK8s(file).find((d) => d.kind === 'ConfigMap')!;
    const config: GatewayConfig = parseConfig(String(configMap.data?.['gateway.yaml']), `${file}#gateway.yaml`);
    t.ok(config.remotes.size > 0, `${file} configures remotes`);
    t.not(config.server.opsPort, undefined, `${file} moves the ops routes off the caller port`);
    for (const remote of config.remotes.values()) t.match(remote.url.protocol, 'https:', `${file}: ${remote.name} uses TLS`);
  }
});

t.test('the Kubernetes checks catch each kind of mistake', async (t) => {
  const sidecar = loadK8s('sidecar.yaml');
  const shared = loadK8s('shared-gateway.yaml');
  const podOf = (docs: K8sObject[]) => docs.find((d) => d.kind === 'Deployment')!.spec!.template!.spec!;
  const gatewayOf = (docs: K8sObject[]) => [...(podOf(docs).initContainers ?? []), ...podOf(docs).containers!].find((c) => c.name === 'a2a-egress')!;
  const agentOf = (docs: K8sObject[]) => podOf(docs).containers!.find((c) => c.name === 'agent')!;
  const policy = (docs: K8sObject[], name: string) => docs.find((d) => d.kind === 'NetworkPolicy' && d.metadata?.name === name)!;
  const cases: [string, K8sObject[], (docs: K8sObject[]) => void, RegExp, boolean][] = [
    ['readiness on /healthz', sidecar, (d) => (gatewayOf(d).readinessProbe!.httpGet!.path = '/healthz'), /readinessProbe/, true],
    ['liveness on the caller port', shared, (d) => (gatewayOf(d).livenessProbe!.httpGet!.port = 'a2a'), /livenessProbe.*9090/, false],
    ['a token env var not from the Secret', sidecar, (d) => (gatewayOf(d).env = gatewayOf(d).env!.filter((e) => e.name !== 'WEATHER_AGENT_TOKEN')), /WEATHER_AGENT_TOKEN/, true],
    ['a Secret key that does not exist', shared, (d) => delete d.find((x) => x.kind === 'Secret')!.stringData!['caller-tokens'], /caller-tokens/, false],
    ['an unknown config key', sidecar, (d) => (d[0]!.data!['gateway.yaml'] += 'extra: 1\n'), /extra: unknown key/, true],
    ['a writable root filesystem', shared, (d) => (gatewayOf(d).securityContext!.readOnlyRootFilesystem = false), /readOnlyRootFilesystem/, false],
    ['no memory limit', sidecar, (d) => delete gatewayOf(d).resources!.limits!.memory, /memory limit/, true],
    ['the old 256 Mi limit, under the measured peak', sidecar, (d) => (gatewayOf(d).resources!.limits!.memory = '256Mi'), /memory limit 256Mi is under 1\.5× the measured peak of 316 MiB/, true],
    ['473 Mi, just under 1.5× the measured peak (474 MiB)', sidecar, (d) => (gatewayOf(d).resources!.limits!.memory = '473Mi'), /memory limit 473Mi is under 1\.5× the measured peak of 316 MiB/, true],
    ['config mounted elsewhere', shared, (d) => (gatewayOf(d).volumeMounts![0]!.mountPath = '/config'), /\/etc\/a2a-egress/, false],
    ['a Service that selects nothing', shared, (d) => (d.find((x) => x.kind === 'Service')!.spec!.selector = { app: 'nope' }), /Service selector/, false],
    ['an agent URL without the trailing slash', sidecar, (d) => (agentOf(d).env![0]!.value = 'http://127.0.0.1:8080/remotes/weather'), /trailing slash/, true],
    ['an agent URL naming no remote', sidecar, (d) => (agentOf(d).env![0]!.value = 'http://127.0.0.1:8080/remotes/nope/'), /no remote "nope"/, true],
    ['a port variable nothing reads', shared, (d) => gatewayOf(d).env!.push({ name: 'A2A_EGRESS_OPS_PORT', value: '9090' }), /A2A_EGRESS_OPS_PORT is read by nothing/, false],
    ['a containerPort that is not the config port', shared, (d) => (gatewayOf(d).ports![0]!.containerPort = 8081), /no containerPort 8080/, false],
    ['the sidecar as a plain container', sidecar, (d) => {
      const pod = podOf(d);
      pod.containers!.push(pod.initContainers!.pop()!);
    }, /must be a native sidecar/, true],
    ['a sidecar init container that would run once', sidecar, (d) => delete gatewayOf(d).restartPolicy, /restartPolicy must be Always/, true],
    ['a sidecar the agent does not wait for', sidecar, (d) => delete gatewayOf(d).startupProbe, /startupProbe/, true],
    ['no egress policy', sidecar, (d) => d.splice(d.indexOf(policy(d, 'research-agent-egress')), 1), /no egress NetworkPolicy for the gateway pods/, true],
    ['an egress rule open to everything', sidecar, (d) => delete policy(d, 'research-agent-egress').spec!.egress![1]!.to, /without "to" allows every destination/, true],
    ['egress to the metadata address', shared, (d) => (policy(d, 'a2a-egress-egress').spec!.egress![1]!.to![0]!.ipBlock!.except = ['10.0.0.0/8']), /must exclude 172\.16\.0\.0\/12, 192\.168\.0\.0\/16, 169\.254\.0\.0\/16/, false],
    ['egress without DNS', shared, (d) => policy(d, 'a2a-egress-egress').spec!.egress!.shift(), /no DNS/, false],
    ['no disruption budget', shared, (d) => d.splice(d.findIndex((x) => x.kind === 'PodDisruptionBudget'), 1), /no PodDisruptionBudget/, false],
    ['a budget that blocks every drain', shared, (d) => (d.find((x) => x.kind === 'PodDisruptionBudget')!.spec!.minAvailable = 2), /minAvailable 2 with 2 replicas/, false],
    ['no preStop', shared, (d) => delete gatewayOf(d).lifecycle, /no preStop/, false],
    ['a grace period shorter than preStop + drain', shared, (d) => (podOf(d).terminationGracePeriodSeconds = 15), /terminationGracePeriodSeconds 15 is under/, false],
    ['callers free to go around the gateway', shared, (d) => d.splice(d.indexOf(policy(d, 'a2a-egress-clients-egress')), 1), /callers \(a2a-egress-client=true\)/, false],
    ['callers allowed out to the internet', shared, (d) => policy(d, 'a2a-egress-clients-egress').spec!.egress!.push({ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }] }), /besides the gateway and DNS/, false],
  ];
  for (const [name, original, mutate, expected, isSidecar] of cases) {
    const docs = clone(original);
    mutate(docs);
    t.match(k8sProblems(docs, { sidecar: isSidecar }).join('\n'), expected, name);
  }
  // At the bound: 1.5 × 316 MiB = 474 MiB is enough.
  const atBound = clone(sidecar);
  gatewayOf(atBound).resources!.limits!.memory = '474Mi';
  t.notMatch(k8sProblems(atBound, { sidecar: true }).join('\n'), /memory limit/, '474 Mi, 1.5× the measured peak, passes');
});

const dockerfileText = readFileSync('Dockerfile', 'utf8');

t.test('the Dockerfile builds in one stage and runs production deps only in the final one', async (t) => {
  const stages = parseDockerfile(dockerfileText);
  t.ok(stages.length >= 2, 'multi-stage');
  t.same(dockerfileProblems(stages, readFileSync('.dockerignore', 'utf8')), []);
});

t.test('the Dockerfile checks catch each kind of mistake', async (t) => {
  const ignore = readFileSync('.dockerignore', 'utf8');
  const cases: [string, (text: string) => string, RegExp][] = [
    ['one stage only', (s) => s.slice(s.indexOf('FROM node:24-bookworm-slim AS runtime')), /build stage/],
    ['dev deps in the final stage', (s) => s.replace('npm ci --omit=dev --ignore-scripts', 'npm ci --ignore-scripts'), /npm ci --omit=dev/],
    ['running as root', (s) => s.replace(/^USER .*$/m, 'USER root'), /non-root USER/],
    ['no USER at all', (s) => s.replace(/^USER .*$/m, ''), /non-root USER/],
    ['no HEALTHCHECK', (s) => s.replace(/^HEALTHCHECK[^\n]*\\\n[^\n]*\n/m, ''), /HEALTHCHECK/],
    ['config elsewhere', (s) => s.replaceAll('/etc/a2a-egress/', '/app/').replaceAll('/etc/a2a-egress/gateway.yaml', '/app/gateway.yaml'), /\/etc\/a2a-egress\/gateway\.yaml/],
    ['another command', (s) => s.replace('"dist/cli.js"', '"dist/server.js"'), /node dist\/cli\.js/],
    ['copying a missing file', (s) => s.replace('COPY src ./src', 'COPY srcs ./src'), /srcs/],
    ['Node 20, past its end of life', (s) => s.replaceAll('node:24-bookworm-slim', 'node:20-bookworm-slim'), /node:20-bookworm-slim: use a supported Node LTS/],
    ['an odd, never-LTS Node line', (s) => s.replaceAll('node:24-bookworm-slim', 'node:23-bookworm-slim'), /supported Node LTS/],
    ['build and run on different Node lines', (s) => s.replace('FROM node:24-bookworm-slim AS build', 'FROM node:22-bookworm-slim AS build'), /same base image/],
    ['the port on the command line, out of the health check’s sight', (s) => s.replace('"--host", "0.0.0.0"]', '"--host", "0.0.0.0", "--port", "9000"]'), /must not pass --port/],
    ['EXPOSE another port', (s) => s.replace('EXPOSE 8080', 'EXPOSE 9000'), /EXPOSE must match the caller port \(8080\)/],
    ['a port variable nothing reads', (s) => s.replace('ENV NODE_ENV=production', 'ENV A2A_EGRESS_OPS_PORT=9090 NODE_ENV=production'), /A2A_EGRESS_OPS_PORT/],
    ["V8's default young generation", (s) => s.replace(/NODE_OPTIONS=\S+/, 'NODE_OPTIONS=--max-old-space-size=512'), /young generation/],
  ];
  for (const [name, mutate, expected] of cases) {
    t.match(dockerfileProblems(parseDockerfile(mutate(dockerfileText)), ignore).join('\n'), expected, name);
  }
  t.match(dockerfileProblems(parseDockerfile(dockerfileText), `${ignore}\nsrc\n`).join('\n'), /src.*\.dockerignore/, 'an ignored source');
});
