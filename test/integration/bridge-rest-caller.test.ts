/**
 * Version bridge on the call runner, real parts: the @a2a-js/sdk 1.3 client
 * with its REST transport (A2A 1.0 HTTP+JSON) calls a 0.3-only remote, the
 * server side of @a2a-js/sdk 0.3.14 (alias `a2a-sdk-03`), through the
 * gateway's card. The remote knows only 0.3 JSON-RPC method names (a 1.0
 * name would be -32601 there), so every success below went through the
 * translation. Remote `found` learns the remote's generation from its card;
 * `pinned` has `versions: ["0.3"]` in config.
 */
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { newKey, pushYaml } from '../support/push-kit.js';
import { ARTIFACT_TEXT, textOf } from '../support/sdk-agent.js';
import { collect, eventKinds, isTask, loopbackOnlyFetch, taskIdOf, userMessage } from '../support/sdk-client.js';
import { startSdk03Upstream, type Sdk03Upstream } from '../support/sdk03-upstream.js';

let up: Sdk03Upstream;
let gw: RunningGateway;
const clients: Record<'found' | 'pinned', Client> = {} as never;

async function restClientThroughCard(baseUrl: string): Promise<Client> {
  // Not ClientFactoryOptions.createFrom(default, ...): that adds the default JSON-RPC transport, which the card lists first.
  const factory = new ClientFactory({
    transports: [new RestTransportFactory({ fetchImpl: loopbackOnlyFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopbackOnlyFetch }),
    clientConfig: { polling: false },
  });
  return factory.createFromUrl(baseUrl);
}

interface StatusBody {
  error: { code: number; status: string; message: string; details?: { '@type': string; reason?: string; domain?: string; metadata?: Record<string, string> }[] };
}
const rest = async (remote: string, method: string, path: string, body?: object, headers: Record<string, string> = {}) => {
  const res = await fetch(`${gw.url}/remotes/${remote}${path}`, {
    method,
    headers: { 'a2a-version': '1.0', ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as unknown };
};
const reasonsOf = (body: unknown) => ((body as StatusBody).error?.details ?? []).map((d) => `${d.domain}:${d.reason}`);
const upstreamPosts = () => up.requests.filter((r) => r.method === 'POST').length;
const lastCall = () => gw.logs.filter((l) => l.msg === 'call').at(-1)?.call as Record<string, unknown> | undefined;
const text = (s: string) => ({ message: { messageId: `u-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text: s }] } });

t.before(async () => {
  up = await startSdk03Upstream({ extendedCard: true });
  gw = await startGateway(
    // Push notifications on: push configs go through the gateway's webhook, sealed for the remote's generation.
    `server:\n  logLevel: info\n${await pushYaml()}remotes:\n  found:\n    url: ${up.url}\n    allowPrivateNetwork: true\n  pinned:\n    url: ${up.url}\n    allowPrivateNetwork: true\n    versions: ["0.3"]\n`,
    { env: { PUSH_KEYS: newKey() } },
  );
  clients.found = await restClientThroughCard(`${gw.url}/remotes/found/`);
  clients.pinned = await restClientThroughCard(`${gw.url}/remotes/pinned/`);
});
t.teardown(async () => {
  await gw?.close();
  await up?.close();
});

t.test('a 1.0 caller gets a 1.0 card (bridged from the 0.3 card) offering JSON-RPC and HTTP+JSON; a 0.3 caller JSON-RPC only', async (t) => {
  const card = (await (await fetch(`${gw.url}/remotes/found/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json()) as Record<string, unknown>;
  t.same(card.supportedInterfaces, [
    { url: `${gw.url}/remotes/found/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: `${gw.url}/remotes/found`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ]);
  const card03 = (await (await fetch(`${gw.url}/remotes/found/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
  t.equal(card03.url, `${gw.url}/remotes/found/`);
  t.same(card03.additionalInterfaces ?? [], [], 'no HTTP+JSON for a 0.3 caller: 0.3 REST is not served');
});

for (const name of ['found', 'pinned'] as const) {
  t.test(`${name}: message:send echo, task, fail`, async (t) => {
    const echo = await clients[name].sendMessage(userMessage('hello rest client'));
    t.notOk(isTask(echo));
    t.equal(textOf(echo as never), 'echo: hello rest client');
    const task = await clients[name].sendMessage(userMessage('task quick'));
    t.ok(isTask(task) && task.status?.state === TaskState.TASK_STATE_COMPLETED);
    t.equal(isTask(task) ? textOf({ parts: task.artifacts[0]?.parts ?? [] } as never) : '', ARTIFACT_TEXT);
    const failed = await clients[name].sendMessage(userMessage('fail please'));
    t.ok(isTask(failed) && failed.status?.state === TaskState.TASK_STATE_FAILED);
    const last = up.requests.filter((r) => r.method === 'POST').at(-1)!;
    t.equal(last.headers['a2a-version'], '0.3', 'A2A-Version upstream is what the remote speaks');
    t.match(lastCall(), { binding: 'http+json', bridge: '1.0>0.3', outcome: 'ok' }, 'the call log line names the bridge');
  });

  t.test(`${name}: message:stream, GetTask, tasks/{id}:subscribe, tasks/{id}:cancel`, async (t) => {
    const events = await collect(clients[name].sendMessageStream(userMessage('task streamed')));
    t.same(eventKinds(events), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate', 'statusUpdate']);
    const taskId = taskIdOf(events[0]!)!;
    const got = await clients[name].getTask({ tenant: '', id: taskId, historyLength: undefined });
    t.equal(got.id, taskId);
    t.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);

    const waiting = await clients[name].sendMessage({ ...userMessage('wait for me'), configuration: { acceptedOutputModes: [], historyLength: undefined, taskPushNotificationConfig: undefined, returnImmediately: true } });
    t.ok(isTask(waiting), 'returnImmediately is 0.3 blocking: false');
    const waitId = isTask(waiting) ? waiting.id : '';
    const subscribed = clients[name].resubscribeTask({ tenant: '', id: waitId });
    const first = await subscribed.next();
    t.ok(first.value, 'SubscribeToTask delivers an event');
    const canceled = await clients[name].cancelTask({ tenant: '', id: waitId, metadata: undefined });
    t.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    const rest = await collect({ [Symbol.asyncIterator]: () => subscribed });
    t.ok(rest.some((e) => e.payload?.$case === 'statusUpdate' && e.payload.value.status?.state === TaskState.TASK_STATE_CANCELED), 'the subscription sees the cancel');
    const calls = gw.logs.filter((l) => l.msg === 'call').map((l) => l.call as Record<string, unknown>);
    for (const method of ['SendStreamingMessage', 'SubscribeToTask', 'CancelTask']) {
      t.ok(calls.some((c) => c.remote === name && c.method === method && c.binding === 'http+json' && c.bridge === '1.0>0.3'), `${method}: an HTTP+JSON call, bridged`);
    }
  });

  t.test(`${name}: push notification configs create/get/list/delete`, async (t) => {
    const task = await clients[name].sendMessage(userMessage('task for push'));
    const taskId = isTask(task) ? task.id : '';
    const created = await clients[name].createTaskPushNotificationConfig({ tenant: '', id: 'cfg-1', taskId, url: 'http://127.0.0.1:9/hook', token: 'tok', authentication: undefined });
    t.match(created, { taskId, url: 'http://127.0.0.1:9/hook', id: 'cfg-1' });
    const got = await clients[name].getTaskPushNotificationConfig({ tenant: '', taskId, id: 'cfg-1' });
    t.equal(got.url, 'http://127.0.0.1:9/hook');
    const list = await clients[name].listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
    t.same(list.configs.map((c) => c.id), ['cfg-1']);
    await clients[name].deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'cfg-1' });
    t.same((await clients[name].listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' })).configs, []);
  });

  t.test(`${name}: GET extendedAgentCard gives a 1.0 card rewritten to the gateway`, async (t) => {
    const { status, body } = await rest(name, 'GET', '/extendedAgentCard');
    t.equal(status, 200);
    const card = body as { name: string; url?: string; supportedInterfaces: { url: string; protocolBinding: string; protocolVersion: string }[] };
    t.equal(card.name, 'SDK 0.3 test agent');
    t.notOk(Object.hasOwn(card, 'url'), 'no 0.3 members');
    t.ok(card.supportedInterfaces.length > 0 && card.supportedInterfaces.every((i) => i.url.startsWith(`${gw.url}/remotes/${name}`) && i.protocolVersion === '1.0'));
  });

  t.test(`${name}: errors keep their codes in the Status shape; ListTasks is -32004 without an upstream call`, async (t) => {
    await t.rejects(clients[name].getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }), { name: 'TaskNotFoundError' });
    const missing = await rest(name, 'GET', '/tasks/no-such-task');
    t.equal(missing.status, 404);
    t.match(missing.body, { error: { code: 404, status: 'NOT_FOUND' } });
    t.ok(reasonsOf(missing.body).includes('a2a-protocol.org:TASK_NOT_FOUND'), "A2A's ErrorInfo");

    const before = upstreamPosts();
    const list = await rest(name, 'GET', '/tasks');
    t.equal(list.status, 400);
    t.match(list.body, { error: { code: 400, status: 'UNIMPLEMENTED', message: /does not exist in A2A 0\.3/ } });
    t.ok(reasonsOf(list.body).includes('a2a-protocol.org:UNSUPPORTED_OPERATION'), 'typed as UnsupportedOperation (-32004)');
    t.ok(reasonsOf(list.body).includes('a2a-egress:NO_COUNTERPART'));
    t.equal(upstreamPosts(), before, 'nothing sent upstream');
    await t.rejects(clients[name].listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, includeArtifacts: false } as never), { name: 'UnsupportedOperationError' });
  });

  t.test(`${name}: an A2A-Version neither side serves is VERSION_NOT_SUPPORTED naming the supported ones, without an upstream call`, async (t) => {
    const before = upstreamPosts();
    const res = await rest(name, 'POST', '/message:send', text('hi'), { 'a2a-version': '2.0' });
    t.equal(res.status, 400);
    t.match(res.body, { error: { message: /supported: 0\.3, 1\.0/ } });
    t.ok(reasonsOf(res.body).includes('a2a-egress:VERSION_NOT_SUPPORTED'));
    t.equal(upstreamPosts(), before);
  });
}

t.test('a remote whose generation is unknown (no versions, no card seen) is called as it is', async (t) => {
  const gw2 = await startGateway(`server:\n  logLevel: warn\nremotes:\n  plain:\n    url: ${up.url}\n    allowPrivateNetwork: true\n    binding: jsonrpc\n`);
  t.teardown(() => gw2.close());
  const res = await fetch(`${gw2.url}/remotes/plain/message:send`, { method: 'POST', headers: { 'a2a-version': '1.0', 'content-type': 'application/json' }, body: JSON.stringify(text('hi')) });
  const body = (await res.json()) as StatusBody;
  t.equal(body.error.code, 404, 'the 0.3 remote does not know the 1.0 method: -32601 as NOT_FOUND');
});

t.test('binding auto: the card lookup before the first REST call learns the remote generation (no card fetched by the caller)', async (t) => {
  const gw2 = await startGateway(`server:\n  logLevel: info\nremotes:\n  fresh:\n    url: ${up.url}\n    allowPrivateNetwork: true\n`);
  t.teardown(() => gw2.close());
  const res = await fetch(`${gw2.url}/remotes/fresh/message:send`, { method: 'POST', headers: { 'a2a-version': '1.0', 'content-type': 'application/json' }, body: JSON.stringify(text('first call')) });
  t.equal(res.status, 200);
  const body = (await res.json()) as { message?: { role: string; parts: { text: string }[] } };
  t.equal(body.message?.role, 'ROLE_AGENT');
  t.equal(body.message?.parts[0]?.text, 'echo: first call');
  const line = gw2.logs.filter((l) => l.msg === 'call').at(-1)?.call as Record<string, unknown> | undefined;
  t.match(line, { binding: 'http+json', bridge: '1.0>0.3', outcome: 'ok' });
});
