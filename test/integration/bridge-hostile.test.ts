/**
 * Version bridge against a badly behaved 1.0 remote (a real HTTP server that
 * answers whatever its sub-path says): a 0.3 caller's translated reply obeys
 * every rule a same-generation reply does. The remote's credential it echoes
 * is redacted before translation; results the bridge cannot translate are
 * INVALID_RESULT; a reply that grows past maxResponseBytes in translation is
 * RESPONSE_TOO_LARGE, one just under passes; a stream event that grows past
 * maxEventBytes ends the stream with INVALID_EVENT; an event of no known kind too.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';

const TOKEN = 'bridge-secret-token-0123456789';
const agentMessage = (text: string) => ({ message: { messageId: 'm1', role: 'ROLE_AGENT', parts: [{ text }] } });

/** `${url}/<case>`: what the remote answers (a 1.0 JSON-RPC result or stream). */
function answer(path: string, id: unknown, auth: string, res: ServerResponse): void {
  const result = (value: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: value }));
  };
  const credential = auth.replace(/^Bearer /, '');
  switch (path) {
    case '/echo-secret':
      return result(agentMessage(`your token is ${credential}`));
    case '/not-a-result':
      return result('a string is no SendMessage result');
    case '/grows': {
      // 1.0 data parts holding a bare number: 0.3 wraps each ({"kind":"data","data":{"value":0},...}).
      const parts = Array.from({ length: 200 }, () => ({ data: 0 }));
      return result({ message: { messageId: 'm1', role: 'ROLE_AGENT', parts } });
    }
    case '/stream-grows':
    case '/stream-unknown': {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const first = { task: { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } } };
      const second = path === '/stream-grows'
        ? { message: { messageId: 'm2', role: 'ROLE_AGENT', parts: Array.from({ length: 200 }, () => ({ data: 0 })) } }
        : { somethingElse: { id: 'x' } };
      res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: first })}\n\n`);
      res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: second })}\n\n`);
      return;
    }
    default:
      res.writeHead(404).end();
  }
}

let gw: RunningGateway;
let upstreamUrl = '';
let close: () => Promise<void>;
const seen: { method: string; version: string | undefined }[] = [];

t.before(async () => {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.parse((await readBody(req)).toString('utf8')) as { id: unknown; method: string };
    seen.push({ method: body.method, version: req.headers['a2a-version'] as string | undefined });
    answer(new URL(req.url ?? '/', 'http://x').pathname, body.id, String(req.headers.authorization ?? ''), res);
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  upstreamUrl = `http://127.0.0.1:${port}`;
  close = () => closeServer(server, tracker);
  // 200 wrapped parts: 1.0 `{"data":0}` is 10 bytes, its 0.3 form about 70; the bounds sit between the two.
  gw = await startGateway(
    `server:\n  logLevel: warn\ndefaults:\n  allowPrivateNetwork: true\n  retries: { attempts: 1 }\nremotes:\n` +
      `  h:\n    url: ${upstreamUrl}/\n    versions: ["1.0"]\n    auth: { type: bearer, tokenEnv: BRIDGE_TOKEN }\n    limits: { maxResponseBytes: 8192, maxEventBytes: 8192 }\n`,
    { env: { BRIDGE_TOKEN: TOKEN } },
  );
});
t.teardown(async () => {
  await gw?.close();
  await close?.();
});

const send03 = async (path: string, method = 'message/send') => {
  const res = await fetch(`${gw.url}/remotes/h/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'c1', method, params: { message: { kind: 'message', messageId: 'u1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } } }),
  });
  return { type: res.headers.get('content-type') ?? '', text: await res.text() };
};
const reasonOf = (error: { data?: { reason?: string; domain?: string }[] }) => error.data?.find((d) => d.domain === 'a2a-egress')?.reason;

t.test('a credential the remote echoes is redacted before translation; the 0.3 caller gets a 0.3 message', async (t) => {
  const { text } = await send03('echo-secret');
  t.notOk(text.includes(TOKEN), 'the credential never reaches the caller');
  const body = JSON.parse(text) as { id: string; result?: { kind: string; parts: { kind: string; text: string }[] }; error?: { data?: { reason?: string; domain?: string }[] } };
  t.equal(body.id, 'c1');
  if (body.result) {
    t.equal(body.result.kind, 'message');
    t.equal(body.result.parts[0]?.kind, 'text');
  } else t.equal(reasonOf(body.error!), 'CREDENTIAL_ECHOED');
  t.match(seen.at(-1), { method: 'SendMessage', version: '1.0' });
});

t.test('a result the bridge cannot translate: INVALID_RESULT (-32006)', async (t) => {
  const body = JSON.parse((await send03('not-a-result')).text) as { error: { code: number; data?: { reason?: string; domain?: string }[] } };
  t.equal(body.error.code, -32006);
  t.equal(reasonOf(body.error), 'INVALID_RESULT');
});

t.test('a reply that outgrows maxResponseBytes in translation: RESPONSE_TOO_LARGE', async (t) => {
  const body = JSON.parse((await send03('grows')).text) as { error: { code: number; data?: { reason?: string; domain?: string }[] } };
  t.equal(body.error.code, -32006);
  t.equal(reasonOf(body.error), 'RESPONSE_TOO_LARGE');
});

t.test('stream: an event that outgrows maxEventBytes in translation, or is of no known kind, ends the stream with INVALID_EVENT', async (t) => {
  for (const [path, cause] of [['stream-grows', 'EVENT_TOO_LARGE'], ['stream-unknown', 'INVALID_RESULT']] as const) {
    const { type, text } = await send03(path, 'message/stream');
    t.match(type, /^text\/event-stream/);
    const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => JSON.parse(e.slice(6)) as { result?: { kind: string }; error?: { code: number; data?: { reason?: string; domain?: string; metadata?: Record<string, string> }[] } });
    t.equal(events.length, 2, path);
    t.equal(events[0]!.result?.kind, 'task', 'the first event translated to 0.3');
    t.equal(reasonOf(events[1]!.error!), 'INVALID_EVENT');
    t.equal(events[1]!.error!.data?.find((d) => d.domain === 'a2a-egress')?.metadata?.cause, cause);
  }
});
