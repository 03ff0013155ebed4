/**
 * A real OTLP/HTTP trace receiver for tests: a node:http server on
 * 127.0.0.1 that accepts POST /v1/traces, decodes each protobuf body with the
 * official opentelemetry-proto definitions (the protobufjs code generated
 * from them that @opentelemetry/otlp-transformer 0.216 ships, installed as
 * `otlp-proto-root`) and keeps the spans in a flat, readable form.
 *
 * `hold()` makes it accept requests but not answer them until `release()`:
 * a collector that hangs, to see what the gateway queues meanwhile.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import { trackConnections } from './servers.js';

const require = createRequire(import.meta.url);

type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: number | { toNumber(): number }; doubleValue?: number };
interface KeyValue { key: string; value?: AnyValue }
interface ProtoSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: number | { toNumber(): number };
  endTimeUnixNano: number | { toNumber(): number };
  attributes?: KeyValue[];
  events?: { name: string }[];
  status?: { code?: number; message?: string };
}
interface ProtoRequest {
  resourceSpans: { resource?: { attributes?: KeyValue[] }; scopeSpans: { scope?: { name?: string }; spans: ProtoSpan[] }[] }[];
}
interface ProtoRoot {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode(bytes: Uint8Array): ProtoRequest } } } } } };
}

const root = require('otlp-proto-root/build/src/generated/root.js') as ProtoRoot;
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export type AttributeValue = string | number | boolean;

export interface ExportedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly traceState: string;
  readonly name: string;
  readonly kind: 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
  readonly startNs: number;
  readonly endNs: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly events: readonly string[];
  readonly status: { readonly code: 'unset' | 'ok' | 'error'; readonly message: string };
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly scope: string;
}

export interface ReceivedExport {
  readonly headers: IncomingHttpHeaders;
  /** The body as it arrived (maybe gzip). */
  readonly raw: Buffer;
  readonly spans: readonly ExportedSpan[];
}

export interface OtlpReceiver {
  /** The traces URL to configure as `telemetry.traces.endpoint`. */
  readonly url: string;
  readonly exports: readonly ReceivedExport[];
  spans(): ExportedSpan[];
  /** Resolves once at least `count` spans arrived; rejects after `timeoutMs`. */
  waitForSpans(count: number, timeoutMs?: number): Promise<ExportedSpan[]>;
  /** Resolves once at least `count` export requests arrived (held ones included). */
  waitForExports(count: number, timeoutMs?: number): Promise<void>;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

const KINDS: ExportedSpan['kind'][] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUS: ExportedSpan['status']['code'][] = ['unset', 'ok', 'error'];

const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString('hex');
const num = (n: number | { toNumber(): number } | undefined): number => (typeof n === 'object' ? n.toNumber() : (n ?? 0));

function attributesOf(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if (!value) continue;
    if (value.stringValue !== undefined && value.stringValue !== null) out[key] = value.stringValue;
    else if (value.boolValue !== undefined && value.boolValue !== null) out[key] = value.boolValue;
    else if (value.intValue !== undefined && value.intValue !== null) out[key] = num(value.intValue);
    else if (value.doubleValue !== undefined && value.doubleValue !== null) out[key] = value.doubleValue;
  }
  return out;
}

/** Decodes one ExportTraceServiceRequest body into flat spans. */
export function decodeExport(body: Uint8Array): ExportedSpan[] {
  const request = ExportTraceServiceRequest.decode(body);
  const spans: ExportedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          traceState: s.traceState ?? '',
          name: s.name,
          kind: KINDS[s.kind] ?? 'unspecified',
          startNs: num(s.startTimeUnixNano),
          endNs: num(s.endTimeUnixNano),
          attributes: attributesOf(s.attributes),
          events: (s.events ?? []).map((e) => e.name),
          status: { code: STATUS[s.status?.code ?? 0] ?? 'unset', message: s.status?.message ?? '' },
          resource,
          scope: ss.scope?.name ?? '',
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const exports: ReceivedExport[] = [];
  const held: ServerResponse[] = [];
  let holding = false;
  const answer = (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/x-protobuf' });
    res.end();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      exports.push({ headers: req.headers, raw, spans: decodeExport(body) });
      if (holding) held.push(res);
      else answer(res);
    });
  });
  const connections = trackConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const spans = () => exports.flatMap((e) => e.spans);
  const waitFor = async (done: () => boolean, what: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`OTLP receiver: timed out waiting for ${what} (have ${exports.length} exports, ${spans().length} spans)`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const release = () => {
    holding = false;
    for (const res of held.splice(0)) answer(res);
  };
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    exports,
    spans,
    async waitForSpans(count, timeoutMs = 5000) {
      await waitFor(() => spans().length >= count, `${count} spans`, timeoutMs);
      return spans();
    },
    waitForExports: (count, timeoutMs = 5000) => waitFor(() => exports.length >= count, `${count} exports`, timeoutMs),
    hold() {
      holding = true;
    },
    release,
    async close() {
      release();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        void connections.destroyAll();
      });
    },
  };
}
