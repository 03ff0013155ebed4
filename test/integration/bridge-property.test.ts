/**
 * The version bridge end to end, property-based: a real gateway, a real HTTP
 * remote that speaks 1.0 and answers each call with an arbitrary valid 1.0
 * result (or stream of events) chosen by the test, and a 0.3 caller sending
 * arbitrary valid 0.3 params. Whatever the values, the caller gets one
 * well-formed JSON-RPC answer with its own id: a 0.3 result, or a typed
 * gateway error; never more than maxResponseBytes (each event never more than
 * maxEventBytes); the gateway never fails (no GATEWAY_ERROR). And the reverse
 * for 1.0 callers of a 0.3 remote.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import fc from 'fast-check';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';
import { event03, event10, message03, sendParams03, task03, task10 } from '../support/bridge-arbitraries.js';

const MAX_BYTES = 4096;
let gw: RunningGateway;
let close: () => Promise<void>;
/** What the remote answers next: a result, or a list of events for a stream. */
let next: { result?: unknown; events?: unknown[] } = {};
let lastBody: { method?: string; params?: unknown } = {};

t.before(async () => {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.parse((await readBody(req)).toString('utf8')) as { id: unknown; method: string; params?: unknown };
    lastBody = body;
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
  const remote = (name: string, versions: string) =>
    `  ${name}:\n    url: http://127.0.0.1:${port}/\n    versions: ${versions}\n    limits: { maxResponseBytes: ${MAX_BYTES}, maxEventBytes: ${MAX_BYTES} }\n`;
  gw = await startGateway(`server:\n  logLevel: warn\ndefaults:\n  allowPrivateNetwork: true\n  retries: { attempts: 1 }\nremotes:\n${remote('new', '["1.0"]')}${remote('old', '["0.3"]')}`);
});
t.teardown(async () => {
  await gw?.close();
  await close?.();
});

interface Envelope {
  jsonrpc?: string;
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; data?: { reason?: string; domain?: string }[] };
}

function check(envelope: Envelope, id: number, text: string): void {
  if (envelope.jsonrpc !== '2.0' || envelope.id !== id) throw new Error(`not the caller's envelope: ${text.slice(0, 200)}`);
  if ((envelope.result === undefined) === (envelope.error === undefined)) throw new Error('result xor error');
  if (Buffer.byteLength(text) > MAX_BYTES + 256) throw new Error(`${Buffer.byteLength(text)} bytes`);
  const reason = envelope.error?.data?.find((d) => d.domain === 'a2a-egress')?.reason;
  if (reason === 'GATEWAY_ERROR') throw new Error('the gateway failed');
  if (envelope.error && reason === undefined) throw new Error(`an untyped error: ${text.slice(0, 200)}`);
}

async function call(remote: string, id: number, method: string, params: unknown, headers: Record<string, string> = {}): Promise<string[]> {
  const res = await fetch(`${gw.url}/remotes/${remote}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return [text];
  return text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
}

/**
 * Without a push config: the gateway's push hook takes those before the bridge (rewritten to its webhook, or refused
 * without server.push, as here), and test/integration/push-gateway.test.ts covers them across the bridge.
 */
const withoutPushConfig = (params: Record<string, unknown>): Record<string, unknown> => {
  const configuration = params.configuration;
  if (typeof configuration !== 'object' || configuration === null || Array.isArray(configuration)) return params;
  const { pushNotificationConfig: _push, ...rest } = configuration as Record<string, unknown>;
  return { ...params, configuration: rest };
};

t.test('0.3 caller, 1.0 remote: arbitrary params, results and events', async (t) => {
  let id = 0;
  await fc.assert(
    fc.asyncProperty(sendParams03.map(withoutPushConfig), fc.oneof(event10, task10.map((task) => ({ task }))), fc.array(event10, { maxLength: 4 }), fc.boolean(), async (params, result, events, stream) => {
      next = stream ? { events } : { result };
      id++;
      const answers = await call('new', id, stream ? 'message/stream' : 'message/send', params);
      if (lastBody.method !== (stream ? 'SendStreamingMessage' : 'SendMessage')) throw new Error(`upstream got ${lastBody.method}`);
      for (const text of answers) {
        const envelope = JSON.parse(text) as Envelope;
        check(envelope, id, text);
        if (envelope.result && typeof envelope.result.kind !== 'string') throw new Error(`not a 0.3 object: ${text.slice(0, 200)}`);
      }
    }),
    { numRuns: 60 },
  );
  t.pass();
});

t.test('1.0 caller, 0.3 remote: arbitrary results and events', async (t) => {
  let id = 1000;
  const params10 = { message: { messageId: 'u1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } };
  await fc.assert(
    fc.asyncProperty(fc.oneof(message03, task03), fc.array(event03, { maxLength: 4 }), fc.boolean(), async (result, events, stream) => {
      next = stream ? { events } : { result };
      id++;
      const answers = await call('old', id, stream ? 'SendStreamingMessage' : 'SendMessage', params10, { 'a2a-version': '1.0' });
      if (lastBody.method !== (stream ? 'message/stream' : 'message/send')) throw new Error(`upstream got ${lastBody.method}`);
      for (const text of answers) {
        const envelope = JSON.parse(text) as Envelope;
        check(envelope, id, text);
        if (envelope.result && Object.hasOwn(envelope.result, 'kind')) throw new Error(`a 0.3 object reached a 1.0 caller: ${text.slice(0, 200)}`);
      }
    }),
    { numRuns: 60 },
  );
  t.pass();
});
