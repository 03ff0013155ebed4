/**
 * The proof, A2A 1.0: a real @a2a-js/sdk client given only
 * `http://gw/remotes/sdk/` discovers the card there and makes every call
 * through the gateway, to a real @a2a-js/sdk server. Each method gets the
 * same result as the same client talking to an identical upstream directly
 * (volatile ids and timestamps masked). Two upstreams, so the one behind the
 * gateway can prove it saw nothing but the gateway.
 */
import { createServer } from 'node:http';
import { TaskState, type AgentCard } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import {
  cancelTask,
  clientFromBaseUrl,
  collect,
  eventKinds,
  getTask,
  isTask,
  resubscribe,
  sendText,
  streamText,
  taskIdOf,
} from '../support/sdk-client.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';
import { newKey, pushYaml } from '../support/push-kit.js';
import { listenOnLoopback, readBody } from '../support/servers.js';
import { VERSION } from '../../src/version.js';

const VOLATILE = new Set(['messageId', 'taskId', 'contextId', 'id', 'timestamp']);

/** JSON of a value with every generated id and time masked, so two runs compare equal. */
function stable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => (VOLATILE.has(key) && typeof v === 'string' && v !== '' ? '<volatile>' : v)) ?? 'null');
}

const withSecretSkill = (card: AgentCard): AgentCard => ({
  ...card,
  description: 'The extended card, for authenticated callers.',
  skills: [...card.skills, { id: 'secret', name: 'Secret', description: 'Only on the extended card.', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
});

let direct: SdkUpstream;
let behind: SdkUpstream;
let gw: RunningGateway;
let gwBase: string;
/** Clients per side: [direct, through the gateway]. */
let clients: [Client, Client];
let polling: [Client, Client];

t.before(async () => {
  direct = await startSdkUpstream({ extendedCard: withSecretSkill });
  behind = await startSdkUpstream({ extendedCard: withSecretSkill });
  // Push notifications on: push configs go through the gateway's webhook, and callers see their own.
  gw = await startGateway(`server:\n  logLevel: warn\n${await pushYaml()}remotes:\n  sdk:\n    url: ${behind.url}\n    allowPrivateNetwork: true\n`, { env: { PUSH_KEYS: newKey() } });
  gwBase = `${gw.url}/remotes/sdk/`;
  clients = [await clientFromBaseUrl(direct.url), await clientFromBaseUrl(gwBase)];
  polling = [await clientFromBaseUrl(direct.url, { polling: true }), await clientFromBaseUrl(gwBase, { polling: true })];
});
t.teardown(async () => {
  await gw?.close();
  await direct?.close();
  await behind?.close();
});

/** Runs `op` with the direct and the gateway client; returns both results. */
async function both<T>(op: (c: Client) => Promise<T>, which: [Client, Client] = clients): Promise<[T, T]> {
  return [await op(which[0]), await op(which[1])];
}

t.test('card discovery: the client got the gateway’s card, with no upstream URL in it', async (t) => {
  const text = await (await fetch(`${gwBase}.well-known/agent-card.json`)).text();
  t.notMatch(text, `127.0.0.1:${behind.port}`, 'no upstream host:port anywhere in the card');
  const card = await clients[1].getAgentCard();
  t.same(
    card.supportedInterfaces.map((i) => [i.protocolBinding, i.url]),
    [['JSONRPC', gwBase], ['HTTP+JSON', gwBase.replace(/\/$/, '')]],
    'the only interfaces the client can call are the gateway (JSON-RPC, and HTTP+JSON advertised)',
  );
  t.equal(clients[1].protocolVersion, '1.0');
});

t.test('SendMessage (echo) round trip', async (t) => {
  const [a, b] = await both((c) => sendText(c, 'hello through the gateway'));
  t.notOk(isTask(b));
  t.same(stable(b), stable(a));
});

t.test('SendMessage of a task (blocking): completed; "fail" ends FAILED; same both ways', async (t) => {
  const [a, b] = await both((c) => sendText(c, 'task quick'));
  t.ok(isTask(b) && b.status?.state === TaskState.TASK_STATE_COMPLETED);
  t.same(stable(b), stable(a));
  const [fa, fb] = await both((c) => sendText(c, 'fail please'));
  t.ok(isTask(fb) && fb.status?.state === TaskState.TASK_STATE_FAILED);
  t.same(stable(fb), stable(fa));
});

t.test('SendStreamingMessage, then GetTask and ListTasks, same both ways', async (t) => {
  const [a, b] = await both((c) => streamText(c, 'task build it'));
  t.same(eventKinds(b), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate', 'statusUpdate']);
  t.same(stable(b), stable(a));
  const ids = [taskIdOf(a[0]!)!, taskIdOf(b[0]!)!];
  const [ta, tb] = [await getTask(clients[0], ids[0]!), await getTask(clients[1], ids[1]!)];
  t.equal(tb.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.same(stable(tb), stable(ta));
  const list = (c: Client, contextId: string) =>
    c.listTasks({ tenant: '', contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined });
  const [la, lb] = [await list(clients[0], ta.contextId), await list(clients[1], tb.contextId)];
  t.equal(lb.tasks.length, 1);
  t.same(stable(lb), stable(la));
});

t.test('GetTask of an unknown task: TaskNotFoundError both ways', async (t) => {
  for (const c of clients) await t.rejects(getTask(c, 'no-such-task'), { name: 'TaskNotFoundError', message: /task/i });
});

t.test('SubscribeToTask + CancelTask: the re-attached stream ends CANCELED both ways', async (t) => {
  const run = async (c: Client) => {
    const started = await sendText(c, 'wait for me');
    const id = isTask(started) ? started.id : '';
    const stream = resubscribe(c, id);
    const first = await stream.next();
    const canceled = await cancelTask(c, id);
    const rest = await collect({ [Symbol.asyncIterator]: () => stream });
    return { first: first.value, canceled, rest, after: await getTask(c, id) };
  };
  const [a, b] = await both(run, polling);
  t.equal(b.first && b.first.payload?.$case, 'task');
  t.equal(b.canceled.status?.state, TaskState.TASK_STATE_CANCELED);
  const last = b.rest.at(-1)?.payload;
  t.ok(last?.$case === 'statusUpdate' && last.value.status?.state === TaskState.TASK_STATE_CANCELED);
  t.same(stable(b), stable(a));
});

t.test('SubscribeToTask of a finished or unknown task: the same typed error both ways; no stream through the gateway either', async (t) => {
  for (const c of clients) {
    const done = await sendText(c, 'task finish');
    const finished = collect({ [Symbol.asyncIterator]: () => resubscribe(c, isTask(done) ? done.id : '') });
    // Thrown as the typed error itself: the server answered before any stream (not the SDK's SSE wrapper).
    await t.rejects(finished, { name: 'UnsupportedOperationError' });
    await t.rejects(collect({ [Symbol.asyncIterator]: () => resubscribe(c, 'no-such-task') }), { name: 'TaskNotFoundError' });
  }
  const done = await sendText(clients[1], 'task finish');
  const res = await fetch(`${gwBase}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'sub-1', method: 'SubscribeToTask', params: { id: isTask(done) ? done.id : '' } }),
  });
  t.match(res.headers.get('content-type'), /^application\/json/, 'one JSON envelope, as the SDK server sent it');
  const body = (await res.json()) as { id: string; error: { code: number; data: Array<{ domain: string; reason: string }> } };
  t.equal(body.id, 'sub-1');
  t.same(body.error.data.map((d) => [d.domain, d.reason]), [['a2a-protocol.org', 'UNSUPPORTED_OPERATION'], ['a2a-egress', 'REMOTE_ERROR']]);
});

t.test('CancelTask of a finished task: TaskNotCancelableError both ways', async (t) => {
  for (const c of clients) {
    const done = await sendText(c, 'task finish');
    await t.rejects(cancelTask(c, isTask(done) ? done.id : ''), { name: 'TaskNotCancelableError' });
  }
});

t.test('push notification configs: create, get, list, delete, same both ways', async (t) => {
  const hook = createServer((req, res) => void readBody(req).then(() => res.end()));
  const port = await listenOnLoopback(hook);
  t.teardown(() => new Promise<void>((r) => hook.close(() => r())));
  const url = `http://127.0.0.1:${port}/hook`;
  const run = async (c: Client) => {
    const task = await sendText(c, 'wait push');
    const taskId = isTask(task) ? task.id : '';
    const created = await c.createTaskPushNotificationConfig({ tenant: '', id: 'c1', taskId, url, token: 'tok', authentication: undefined });
    const got = await c.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'c1' });
    const list = () => c.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 10, pageToken: '' });
    const listed = await list();
    await c.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'c1' });
    const afterDelete = await list();
    await cancelTask(c, taskId);
    return { created, got, listed, afterDelete };
  };
  const [a, b] = await both(run, polling);
  t.equal(b.got.url, url);
  t.equal(b.listed.configs.length, 1);
  t.equal(b.afterDelete.configs.length, 0);
  t.same(stable(b), stable(a));
});

t.test('GetExtendedAgentCard: the same card, its interfaces rewritten to the gateway', async (t) => {
  const [a, b] = await both((c) => c.getAgentCard());
  t.equal(b.description, 'The extended card, for authenticated callers.', 'the client fetched the extended card');
  t.same(b.supportedInterfaces.map((i) => i.url), [gwBase, gwBase.replace(/\/$/, '')]);
  t.notMatch(JSON.stringify(b), `127.0.0.1:${behind.port}`);
  // The HTTP+JSON interface the gateway advertises (advertiseBindings) is not the remote's.
  const masked = (card: AgentCard, url: string) =>
    stable({ ...card, supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolBinding === 'JSONRPC').map((i) => ({ ...i, url: url === i.url ? '<interface>' : i.url })) });
  t.same(masked(b, gwBase), masked(a, direct.url));
});

t.test('A2A-Version reaches the upstream: 1.0 on every call (the 1.0 server refuses calls without it)', async (t) => {
  const posts = behind.requests.filter((r) => r.method === 'POST');
  t.ok(posts.length >= 10);
  t.ok(posts.every((r) => r.headers['a2a-version'] === '1.0'));
  // Without the header the SDK server answers -32009; through the gateway that stays a typed error.
  const res = await fetch(gwBase, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x' } }),
  });
  const body = (await res.json()) as { id: number; error: { code: number } };
  t.same({ id: body.id, code: body.error.code }, { id: 7, code: -32009 });
});

// Last: it checks everything the upstream behind the gateway received during this file.
t.test('the upstream behind the gateway saw only the gateway: its user-agent, one request per gateway call', async (t) => {
  const posts = behind.requests.filter((r) => r.method === 'POST');
  const cards = behind.requests.filter((r) => r.method === 'GET');
  t.equal(posts.length + cards.length, behind.requests.length);
  t.ok(posts.every((r) => r.headers['user-agent'] === `a2a-egress/${VERSION}`), 'every call came from the gateway');
  t.ok(cards.every((r) => r.headers['user-agent']?.startsWith('a2a-egress')), 'every card fetch came from the gateway');
  const calls = gw.logs.filter((l) => l.msg === 'call' && (l.call as { remote?: string }).remote === 'sdk');
  t.equal(posts.length, calls.length, 'each upstream call is one gateway call');
  const requestIds = new Set(calls.map((l) => l.requestId));
  t.ok(posts.every((r) => requestIds.has(r.headers['x-request-id'])), 'and carries that call’s request id');
  t.ok(direct.requests.every((r) => r.headers['user-agent'] !== `a2a-egress/${VERSION}`), 'the direct upstream never saw the gateway');
});
