/**
 * Version bridge on the call runner against a badly behaved 0.3 remote (a
 * real HTTP server answering 0.3 JSON-RPC results by sub-path), called by an
 * HTTP+JSON (1.0) caller: the translated reply obeys every rule a
 * same-generation reply does, and every failure is a google.rpc.Status body.
 * A result that grows past maxResponseBytes in translation is
 * RESPONSE_TOO_LARGE and one exactly at the bound passes; a stream event that
 * grows past maxEventBytes ends the stream with INVALID_EVENT (cause
 * EVENT_TOO_LARGE), one at the bound passes; a request that grows past
 * maxRequestBytes in translation is refused before any upstream call; a
 * result the bridge cannot translate is INVALID_RESULT; the remote's
 * credential it echoes is redacted before translation.
 *
 * Growth 0.3 → 1.0: a history message without `kind` (0.3 writers omit it in
 * `history`) gains 5 bytes (`"agent"` → `"ROLE_AGENT"`); the bounds below are
 * the exact translated sizes, computed with the bridge's own translators.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import t from 'tap';
import { bridgeEvent, bridgeResult } from '../../src/a2a/bridge/index.js';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';

const TOKEN = 'bridge-rest-secret-0123456789';
const HISTORY = 300;

/** A 0.3 task with `n` agent messages in its history (no `kind` on them: 0.3 allows it there). */
const task03 = (n: number) => ({
  kind: 'task',
  id: 't1',
  contextId: 'c1',
  status: { state: 'working' },
  history: Array.from({ length: n }, (_, i) => ({ messageId: `m${i % 10}`, role: 'agent', parts: [] })),
});
const translatedBytes = (value: unknown, event: boolean): number => {
  const out = event ? bridgeEvent('0.3', '1.0', value) : bridgeResult(OPERATIONS.SendMessage, '0.3', '1.0', value);
  if (!out.ok) throw new Error(out.problem);
  return Buffer.byteLength(JSON.stringify(out.value));
};
const MAX_RESPONSE = translatedBytes(task03(HISTORY), false);
const MAX_EVENT = translatedBytes(task03(HISTORY), true);

function answer(path: string, id: unknown, auth: string, res: ServerResponse): void {
  const result = (value: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: value }));
  };
  const events = (...values: unknown[]) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const value of values) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: value })}\n\n`);
    res.end();
  };
  switch (path) {
    case '/at-bound':
      return result(task03(HISTORY));
    case '/grows':
      return result(task03(HISTORY + 1));
    case '/extra-member':
      return result({ ...task03(1), secretish: 'value-never-logged' });
    case '/not-a-result':
      return result('a string is no message/send result');
    case '/echo-secret':
      return result({ kind: 'message', messageId: 'm1', role: 'agent', parts: [{ kind: 'text', text: `your token is ${auth.replace(/^Bearer /, '')}` }] });
    case '/stream-at-bound':
      return events({ kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'working' }, final: false }, task03(HISTORY));
    case '/stream-grows':
      return events({ kind: 'status-update', taskId: 't1', contextId: 'c1', status: { state: 'working' }, final: false }, task03(HISTORY + 1));
    default:
      res.writeHead(404).end();
  }
}

let gw: RunningGateway;
let close: () => Promise<void>;
const seen: { path: string; method: string; version: string | undefined }[] = [];

t.before(async () => {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.parse((await readBody(req)).toString('utf8')) as { id: unknown; method: string };
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ path, method: body.method, version: req.headers['a2a-version'] as string | undefined });
    answer(path, body.id, String(req.headers.authorization ?? ''), res);
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  close = () => closeServer(server, tracker);
  const remote = (name: string, extra = '') =>
    `  ${name}:\n    url: http://127.0.0.1:${port}/${name}\n    versions: ["0.3"]\n    binding: jsonrpc\n` +
    `    limits: { maxResponseBytes: ${MAX_RESPONSE}, maxEventBytes: ${MAX_EVENT}, maxRequestBytes: 4096 }\n${extra}`;
  gw = await startGateway(
    `server:\n  logLevel: info\ndefaults:\n  allowPrivateNetwork: true\n  retries: { attempts: 1 }\nremotes:\n` +
      ['at-bound', 'grows', 'not-a-result', 'stream-at-bound', 'stream-grows', 'extra-member'].map((n) => remote(n)).join('') +
      remote('echo-secret', '    auth: { type: bearer, tokenEnv: BRIDGE_TOKEN }\n'),
    { env: { BRIDGE_TOKEN: TOKEN } },
  );
});
t.teardown(async () => {
  await gw?.close();
  await close?.();
});

interface Status {
  error: { code: number; status: string; message: string; details?: { reason?: string; domain?: string; metadata?: Record<string, string> }[] };
}
const gatewayReason = (body: Status) => body.error.details?.find((d) => d.domain === 'a2a-egress')?.reason;
const message10 = (parts: unknown[] = [{ text: 'hi' }]) => ({ message: { messageId: 'u1', role: 'ROLE_USER', parts } });
const post = async (remote: string, op: 'send' | 'stream', body: object = message10()) => {
  const res = await fetch(`${gw.url}/remotes/${remote}/message:${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
};

t.test('a result exactly at maxResponseBytes once translated passes; one message more is RESPONSE_TOO_LARGE in the Status shape', async (t) => {
  const fits = await post('at-bound', 'send');
  t.equal(fits.status, 200, 'at the bound');
  const task = (JSON.parse(fits.text) as { task: { history: { role: string }[] } }).task;
  t.equal(task.history.length, HISTORY);
  t.equal(task.history[0]?.role, 'ROLE_AGENT');
  t.equal(Buffer.byteLength(fits.text), MAX_RESPONSE, 'the bound is the translated size');

  const over = await post('grows', 'send');
  t.equal(over.status, 502);
  t.match(over.type, /^application\/json/);
  const body = JSON.parse(over.text) as Status;
  t.match(body.error, { code: 502, status: 'INTERNAL', message: /once translated to A2A 1\.0/ });
  t.equal(gatewayReason(body), 'RESPONSE_TOO_LARGE');
  t.match(seen.at(-1), { path: '/grows', method: 'message/send', version: '0.3' });
});

t.test('stream: an event exactly at maxEventBytes once translated passes; one message more ends the stream with INVALID_EVENT', async (t) => {
  for (const [remote, last] of [['stream-at-bound', 'ok'], ['stream-grows', 'EVENT_TOO_LARGE']] as const) {
    const { status, type, text } = await post(remote, 'stream');
    t.equal(status, 200);
    t.match(type, /^text\/event-stream/);
    const events = text.split('\n\n').filter((e) => e.includes('data: '));
    t.equal(events.length, 2, remote);
    t.ok(JSON.parse(events[0]!.slice(events[0]!.indexOf('data: ') + 6)).statusUpdate, 'the first event translated to 1.0');
    if (last === 'ok') {
      t.notOk(events[1]!.startsWith('event: error'));
      t.equal(JSON.parse(events[1]!.slice(6)).task.history.length, HISTORY);
    } else {
      t.ok(events[1]!.startsWith('event: error\n'), 'the final error event');
      const body = JSON.parse(events[1]!.slice(events[1]!.indexOf('data: ') + 6)) as Status;
      t.equal(gatewayReason(body), 'INVALID_EVENT');
      t.equal(body.error.details?.find((d) => d.domain === 'a2a-egress')?.metadata?.cause, last);
      t.equal(body.error.details?.find((d) => d.domain === 'a2a-egress')?.metadata?.event, '2');
    }
  }
  t.match(seen.at(-1), { path: '/stream-grows', method: 'message/stream', version: '0.3' });
});

t.test('a request that outgrows maxRequestBytes in translation is REQUEST_TOO_LARGE before any upstream call', async (t) => {
  // A 1.0 part {"text":""} (11 bytes) is {"kind":"text","text":""} in 0.3 (25 bytes).
  const parts = (n: number) => Array.from({ length: n }, () => ({ text: '' }));
  const before = seen.length;
  const over = await post('at-bound', 'send', message10(parts(200)));
  t.ok(Buffer.byteLength(JSON.stringify(message10(parts(200)))) < 4096, 'the caller sent less than maxRequestBytes');
  t.equal(over.status, 413);
  const body = JSON.parse(over.text) as Status;
  t.equal(gatewayReason(body), 'REQUEST_TOO_LARGE');
  t.match(body.error.message, /once translated to A2A 0\.3/);
  t.equal(seen.length, before, 'nothing sent upstream');
  const fits = await post('at-bound', 'send', message10(parts(100)));
  t.equal(fits.status, 200, 'a translated request under the bound goes');
  t.equal(seen.length, before + 1);
});

t.test('a result the bridge cannot translate: INVALID_RESULT in the Status shape', async (t) => {
  const res = await post('not-a-result', 'send');
  t.equal(res.status, 502);
  t.equal(gatewayReason(JSON.parse(res.text) as Status), 'INVALID_RESULT');
});

t.test('a credential the remote echoes is redacted before translation', async (t) => {
  const res = await post('echo-secret', 'send');
  t.notOk(res.text.includes(TOKEN), 'the credential never reaches the caller');
  t.equal(res.status, 200);
  const message = (JSON.parse(res.text) as { message: { role: string; parts: { text: string }[] } }).message;
  t.equal(message.role, 'ROLE_AGENT', 'translated to 1.0');
  t.notOk(Object.hasOwn(message.parts[0]!, 'kind'));
  t.match(message.parts[0]!.text, /^your token is \S+$/);
});

t.test('what has no counterpart is dropped, counted and logged by name, never by value', async (t) => {
  const res = await fetch(`${gw.url}/remotes/extra-member/tenant-x/tasks/t1`, { headers: { 'a2a-version': '1.0' } });
  t.equal(res.status, 200);
  const task = (await res.json()) as Record<string, unknown>;
  t.equal(task.id, 't1');
  t.notOk(Object.hasOwn(task, 'secretish'));
  t.match(seen.at(-1), { path: '/extra-member', method: 'tasks/get', version: '0.3' });
  const lines = gw.logs.filter((l) => (l.bridge as { direction?: string } | undefined) !== undefined && l.remote === 'extra-member');
  t.same(lines.map((l) => (l.bridge as { direction: string; dropped: string[] }).direction).sort(), ['request', 'response']);
  t.same(lines.find((l) => (l.bridge as { direction: string }).direction === 'request')?.bridge, { from: '1.0', to: '0.3', direction: 'request', dropped: ['tenant'] });
  t.notOk(JSON.stringify(gw.logs).includes('value-never-logged'), 'never a value');
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  t.match(metrics, /a2a_egress_bridge_dropped_total\{remote="extra-member",direction="request"\} 1\b/);
  t.match(metrics, /a2a_egress_bridge_dropped_total\{remote="extra-member",direction="response"\} 1\b/);
});
