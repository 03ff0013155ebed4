/**
 * Parts for push notification tests: settings with fresh keys, a push
 * listener started on 127.0.0.1:0 with metrics and captured logs, a local
 * webhook receiver that records what it is delivered, and A2ACalls.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { OPERATIONS, type OperationName, type ProtocolGeneration } from '../../src/a2a/operations.js';
import type { A2ACall } from '../../src/core/call.js';
import type { Redactor } from '../../src/envelope/redact.js';
import type { PushServerFile } from '../../src/config/push.js';
import { resolvePushConfig, type PushSettings } from '../../src/push/config.js';
import type { DeliveryOptions } from '../../src/push/delivery.js';
import { startPushListener, type PushListener } from '../../src/push/listener.js';
import { PushMetrics } from '../../src/push/metrics.js';
import { rewritePushRequest } from '../../src/push/outbound.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { closeServer, listenOnLoopback, readBody, recordRequest, trackConnections, type RecordedRequest } from './servers.js';

export const newKey = (): string => randomBytes(32).toString('base64');

/** A port free on 127.0.0.1 right now (for a `server.push.publicBaseUrl` that must name the port before the gateway binds it). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** `server.push` YAML lines (indented under `server:`) for a listener on a free port, keys from env PUSH_KEYS. */
export async function pushYaml(extra = ''): Promise<string> {
  const port = await freePort();
  return `  push:\n    port: ${port}\n    publicBaseUrl: http://127.0.0.1:${port}/push\n    keys: { env: PUSH_KEYS }\n${extra}`;
}

export interface SettingsOptions extends Partial<Omit<PushServerFile, 'keys' | 'port' | 'publicBaseUrl'>> {
  readonly keys?: readonly string[];
  readonly publicBaseUrl?: string;
}

/** Settings as resolvePushConfig makes them from YAML, keys from a fake environment. */
export function pushSettings(opts: SettingsOptions = {}): PushSettings {
  const { keys = [newKey()], publicBaseUrl = 'http://127.0.0.1:1/push', ...rest } = opts;
  return resolvePushConfig(
    { port: 0, publicBaseUrl, keys: { env: 'PUSH_KEYS' }, ...rest },
    { env: { PUSH_KEYS: keys.join(',') } },
  );
}

/** The same settings with the webhook base pointing at a started listener (its port is known only then). */
export function withBase(settings: PushSettings, listenerUrl: string): PushSettings {
  return { ...settings, webhookBase: `${listenerUrl}${settings.basePath}` };
}

export interface StartedPush {
  readonly listener: PushListener;
  /** Settings whose webhookBase is the started listener's. */
  readonly settings: PushSettings;
  readonly registry: Registry;
  readonly logs: Record<string, unknown>[];
  /** Value of a labelled counter sample, 0 when absent. */
  count(metric: string, labels: Readonly<Record<string, string>>): Promise<number>;
  close(): Promise<void>;
}

export interface StartOptions {
  readonly remotes?: Readonly<Record<string, { redactor?: Redactor }>>;
  readonly now?: () => number;
  readonly delivery?: DeliveryOptions;
}

export async function startPush(settings: PushSettings, opts: StartOptions = {}): Promise<StartedPush> {
  const registry = new Registry();
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const remotes = opts.remotes ?? { weather: {} };
  const listener = await startPushListener({
    settings,
    remote: (name) => (Object.hasOwn(remotes, name) ? remotes[name] : undefined),
    logger: createLogger('info', sink),
    metrics: (queued) => new PushMetrics(registry, queued),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.delivery ? { delivery: opts.delivery } : {}),
  });
  return {
    listener,
    settings: withBase(settings, listener.url),
    registry,
    logs,
    async count(metric, labels) {
      const m = registry.getSingleMetric(metric);
      if (!m) return 0;
      const data = await m.get();
      const sample = data.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
      return sample?.value ?? 0;
    },
    close: () => listener.close(),
  };
}

export interface Receiver {
  readonly url: string;
  readonly received: RecordedRequest[];
  /** Resolves once `n` requests have arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

/** A local agent's webhook: records every request; `answer` decides the status (default 200). */
export async function startReceiver(answer: (req: RecordedRequest, n: number) => number | Promise<number> = () => 200): Promise<Receiver> {
  const received: RecordedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const recorded = recordRequest(req, await readBody(req));
      received.push(recorded);
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve();
      const status = await answer(recorded, received.length);
      res.writeHead(status).end();
    })();
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/hooks/a2a`,
    received,
    waitFor(n, timeoutMs = 10_000) {
      if (received.length >= n) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${n} requests`)), timeoutMs);
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(received)) });
      });
    },
    close: () => closeServer(server, tracker),
  };
}

export function callOf(name: OperationName, generation: ProtocolGeneration, params: Record<string, unknown>, remote = 'weather'): A2ACall {
  const paramsJson = JSON.stringify(params);
  return {
    remote,
    operation: OPERATIONS[name],
    generation,
    paramsJson,
    params,
    service: { a2aVersion: generation, forwarded: {} },
    caller: { binding: 'jsonrpc', jsonRpcId: 1, requestId: 'r1' },
    rawJsonRpcBody: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: OPERATIONS[name].jsonrpc[generation], params })),
  };
}

export interface MintedConfig {
  /** The gateway webhook URL the remote was given. */
  readonly url: string;
  /** The credential the gateway minted for it. */
  readonly credential: string;
}

/** A config as a remote holds it after the outbound rewrite (1.0 CreateTaskPushNotificationConfig by default). */
export function mintConfig(settings: PushSettings, receiverUrl: string, opts: { taskId?: string; generation?: ProtocolGeneration; remote?: string; remoteGeneration?: ProtocolGeneration; nowMs?: number; auth?: boolean } = {}): MintedConfig {
  const generation = opts.generation ?? '1.0';
  const config = { url: receiverUrl, token: 'caller-token-123', ...(opts.auth === false ? {} : { authentication: generation === '1.0' ? { scheme: 'Bearer', credentials: 'local-agent-secret' } : { schemes: ['Bearer'], credentials: 'local-agent-secret' } }) };
  const taskId = opts.taskId ?? 'task-1';
  const call = generation === '1.0'
    ? callOf('CreateTaskPushNotificationConfig', '1.0', { taskId, ...config }, opts.remote)
    : callOf('CreateTaskPushNotificationConfig', '0.3', { taskId, pushNotificationConfig: config }, opts.remote);
  const r = rewritePushRequest(call, { push: settings, nowMs: opts.nowMs ?? Date.now(), ...(opts.remoteGeneration ? { remoteGeneration: opts.remoteGeneration } : {}) });
  if (r.kind !== 'rewritten') throw new Error(`not rewritten: ${JSON.stringify(r)}`);
  const c = (generation === '1.0' ? r.call.params : r.call.params.pushNotificationConfig) as { url: string; token: string };
  return { url: c.url, credential: c.token };
}

/** A 1.0 status update push about `taskId` with `text` as the agent's message. */
export function statusPush(text: string, taskId = 'task-1', state = 'TASK_STATE_WORKING'): Record<string, unknown> {
  return {
    statusUpdate: {
      taskId,
      contextId: 'ctx-1',
      status: { state, message: { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_AGENT', parts: [{ text }] } },
    },
  };
}
