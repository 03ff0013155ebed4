/**
 * A whole Gateway (createGateway, not just its Fastify app) for the
 * observability tests: they need the ops server, `close()` with its drain,
 * the metrics registry, and every log line at debug level.
 */
import { Writable } from 'node:stream';
import { request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { createGateway, type Gateway, type GatewayOptions } from '../../src/server.js';
import { createLogger } from '../../src/telemetry/logger.js';

export interface OpsGateway {
  readonly gateway: Gateway;
  /** The caller port. */
  readonly url: string;
  /** The ops port when server.opsPort is set, else the caller port. */
  readonly opsUrl: string;
  /** Each remote with `listen`: the URL of its own listener. */
  readonly remoteUrls: Record<string, string>;
  /** Every log line, parsed. */
  readonly logs: Record<string, unknown>[];
  /** Every log line exactly as written, to search for leaked text. */
  readonly rawLog: () => string;
  close(): Promise<void>;
}

export async function startOpsGateway(yaml: string, options: Omit<GatewayOptions, 'logger'> = {}): Promise<OpsGateway> {
  const parsed = parseConfig(yaml, 'ops-test.yaml');
  // Always loopback and OS-chosen ports: a test must never depend on 8080 being free.
  const server = { ...parsed.server, host: '127.0.0.1', port: 0, ...(parsed.server.opsPort !== undefined ? { opsPort: 0 } : {}) };
  const config = { ...parsed, server };
  const logs: Record<string, unknown>[] = [];
  let raw = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const text = chunk.toString('utf8');
      raw += text;
      for (const line of text.split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const gateway = await createGateway(config, { processMetrics: false, ...options, logger: createLogger('debug', sink) });
  const { url, opsUrl, remoteUrls } = await gateway.listen();
  let closed: Promise<void> | undefined;
  return {
    gateway,
    url,
    opsUrl: opsUrl ?? url,
    remoteUrls,
    logs,
    rawLog: () => raw,
    close: () => (closed ??= gateway.close()),
  };
}

export interface TextReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

export async function getText(url: string): Promise<TextReply> {
  const res = await request(url);
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The `call` log lines (one per answered call). */
export function callLines(logs: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return logs.filter((l) => l.msg === 'call');
}

/** One sample's value from Prometheus text, or undefined when the series is absent. */
export function sampleValue(metricsText: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf('{');
    const close = line.lastIndexOf('}');
    const labelText = open >= 0 && close > open ? line.slice(open + 1, close) : '';
    const have = new Map([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(line.slice((close > 0 ? close : name.length) + 1).trim());
  }
  return undefined;
}
