/**
 * Version bridge, real parts: the @a2a-js/sdk 0.3.14 client (alias
 * `a2a-sdk-03`) calls a 1.0-only @a2a-js/sdk 1.3 server through the gateway,
 * every JSON-RPC method of 0.3. The remote refuses 0.3 (-32009 without
 * `A2A-Version: 1.0`), so every success below went through the translation.
 * Remote `found` learns the remote's generation from its card (the client
 * fetches it first); remote `pinned` has `versions: ["1.0"]` in config.
 */
import type { Message, Task, TaskStatusUpdateEvent } from 'a2a-sdk-03';
import { ClientFactory, ClientFactoryOptions, type Client } from 'a2a-sdk-03/client';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { newKey, pushYaml } from '../support/push-kit.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';
import { ARTIFACT_TEXT } from '../support/sdk-agent.js';

let up: SdkUpstream;
let gw: RunningGateway;
let found: Client;
let pinned: Client;

const text = (parts: readonly { kind: string; text?: string }[] | undefined) => (parts ?? []).map((p) => (p.kind === 'text' ? p.text : '')).join('');
const userMessage = (words: string, ids: { taskId?: string; contextId?: string } = {}): Message => ({
  kind: 'message',
  messageId: `user-${Math.random().toString(36).slice(2)}`,
  role: 'user',
  parts: [{ kind: 'text', text: words }],
  ...ids,
});
async function collect<T>(events: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of events) out.push(e);
  return out;
}
const rpc = async (remote: string, body: object, headers: Record<string, string> = {}) => {
  const res = await fetch(`${gw.url}/remotes/${remote}/`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return (await res.json()) as { result?: unknown; error?: { code: number; message: string; data?: { reason?: string; metadata?: Record<string, string> }[] } };
};

t.before(async () => {
  up = await startSdkUpstream({ extendedCard: (card) => ({ ...card, description: 'extended 1.0 card' }) });
  gw = await startGateway(
    // Push notifications on: push configs go through the gateway's webhook, sealed for the remote's generation.
    `server:\n  logLevel: info\n${await pushYaml()}remotes:\n  found:\n    url: ${up.url}\n    allowPrivateNetwork: true\n    unversionedCard: "0.3"\n` +
      `  pinned:\n    url: ${up.url}\n    allowPrivateNetwork: true\n    versions: ["1.0"]\n    unversionedCard: "0.3"\n` +
      `  plain:\n    url: ${up.url}\n    allowPrivateNetwork: true\n`,
    { env: { PUSH_KEYS: newKey() } },
  );
  const factory = () => new ClientFactory(ClientFactoryOptions.default);
  found = await factory().createFromUrl(`${gw.url}/remotes/found/`);
  pinned = await factory().createFromUrl(`${gw.url}/remotes/pinned/`);
});
t.teardown(async () => {
  await gw?.close();
  await up?.close();
});

t.test('cards: a caller naming A2A-Version gets its generation; one naming none gets what unversionedCard says', async (t) => {
  const get = async (remote: string, headers: Record<string, string> = {}) =>
    (await (await fetch(`${gw.url}/remotes/${remote}/.well-known/agent-card.json`, { headers })).json()) as Record<string, unknown>;
  const own = await get('plain');
  t.ok(Array.isArray(own.supportedInterfaces), 'default (remote): the remote’s 1.0 card, as before the bridge');
  t.notOk(Object.hasOwn(own, 'url'));
  const asked03 = await get('plain', { 'a2a-version': '0.3' });
  t.equal(asked03.url, `${gw.url}/remotes/plain/`, 'A2A-Version: 0.3 gets the bridged 0.3 card');
  t.notOk(Object.hasOwn(asked03, 'supportedInterfaces'));
  const asked10 = await get('found', { 'a2a-version': '1.0' });
  t.ok(Array.isArray(asked10.supportedInterfaces), 'A2A-Version: 1.0 gets the 1.0 card whatever unversionedCard says');
});

t.test('the 0.3 client gets a 0.3 card naming the gateway (bridged from the 1.0 card)', async (t) => {
  const card = (await (await fetch(`${gw.url}/remotes/found/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
  t.equal(card.url, `${gw.url}/remotes/found/`);
  t.equal(card.preferredTransport, 'JSONRPC');
  t.match(String(card.protocolVersion), /^0\.3/);
  t.notOk(JSON.stringify(card).includes(`127.0.0.1:${up.port}`), 'no upstream address');
  const card10 = (await (await fetch(`${gw.url}/remotes/found/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json()) as Record<string, unknown>;
  t.same((card10.supportedInterfaces as { protocolBinding: string; protocolVersion: string }[])[0], { url: `${gw.url}/remotes/found/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, 'a 1.0 caller still gets the 1.0 card');
});

for (const name of ['found', 'pinned'] as const) {
  const client = () => (name === 'found' ? found : pinned);

  t.test(`${name}: message/send echo, task, fail`, async (t) => {
    const echo = (await client().sendMessage({ message: userMessage('hello old client') })) as Message;
    t.equal(echo.kind, 'message');
    t.equal(echo.role, 'agent');
    t.equal(text(echo.parts), 'echo: hello old client');
    const task = (await client().sendMessage({ message: userMessage('task quick') })) as Task;
    t.equal(task.kind, 'task');
    t.equal(task.status.state, 'completed');
    t.equal(text(task.artifacts?.[0]?.parts), ARTIFACT_TEXT);
    const failed = (await client().sendMessage({ message: userMessage('fail please') })) as Task;
    t.equal(failed.status.state, 'failed');
    const last = up.requests.filter((r) => r.method === 'POST').at(-1)!;
    t.equal(last.headers['a2a-version'], '1.0', 'A2A-Version upstream is what the remote speaks');
    t.match(last.body, /"method":"SendMessage"/, 'the 1.0 method name upstream');
  });

  t.test(`${name}: message/stream events in 0.3 kinds; tasks/get; tasks/resubscribe; tasks/cancel`, async (t) => {
    const events = await collect(client().sendMessageStream({ message: userMessage('task streamed') }));
    t.same(events.map((e) => e.kind), ['task', 'status-update', 'artifact-update', 'status-update', 'status-update']);
    const final = events.at(-1) as TaskStatusUpdateEvent;
    t.equal(final.status.state, 'completed');
    const taskId = (events[0] as Task).id;
    const got = await client().getTask({ id: taskId, historyLength: 5 });
    t.equal(got.kind, 'task');
    t.equal(got.id, taskId);
    t.equal(got.status.state, 'completed');

    // blocking: false is 1.0's returnImmediately: the task comes back while it still runs.
    const waiting = (await client().sendMessage({ message: userMessage('wait for me'), configuration: { blocking: false, acceptedOutputModes: [] } })) as Task;
    t.equal(waiting.kind, 'task');
    t.not(waiting.status.state, 'completed');
    const waitId = waiting.id;
    const resubscribed = client().resubscribeTask({ id: waitId });
    const first = await resubscribed.next();
    t.ok(first.value, 'tasks/resubscribe delivers an event');
    const canceled = await client().cancelTask({ id: waitId });
    t.equal(canceled.kind, 'task');
    t.equal(canceled.status.state, 'canceled');
    const rest = await collect({ [Symbol.asyncIterator]: () => resubscribed });
    t.ok(rest.some((e) => e.kind === 'status-update' && e.status.state === 'canceled'), 'the resubscribed stream sees the cancel');
  });

  t.test(`${name}: push notification configs set/get/list/delete`, async (t) => {
    const task = (await client().sendMessage({ message: userMessage('task for push') })) as Task;
    const config = { id: 'cfg-1', url: 'http://127.0.0.1:9/hook', token: 'tok' };
    const set = await client().setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: config });
    t.equal(set.taskId, task.id);
    t.equal(set.pushNotificationConfig.url, config.url);
    t.equal(set.pushNotificationConfig.id, 'cfg-1');
    const got = await client().getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'cfg-1' } as never);
    t.equal(got.pushNotificationConfig.url, config.url);
    const list = await client().listTaskPushNotificationConfig({ id: task.id });
    t.same(list.map((c) => c.pushNotificationConfig.id), ['cfg-1']);
    await client().deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'cfg-1' });
    t.same(await client().listTaskPushNotificationConfig({ id: task.id }), []);
  });

  t.test(`${name}: agent/getAuthenticatedExtendedCard gives a 0.3 card rewritten to the gateway`, async (t) => {
    const r = await rpc(name, { jsonrpc: '2.0', id: 7, method: 'agent/getAuthenticatedExtendedCard' });
    const card = r.result as Record<string, unknown>;
    t.equal(card.description, 'extended 1.0 card');
    t.equal(card.url, `${gw.url}/remotes/${name}/`);
    t.match(String(card.protocolVersion), /^0\.3/);
  });

  t.test(`${name}: errors keep their code; a 0.3 caller gets no A2A ErrorInfo`, async (t) => {
    const r = await rpc(name, { jsonrpc: '2.0', id: 'x', method: 'tasks/get', params: { id: 'no-such-task' } });
    t.equal(r.error?.code, -32001);
    t.notOk(r.error?.data?.some((d) => d.reason === 'TASK_NOT_FOUND'), '0.3 data carries no A2A ErrorInfo');
    await t.rejects(client().getTask({ id: 'no-such-task' }));
    // The 1.0 remote answers SubscribeToTask of no task with one JSON error; a 0.3 caller gets it as a stream's event.
    const res = await fetch(`${gw.url}/remotes/${name}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tasks/resubscribe', params: { id: 'no-such-task' } }),
    });
    t.match(res.headers.get('content-type'), /^text\/event-stream/);
    const event = JSON.parse((await res.text()).replace(/^data: /, '')) as { id: number; error: { code: number } };
    t.equal(event.id, 5);
    t.equal(event.error.code, -32001);
    await t.rejects(collect(client().resubscribeTask({ id: 'no-such-task' })), /-32001|not found/i, 'the 0.3 client reads the code');
  });
}

t.test('-32009 for a version neither the gateway nor the remote serves, naming the supported ones', async (t) => {
  for (const version of ['2.0', '1.1', 'latest']) {
    const r = await rpc('pinned', { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: userMessage('hi') } }, { 'a2a-version': version });
    t.equal(r.error?.code, -32009, version);
    const info = r.error?.data?.find((d) => d.reason === 'VERSION_NOT_SUPPORTED');
    t.ok(info, `reason VERSION_NOT_SUPPORTED (${version})`);
    t.match(JSON.stringify(r.error), /0\.3, 1\.0/, 'names the supported versions');
  }
  const query = await (await fetch(`${gw.url}/remotes/pinned/?A2A-Version=3.0`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: 'x' } }) })).json() as { error?: { code: number } };
  t.equal(query.error?.code, -32009, 'the A2A-Version query parameter counts too');
});

t.test('the bridge counts what it dropped (metric) and a same-generation caller is not translated', async (t) => {
  // 0.3 request metadata on tasks/get has no 1.0 counterpart.
  await rpc('pinned', { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { id: 'no-such', metadata: { secretish: 'value-never-logged' } } });
  const line = gw.logs.find((l) => (l.bridge as { direction?: string } | undefined)?.direction === 'request');
  t.same((line?.bridge as { dropped?: string[] }).dropped, ['metadata'], 'the log names the member');
  t.notOk(JSON.stringify(gw.logs).includes('value-never-logged'), 'never its value');
  const callLine = gw.logs.filter((l) => (l.call as { method?: string } | undefined)?.method === 'tasks/get').at(-1);
  t.equal((callLine?.call as { bridge?: string }).bridge, '0.3>1.0', 'the call line says the call was translated');
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  t.match(metrics, /a2a_egress_bridge_dropped_total\{remote="pinned",direction="request"\} [1-9]/);
  const before = up.requests.length;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: 'no-such' } });
  await fetch(`${gw.url}/remotes/pinned/`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body });
  t.equal(up.requests[before]?.body, body, 'a 1.0 caller\'s bytes reach the 1.0 remote unchanged');
});
