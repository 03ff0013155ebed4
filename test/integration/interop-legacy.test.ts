/**
 * The proof, A2A 0.3: the SDK's 0.3 compat layer on both ends (client
 * `legacyCompat`, server `legacyCompat`), the upstream's card offering only
 * its 0.3 interface. The client discovers the card at the gateway and calls
 * `message/send`, `message/stream`, `tasks/get`, ... through it, with the
 * same results as directly.
 */
import { TaskState, type AgentCard } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { newKey, pushYaml } from '../support/push-kit.js';
import { cancelTask, collect, eventKinds, getTask, isTask, loopbackOnlyFetch, resubscribe, sendText, streamText, taskIdOf } from '../support/sdk-client.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';

const VOLATILE = new Set(['messageId', 'taskId', 'contextId', 'id', 'timestamp']);
const stable = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (key, v: unknown) => (VOLATILE.has(key) && typeof v === 'string' && v !== '' ? '<volatile>' : v)) ?? 'null');

/** A 0.3-only remote: the SDK server in compat mode whose card lists only the 0.3 interface. */
const legacyUpstream = () =>
  startSdkUpstream({
    legacyCompat: true,
    editCard: (card) => {
      card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolVersion === '0.3');
    },
    extendedCard: (card: AgentCard) => ({ ...card, description: 'extended 0.3 card' }),
  });

/** The way a 0.3-aware caller starts: card from the base URL, compat transport chosen from it. */
function legacyClient(baseUrl: string, polling = false): Promise<Client> {
  const legacyCompat = { enabled: true };
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: loopbackOnlyFetch, legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopbackOnlyFetch, legacyCompat }),
    clientConfig: { polling },
  }).createFromUrl(baseUrl);
}

let direct: SdkUpstream;
let behind: SdkUpstream;
let gw: RunningGateway;
let gwBase: string;
let clients: [Client, Client];
let polling: [Client, Client];

t.before(async () => {
  direct = await legacyUpstream();
  behind = await legacyUpstream();
  // Push notifications on: push configs go through the gateway's webhook, and callers see their own.
  gw = await startGateway(`server:\n  logLevel: warn\n${await pushYaml()}remotes:\n  old:\n    url: ${behind.url}\n    allowPrivateNetwork: true\n`, { env: { PUSH_KEYS: newKey() } });
  gwBase = `${gw.url}/remotes/old/`;
  clients = [await legacyClient(direct.url), await legacyClient(gwBase)];
  polling = [await legacyClient(direct.url, true), await legacyClient(gwBase, true)];
});
t.teardown(async () => {
  await gw?.close();
  await direct?.close();
  await behind?.close();
});

async function both<T>(op: (c: Client) => Promise<T>, which: [Client, Client] = clients): Promise<[T, T]> {
  return [await op(which[0]), await op(which[1])];
}

t.test('the 0.3 card at the gateway names only the gateway; the client picks the 0.3 transport', async (t) => {
  const text = await (await fetch(`${gwBase}.well-known/agent-card.json`)).text();
  t.notMatch(text, `127.0.0.1:${behind.port}`);
  const card = JSON.parse(text) as { url?: string; protocolVersion?: string };
  t.equal(card.url, gwBase, '0.3 `url` rewritten');
  t.equal(card.protocolVersion, '0.3');
  t.equal(clients[1].protocolVersion, '0.3');
});

t.test('message/send (echo), task and fail: same both ways', async (t) => {
  for (const text of ['hello old world', 'task quick', 'fail please']) {
    const [a, b] = await both((c) => sendText(c, text));
    t.same(stable(b), stable(a), text);
  }
  const [, done] = await both((c) => sendText(c, 'task again'));
  t.ok(isTask(done) && done.status?.state === TaskState.TASK_STATE_COMPLETED);
});

t.test('message/stream then tasks/get: same both ways', async (t) => {
  const [a, b] = await both((c) => streamText(c, 'task stream it'));
  t.same(eventKinds(b), eventKinds(a));
  t.ok(b.length >= 2);
  t.same(stable(b), stable(a));
  const [ta, tb] = [await getTask(clients[0], taskIdOf(a[0]!)!), await getTask(clients[1], taskIdOf(b[0]!)!)];
  t.equal(tb.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.same(stable(tb), stable(ta));
});

t.test('tasks/get of an unknown task: TaskNotFoundError both ways', async (t) => {
  for (const c of clients) await t.rejects(getTask(c, 'nope'), { name: 'TaskNotFoundError' });
});

t.test('tasks/resubscribe + tasks/cancel: ends CANCELED both ways', async (t) => {
  const run = async (c: Client) => {
    const started = await sendText(c, 'wait here');
    const id = isTask(started) ? started.id : '';
    const stream = resubscribe(c, id);
    const first = await stream.next();
    const canceled = await cancelTask(c, id);
    const rest = await collect({ [Symbol.asyncIterator]: () => stream });
    return { first: first.value, canceled, rest };
  };
  const [a, b] = await both(run, polling);
  t.equal(b.canceled.status?.state, TaskState.TASK_STATE_CANCELED);
  t.same(stable(b), stable(a));
});

t.test('tasks/pushNotificationConfig/set, get, list, delete: same both ways', async (t) => {
  const url = 'http://127.0.0.1:9/never-called';
  const run = async (c: Client) => {
    const task = await sendText(c, 'wait push');
    const taskId = isTask(task) ? task.id : '';
    const created = await c.createTaskPushNotificationConfig({ tenant: '', id: 'p1', taskId, url, token: 't', authentication: undefined });
    const got = await c.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'p1' });
    const listed = await c.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 10, pageToken: '' });
    await c.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'p1' });
    return { created, got, listed };
  };
  const [a, b] = await both(run, polling);
  t.equal(b.got.url, url);
  t.same(stable(b), stable(a));
});

t.test('agent/getAuthenticatedExtendedCard: rewritten to the gateway, otherwise the same', async (t) => {
  // Straight to the transport: Client.getAgentCard() asks only when the discovered card says it may (see the todo below).
  const [a, b] = await both((c) => c.transport.getExtendedAgentCard({ tenant: '' }));
  t.equal(b.description, 'extended 0.3 card');
  t.ok(b.supportedInterfaces.every((i) => i.url === gwBase), 'every interface points at the gateway');
  t.notMatch(JSON.stringify(b), `127.0.0.1:${behind.port}`);
  const masked = (card: AgentCard) => stable({ ...card, supportedInterfaces: card.supportedInterfaces.map((i) => ({ ...i, url: '<interface>' })) });
  t.same(masked(b), masked(a));
});

t.test('the upstream behind the gateway got 0.3 method names and A2A-Version 0.3, from the gateway only', async (t) => {
  const posts = behind.requests.filter((r) => r.method === 'POST');
  const methods = new Set(posts.map((r) => (JSON.parse(r.body) as { method: string }).method));
  t.same(
    [...methods].sort(),
    [
      'agent/getAuthenticatedExtendedCard',
      'message/send',
      'message/stream',
      'tasks/cancel',
      'tasks/get',
      'tasks/pushNotificationConfig/delete',
      'tasks/pushNotificationConfig/get',
      'tasks/pushNotificationConfig/list',
      'tasks/pushNotificationConfig/set',
      'tasks/resubscribe',
    ],
  );
  const viaClient = posts.filter((r) => !r.body.includes('agent/getAuthenticatedExtendedCard'));
  t.same(new Set(viaClient.map((r) => r.headers['a2a-version'])), new Set(['0.3']), 'A2A-Version: 0.3 (set by the Client) forwarded');
  const viaTransport = posts.filter((r) => r.body.includes('agent/getAuthenticatedExtendedCard'));
  t.ok(viaTransport.every((r) => r.headers['a2a-version'] === undefined), 'and not invented when the caller sent none');
  t.ok(posts.every((r) => r.headers['user-agent']?.startsWith('a2a-egress/')));
  const calls = gw.logs.filter((l) => l.msg === 'call');
  t.equal(posts.length, calls.length);
});

t.test(
  'a 1.0 client discovering a compat (0.3 + 1.0) remote through the gateway sees the same card as directly',
  async (t) => {
    const viaGateway = await (await fetch(`${gwBase}.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json();
    const directly = await (await fetch(behind.cardUrl, { headers: { 'a2a-version': '1.0' } })).json();
    // The gateway asks in the caller's A2A-Version, so it gets the same generation's card; only the
    // JWS signatures are gone (a rewritten card no longer verifies).
    const withoutSignatures = Object.keys(directly as object).filter((k) => k !== 'signatures').sort();
    t.same(Object.keys(viaGateway as object).sort(), withoutSignatures);
    t.ok((viaGateway as { capabilities?: { extendedAgentCard?: boolean } }).capabilities?.extendedAgentCard, 'the 1.0 capability is there');
  },
);
