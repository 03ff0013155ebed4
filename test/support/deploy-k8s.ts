/**
 * Checks a set of Kubernetes documents that deploy a2a-egress for the
 * mistakes that only show once it is running in a cluster: a config the
 * gateway rejects, a credential env var that is never set, probes on the
 * wrong routes or port, a config mounted where the image does not look, a
 * Service or NetworkPolicy that selects no pod, a container that is not
 * locked down. Returns the problems as sentences; [] means none.
 */
import { parseConfig } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
export interface Probe {
  httpGet?: { path: string; port: string | number };
}
export interface Container {
  name: string;
  image?: string;
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface PodSpec {
  containers?: Container[];
  securityContext?: Record<string, unknown>;
  volumes?: { name: string; configMap?: { name: string; items?: { key: string; path: string }[] } }[];
}
export interface K8sObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    selector?: Record<string, unknown>;
    template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec };
    podSelector?: { matchLabels?: Record<string, string> };
    ports?: { port: number; targetPort?: string | number }[];
  };
}

export const GATEWAY_CONTAINER = 'a2a-egress';
export const CONFIG_DIR = '/etc/a2a-egress';

const subset = (want: Record<string, unknown> | undefined, have: Record<string, string> | undefined) =>
  want !== undefined && Object.keys(want).length > 0 && Object.entries(want).every(([k, v]) => have?.[k] === v);

/** Every env var name the gateway config will read at start-up. */
export function configEnvNames(config: GatewayConfig): string[] {
  const names: string[] = [];
  if (config.server.auth) names.push(config.server.auth.tokensEnv);
  for (const remote of config.remotes.values()) {
    const auth = remote.auth as Record<string, unknown> | undefined;
    for (const key of ['tokenEnv', 'valueEnv']) if (typeof auth?.[key] === 'string') names.push(auth[key] as string);
  }
  return names;
}

export function k8sProblems(docs: readonly K8sObject[], opts: { sidecar: boolean }): string[] {
  const problems: string[] = [];
  const configMap = docs.find((d) => d.kind === 'ConfigMap' && d.data?.['gateway.yaml'] !== undefined);
  const deployment = docs.find((d) => d.kind === 'Deployment');
  if (!configMap) return ['no ConfigMap with a gateway.yaml key'];
  if (!deployment) return ['no Deployment'];
  let config: GatewayConfig;
  try {
    config = parseConfig(configMap.data!['gateway.yaml']!, 'gateway.yaml');
  } catch (err) {
    return [`the ConfigMap's gateway.yaml is rejected: ${(err as Error).message}`];
  }
  const pod = deployment.spec?.template?.spec ?? {};
  const podLabels = deployment.spec?.template?.metadata?.labels;
  const containers = pod.containers ?? [];
  const gateway = containers.find((c) => c.name === GATEWAY_CONTAINER);
  if (!gateway) return [`no container named ${GATEWAY_CONTAINER}`];

  if (!subset(deployment.spec?.selector?.matchLabels as Record<string, string> | undefined, podLabels)) problems.push('Deployment selector does not match its pod labels');
  const env = new Map((gateway.env ?? []).map((e) => [e.name, e]));
  const portOf = (port: string | number | undefined) =>
    typeof port === 'number' ? port : gateway.ports?.find((p) => p.name === port)?.containerPort;

  // Ports: the image's command takes --port from A2A_EGRESS_PORT, overriding server.port.
  const callerPort = Number(env.get('A2A_EGRESS_PORT')?.value ?? 8080);
  const opsPort = config.server.opsPort ?? callerPort;
  if (!gateway.ports?.some((p) => p.containerPort === callerPort)) problems.push(`no containerPort ${callerPort} for A2A_EGRESS_PORT`);
  const configEnv = env.get('A2A_EGRESS_CONFIG')?.value;
  if (configEnv !== undefined && configEnv !== `${CONFIG_DIR}/gateway.yaml`) problems.push(`A2A_EGRESS_CONFIG must be ${CONFIG_DIR}/gateway.yaml`);

  for (const [probe, path] of [['readinessProbe', '/readyz'], ['livenessProbe', '/healthz']] as const) {
    const get = gateway[probe]?.httpGet;
    if (get?.path !== path) problems.push(`${probe} must GET ${path}`);
    else if (portOf(get.port) !== opsPort) problems.push(`${probe} must use the ops port ${opsPort}, not ${String(get.port)}`);
  }

  // Config: mounted read-only where the image looks, from this ConfigMap.
  const mount = gateway.volumeMounts?.find((m) => m.mountPath === CONFIG_DIR);
  const volume = pod.volumes?.find((v) => v.name === mount?.name);
  if (!mount || !mount.readOnly) problems.push(`the config must be mounted read-only at ${CONFIG_DIR}`);
  else if (volume?.configMap?.name !== configMap.metadata?.name) problems.push(`the volume at ${CONFIG_DIR} is not the ConfigMap ${configMap.metadata?.name}`);
  else if (volume?.configMap?.items && !volume.configMap.items.some((i) => i.key === 'gateway.yaml' && i.path === 'gateway.yaml')) {
    problems.push('the ConfigMap volume does not project gateway.yaml');
  }

  // Secrets: every env var the config reads comes from a Secret key that exists.
  for (const name of configEnvNames(config)) {
    const ref = env.get(name)?.valueFrom?.secretKeyRef;
    if (!ref) {
      problems.push(`${name} (read by the config) is not set from a Secret`);
      continue;
    }
    const secret = docs.find((d) => d.kind === 'Secret' && d.metadata?.name === ref.name);
    if (!secret) problems.push(`${name} refers to a Secret ${ref.name} that is not defined`);
    else if (secret.stringData?.[ref.key] === undefined && secret.data?.[ref.key] === undefined) problems.push(`${name} refers to a missing key ${ref.key}`);
  }

  // Locked down: non-root, read-only root, no privilege escalation, bounded memory.
  for (const c of containers) {
    const sc = c.securityContext ?? {};
    if (sc.runAsNonRoot !== true && pod.securityContext?.runAsNonRoot !== true) problems.push(`${c.name}: runAsNonRoot is not set`);
    if (sc.readOnlyRootFilesystem !== true) problems.push(`${c.name}: readOnlyRootFilesystem is not true`);
    if (sc.allowPrivilegeEscalation !== false) problems.push(`${c.name}: allowPrivilegeEscalation is not false`);
    if (!c.resources?.requests) problems.push(`${c.name}: no resource requests`);
    if (!c.resources?.limits?.memory) problems.push(`${c.name}: no memory limit`);
  }

  for (const service of docs.filter((d) => d.kind === 'Service')) {
    if (!subset(service.spec?.selector, podLabels)) problems.push(`Service selector does not match the pod labels`);
    for (const p of service.spec?.ports ?? []) {
      if (portOf(p.targetPort) !== callerPort) problems.push(`Service port ${p.port} does not target the caller port ${callerPort}`);
    }
  }
  for (const policy of docs.filter((d) => d.kind === 'NetworkPolicy')) {
    if (!subset(policy.spec?.podSelector?.matchLabels, podLabels)) problems.push(`NetworkPolicy ${policy.metadata?.name} selects no pod of this Deployment`);
  }

  if (opts.sidecar) problems.push(...sidecarProblems(containers, config, callerPort));
  return problems;
}

/** The agent container must reach each remote through the sidecar, with the trailing slash SDKs need. */
function sidecarProblems(containers: readonly Container[], config: GatewayConfig, callerPort: number): string[] {
  const problems: string[] = [];
  const agents = containers.filter((c) => c.name !== GATEWAY_CONTAINER);
  if (agents.length === 0) return ['a sidecar pod needs an agent container beside a2a-egress'];
  const urls = agents.flatMap((c) => (c.env ?? []).map((e) => e.value ?? '')).filter((v) => v.includes('/remotes/'));
  if (urls.length === 0) problems.push('the agent container has no URL through the sidecar');
  for (const url of urls) {
    const match = /^http:\/\/(?:127\.0\.0\.1|localhost):(\d+)\/remotes\/([^/]+)(\/?)$/.exec(url);
    if (!match) problems.push(`${url} is not a loopback URL of the sidecar`);
    else if (Number(match[1]) !== callerPort) problems.push(`${url} does not use the caller port ${callerPort}`);
    else if (!config.remotes.has(match[2]!)) problems.push(`${url} names no remote "${match[2]}"`);
    else if (match[3] !== '/') problems.push(`${url} needs a trailing slash (SDKs resolve the card relative to it)`);
  }
  return problems;
}
