/**
 * Checks a set of Kubernetes documents that deploy a2a-egress for the
 * mistakes that only show once it is running in a cluster: a config the
 * gateway rejects, a credential env var that is never set, probes on the
 * wrong routes or port, a config mounted where the image does not look, a
 * Service or NetworkPolicy that selects no pod, a container that is not
 * locked down or has less memory than the gateway's measured peak, a sidecar
 * that is not a native one, a shared Deployment without a disruption budget
 * or preStop, egress left open. Returns the problems as sentences; [] means none.
 * (Whether each object is valid Kubernetes at all is test/support/k8s-schema.ts.)
 */
import { parseConfig } from '../../src/loader/load.js';
import type { GatewayConfig } from '../../src/config/schema.js';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
export interface Probe {
  httpGet?: { path: string; port: string | number };
}
export interface NetworkPolicyPeer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}
export interface NetworkPolicyRule {
  to?: NetworkPolicyPeer[];
  from?: NetworkPolicyPeer[];
  ports?: { port?: number | string; protocol?: string }[];
}
export interface Container {
  name: string;
  image?: string;
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  restartPolicy?: string;
  lifecycle?: { preStop?: { sleep?: { seconds: number }; exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
export interface PodSpec {
  containers?: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
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
    replicas?: number;
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    policyTypes?: string[];
    egress?: NetworkPolicyRule[];
    ingress?: NetworkPolicyRule[];
    selector?: Record<string, unknown>;
    template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec };
    podSelector?: { matchLabels?: Record<string, string> };
    ports?: { port: number; targetPort?: string | number }[];
  };
}

export const GATEWAY_CONTAINER = 'a2a-egress';
export const CONFIG_DIR = '/etc/a2a-egress';
/** Label of the pods that call a shared gateway; their egress policy selects them, not the gateway. */
export const CLIENT_LABEL = 'a2a-egress-client';
/** The gateway's highest measured RSS with default limits (docs/performance.md, Memory), and the headroom a limit needs over it. */
export const MEASURED_PEAK_MIB = 316;
export const MEMORY_HEADROOM = 1.5;

/** A Kubernetes memory quantity in MiB (Ki, Mi, Gi, k, M, G or bytes). */
export function quantityMiB(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(quantity);
  if (!match) return Number.NaN;
  const unit = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9, T: 1e12 }[match[2] ?? ''] ?? 1;
  return (Number(match[1]) * unit) / 1024 ** 2;
}

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
  const containers = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
  const gateway = containers.find((c) => c.name === GATEWAY_CONTAINER);
  if (!gateway) return [`no container named ${GATEWAY_CONTAINER}`];

  if (!subset(deployment.spec?.selector?.matchLabels as Record<string, string> | undefined, podLabels)) problems.push('Deployment selector does not match its pod labels');
  const env = new Map((gateway.env ?? []).map((e) => [e.name, e]));
  const portOf = (port: string | number | undefined) =>
    typeof port === 'number' ? port : gateway.ports?.find((p) => p.name === port)?.containerPort;

  // Ports, by the gateway's own rule (src/config/listen.ts): $A2A_EGRESS_PORT over server.port; server.opsPort.
  const callerPort = Number(env.get('A2A_EGRESS_PORT')?.value ?? config.server.port);
  const opsPort = config.server.opsPort ?? callerPort;
  if (env.has('A2A_EGRESS_OPS_PORT')) problems.push('A2A_EGRESS_OPS_PORT is read by nothing: the ops port is server.opsPort in the config');
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
  const memory = gateway.resources?.limits?.memory;
  if (memory !== undefined && !(quantityMiB(memory) >= MEASURED_PEAK_MIB * MEMORY_HEADROOM)) {
    problems.push(`${GATEWAY_CONTAINER}: memory limit ${memory} is under ${MEMORY_HEADROOM}× the measured peak of ${MEASURED_PEAK_MIB} MiB`);
  }

  for (const service of docs.filter((d) => d.kind === 'Service')) {
    if (!subset(service.spec?.selector, podLabels)) problems.push(`Service selector does not match the pod labels`);
    for (const p of service.spec?.ports ?? []) {
      if (portOf(p.targetPort) !== callerPort) problems.push(`Service port ${p.port} does not target the caller port ${callerPort}`);
    }
  }
  const policies = docs.filter((d) => d.kind === 'NetworkPolicy');
  for (const policy of policies) {
    const selects = policy.spec?.podSelector?.matchLabels;
    const forClients = !opts.sidecar && selects?.[CLIENT_LABEL] === 'true';
    if (!forClients && !subset(selects, podLabels)) problems.push(`NetworkPolicy ${policy.metadata?.name} selects no pod of this Deployment`);
  }
  const egress = policies.filter((p) => subset(p.spec?.podSelector?.matchLabels, podLabels) && p.spec?.policyTypes?.includes('Egress'));
  if (egress.length === 0) problems.push('no egress NetworkPolicy for the gateway pods: anything in them can reach anywhere');
  for (const policy of egress) problems.push(...egressProblems(policy));

  if (opts.sidecar) problems.push(...sidecarProblems(pod, config, callerPort, opsPort));
  else problems.push(...sharedProblems(docs, deployment, pod, gateway, config, callerPort));
  return problems;
}

const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16'];

/** An egress policy lets out DNS and public addresses only: every rule names where, and private ranges are excluded. */
function egressProblems(policy: K8sObject): string[] {
  const problems: string[] = [];
  const name = policy.metadata?.name;
  const rules = policy.spec?.egress ?? [];
  if (!rules.some((r) => (r.ports ?? []).some((p) => p.port === 53))) problems.push(`NetworkPolicy ${name}: no DNS (port 53) rule: names will not resolve`);
  for (const rule of rules) {
    if (!rule.to || rule.to.length === 0) problems.push(`NetworkPolicy ${name}: an egress rule without "to" allows every destination`);
    for (const peer of rule.to ?? []) {
      if (peer.ipBlock?.cidr === '0.0.0.0/0') {
        const missing = PRIVATE_RANGES.filter((r) => !(peer.ipBlock?.except ?? []).includes(r));
        if (missing.length > 0) problems.push(`NetworkPolicy ${name}: 0.0.0.0/0 must exclude ${missing.join(', ')} (cluster, private and metadata addresses)`);
      }
    }
  }
  return problems;
}

/** A shared Deployment survives drains (PDB) and stops taking callers before it drains (preStop, grace period). */
function sharedProblems(docs: readonly K8sObject[], deployment: K8sObject, pod: PodSpec, gateway: Container, config: GatewayConfig, callerPort: number): string[] {
  const problems: string[] = [];
  const podLabels = deployment.spec?.template?.metadata?.labels;
  const pdb = docs.find((d) => d.kind === 'PodDisruptionBudget');
  const replicas = deployment.spec?.replicas ?? 1;
  if (!pdb) problems.push('no PodDisruptionBudget: a node drain may stop every replica at once');
  else {
    if (!subset(pdb.spec?.selector?.matchLabels as Record<string, string> | undefined, podLabels)) problems.push('PodDisruptionBudget selects no pod of this Deployment');
    const min = pdb.spec?.minAvailable;
    if (typeof min === 'number' && min >= replicas) problems.push(`PodDisruptionBudget minAvailable ${min} with ${replicas} replicas blocks every drain`);
    if (min === undefined && pdb.spec?.maxUnavailable === undefined) problems.push('PodDisruptionBudget sets neither minAvailable nor maxUnavailable');
  }
  const preStop = gateway.lifecycle?.preStop;
  const preStopSeconds = preStop?.sleep?.seconds ?? (preStop?.exec ? 5 : 0);
  if (!preStop) problems.push(`${GATEWAY_CONTAINER}: no preStop: callers are still routed to a pod that stopped accepting`);
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  const needed = preStopSeconds + config.server.drainMs / 1000 + 5;
  if (grace < needed) problems.push(`terminationGracePeriodSeconds ${grace} is under preStop + server.drainMs + 5 s (${needed})`);
  const clients = docs.filter((d) => d.kind === 'NetworkPolicy' && d.spec?.podSelector?.matchLabels?.[CLIENT_LABEL] === 'true' && d.spec.policyTypes?.includes('Egress'));
  if (clients.length === 0) problems.push(`no egress NetworkPolicy for the callers (${CLIENT_LABEL}=true): they could bypass the gateway`);
  for (const policy of clients) {
    for (const rule of policy.spec?.egress ?? []) {
      const toGateway = (rule.to ?? []).length > 0 && (rule.to ?? []).every((peer) => subset(peer.podSelector?.matchLabels, podLabels));
      const dnsOnly = (rule.ports ?? []).length > 0 && (rule.ports ?? []).every((p) => p.port === 53);
      if (toGateway && !(rule.ports ?? []).every((p) => p.port === callerPort)) problems.push(`NetworkPolicy ${policy.metadata?.name}: callers may reach the gateway on its caller port ${callerPort} only`);
      if (!toGateway && !dnsOnly) problems.push(`NetworkPolicy ${policy.metadata?.name}: callers may reach something besides the gateway and DNS`);
    }
  }
  return problems;
}

/**
 * A native sidecar (an init container with restartPolicy Always and a startup probe, so the
 * agent starts after it and it stops after the agent); the agent container reaches each remote
 * through it, with the trailing slash SDKs need.
 */
function sidecarProblems(pod: PodSpec, config: GatewayConfig, callerPort: number, opsPort: number): string[] {
  const problems: string[] = [];
  const sidecar = (pod.initContainers ?? []).find((c) => c.name === GATEWAY_CONTAINER);
  if (!sidecar) problems.push(`${GATEWAY_CONTAINER} must be a native sidecar: an initContainer with restartPolicy: Always`);
  else {
    if (sidecar.restartPolicy !== 'Always') problems.push(`${GATEWAY_CONTAINER}: restartPolicy must be Always (a native sidecar)`);
    const startup = sidecar.startupProbe?.httpGet;
    const portOf = (port: string | number | undefined) => (typeof port === 'number' ? port : sidecar.ports?.find((p) => p.name === port)?.containerPort);
    if (!startup || !['/readyz', '/healthz'].includes(startup.path) || portOf(startup.port) !== opsPort) {
      problems.push(`${GATEWAY_CONTAINER}: a startupProbe on the ops port makes the agent wait until the gateway listens`);
    }
  }
  if ((pod.containers ?? []).some((c) => c.name === GATEWAY_CONTAINER)) problems.push(`${GATEWAY_CONTAINER} must not also be a regular container`);
  const agents = (pod.containers ?? []).filter((c) => c.name !== GATEWAY_CONTAINER);
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
