/**
 * The version bridge on the call runner, property-based: a real gateway, a
 * real HTTP remote that speaks only 0.3 JSON-RPC and answers each call with
 * an arbitrary valid 0.3 result (or stream of events) chosen by the test, and
 * an HTTP+JSON (1.0) caller sending arbitrary 1.0 messages. Whatever the
 * values: the remote only ever sees 0.3 method names and `A2A-Version: 0.3`;
 * the caller gets a 1.0 result (no 0.3 `kind` member) or a typed
 * google.rpc.Status (never GATEWAY_ERROR); a reply is never more than
 * maxResponseBytes, each stream event never more than maxEventBytes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import fc from 'fast-check';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';
import { event03, message03, message10, task03 } from '../support/bridge-arbitraries.js';

const MAX_BYTES = 4096;
let gw: RunningGateway;
let close: () => Promise<void>;
/** What the remote answers next: a result, or a list of events for a stream. */
let next: { result?: unknown; events?: unknown[] } = {};
const upstream: { method: string; version: string | undefined }[] = [];

t.before(async () => {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    // binding auto: the gateway looks for the remote's card first; this remote has none (JSON-RPC at url then).
    if (req.method !== 'POST') return void res.writeHead(404).end();
    const body = JSON.parse((await readBody(req)).toString('utf8')) as { id: unknown; method: string };
    upstream.push({ method: body.method, version: req.headers['a2a-version'] as string | undefined });
    if (next.events) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const result of next.events) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result })}\n\n`);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: next.result }));
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  close = () => closeServer(server, tracker);
  gw = await startGateway(
    `server:\n  logLevel: warn\ndefaults:\n  allowPrivateNetwork: true\n  retries: { attempts: 1 }\nremotes:\n` +
      `  old:\n    url: http://127.0.0.1:${port}/\n    versions: ["0.3"]\n    limits: { maxResponseBytes: ${MAX_BYTES}, maxEventBytes: ${MAX_BYTES} }\n`,
  );
});
t.teardown(async () => {
  await gw?.close();
  await close?.();
});

interface Status {
  error?: { code?: number; status?: string; details?: { reason?: string; domain?: string }[] };
}

/** One answer (a body, or one SSE event's data): a 1.0 result or a typed Status, within the bound. */
function check(text: string, isError: boolean): void {
  if (Buffer.byteLength(text) > MAX_BYTES) throw new Error(`${Buffer.byteLength(text)} bytes`);
  const value = JSON.parse(text) as Record<string, unknown> & Status;
  if (isError) {
    const reason = value.error?.details?.find((d) => d.domain === 'a2a-egress')?.reason;
    if (typeof value.error?.code !== 'number' || typeof value.error.status !== 'string') throw new Error(`not a Status: ${text.slice(0, 200)}`);
    if (reason === undefined) throw new Error(`an untyped error: ${text.slice(0, 200)}`);
    if (reason === 'GATEWAY_ERROR') throw new Error('the gateway failed');
    return;
  }
  if (Object.hasOwn(value, 'kind') || Object.hasOwn(value, 'error')) throw new Error(`not a 1.0 result: ${text.slice(0, 200)}`);
}

t.test('HTTP+JSON caller, 0.3 remote: arbitrary messages, results and events', async (t) => {
  await fc.assert(
    fc.asyncProperty(message10, fc.oneof(message03, task03), fc.array(event03, { maxLength: 4 }), fc.boolean(), async (message, result, events, stream) => {
      next = stream ? { events } : { result };
      const sent = upstream.length;
      const res = await fetch(`${gw.url}/remotes/old/message:${stream ? 'stream' : 'send'}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ message }),
      });
      const text = await res.text();
      if (upstream.length > sent) {
        const last = upstream.at(-1)!;
        if (last.method !== (stream ? 'message/stream' : 'message/send') || last.version !== '0.3') throw new Error(`upstream got ${last.method} (${last.version})`);
      }
      if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return check(text, res.status !== 200);
      if (res.status !== 200) throw new Error(`a stream with status ${res.status}`);
      const items = text.split('\n\n').filter((e) => e.includes('data: '));
      items.forEach((item, i) => {
        const isError = item.startsWith('event: error\n');
        if (isError && i !== items.length - 1) throw new Error('an error event before the end');
        check(item.slice(item.indexOf('data: ') + 6), isError);
      });
    }),
    { numRuns: 80 },
  );
  t.pass('every answer was a bounded 1.0 result or a typed Status');
  t.ok(upstream.length >= 40, `most calls reached the remote (${upstream.length} of 80), not only refusals`);
});
