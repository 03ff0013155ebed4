/**
 * Version bridge, real parts: the @a2a-js/sdk 1.3 client (A2A 1.0) calls a
 * 0.3-only remote, the server side of @a2a-js/sdk 0.3.14 (alias `a2a-sdk-03`),
 * through the gateway, every JSON-RPC method of 1.0. The remote knows only
 * 0.3 method names (a 1.0 name would be -32601 there), so every success below
 * went through the translation. Remote `found` learns the remote's generation
 * from its card; `pinned` has `versions: ["0.3"]` in config.
 */
import { TaskState } from '@a2a-js/sdk';
import t from 'tap';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { newKey, pushYaml } from '../support/push-kit.js';
import { ARTIFACT_TEXT, textOf } from '../support/sdk-agent.js';
import { cancelTask, clientFromBaseUrl, collect, eventKinds, getTask, isTask, resubscribe, sendText, streamText, taskIdOf, userMessage, type Client } from '../support/sdk-client.js';
import { startSdk03Upstream, type Sdk03Upstream } from '../support/sdk03-upstream.js';

let up: Sdk03Upstream;
const rpc = async (remote: string, method: string, params: object) => {
  const res = await fetch(`${gw.url}/remotes/${remote}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { code: number; data: { reason: string; domain: string }[] } };
};
let gw: RunningGateway;
const clients: Record<'found' | 'pinned', Client> = {} as never;

t.before(async () => {
  up = await startSdk03Upstream({ extendedCard: true });
  gw = await startGateway(
    // Push notifications on: push configs go through the gateway's webhook, sealed for the remote's generation.
    `server:\n  logLevel: warn\n${await pushYaml()}remotes:\n  found:\n    url: ${up.url}\n    allowPrivateNetwork: true\n  pinned:\n    url: ${up.url}\n    allowPrivateNetwork: true\n    versions: ["0.3"]\n`,
    { env: { PUSH_KEYS: newKey() } },
  );
  clients.found = await clientFromBaseUrl(`${gw.url}/remotes/found/`);
  clients.pinned = await clientFromBaseUrl(`${gw.url}/remotes/pinned/`);
});
t.teardown(async () => {
  await gw?.close();
  await up?.close();
});

t.test('a 1.0 caller gets a 1.0 card (bridged from the 0.3 card), rewritten to the gateway', async (t) => {
  const card = (await (await fetch(`${gw.url}/remotes/found/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json()) as Record<string, unknown>;
  // HTTP+JSON too: 1.0 REST callers are bridged on the call runner (test/integration/bridge-rest-caller.test.ts).
  t.same(card.supportedInterfaces, [
    { url: `${gw.url}/remotes/found/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: `${gw.url}/remotes/found`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ]);
  t.notOk(Object.hasOwn(card, 'url'), 'no 0.3 members');
  t.equal((card.capabilities as { extendedAgentCard?: boolean }).extendedAgentCard, true, 'supportsAuthenticatedExtendedCard moved into capabilities');
  const card03 = (await (await fetch(`${gw.url}/remotes/found/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
  t.equal(card03.url, `${gw.url}/remotes/found/`, 'a 0.3 caller still gets the 0.3 card');
});

for (const name of ['found', 'pinned'] as const) {
  t.test(`${name}: SendMessage echo, task, fail`, async (t) => {
    const echo = await sendText(clients[name], 'hello new client');
    t.notOk(isTask(echo));
    t.equal(textOf(echo as never), 'echo: hello new client');
    const task = await sendText(clients[name], 'task quick');
    t.ok(isTask(task) && task.status?.state === TaskState.TASK_STATE_COMPLETED);
    t.equal(isTask(task) ? textOf({ parts: task.artifacts[0]?.parts ?? [] } as never) : '', ARTIFACT_TEXT);
    const failed = await sendText(clients[name], 'fail please');
    t.ok(isTask(failed) && failed.status?.state === TaskState.TASK_STATE_FAILED);
    const last = up.requests.filter((r) => r.method === 'POST').at(-1)!;
    t.equal(last.headers['a2a-version'], '0.3', 'A2A-Version upstream is what the remote speaks');
  });

  t.test(`${name}: SendStreamingMessage, GetTask, SubscribeToTask, CancelTask`, async (t) => {
    const events = await streamText(clients[name], 'task streamed');
    t.same(eventKinds(events), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate', 'statusUpdate']);
    const taskId = taskIdOf(events[0]!)!;
    const got = await getTask(clients[name], taskId);
    t.equal(got.id, taskId);
    t.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);

    const request = userMessage('wait for me');
    const waiting = await clients[name].sendMessage({ ...request, configuration: { acceptedOutputModes: [], historyLength: undefined, taskPushNotificationConfig: undefined, returnImmediately: true } });
    t.ok(isTask(waiting), 'returnImmediately is 0.3 blocking: false');
    const waitId = isTask(waiting) ? waiting.id : '';
    const subscribed = resubscribe(clients[name], waitId);
    const first = await subscribed.next();
    t.ok(first.value, 'SubscribeToTask delivers an event');
    const canceled = await cancelTask(clients[name], waitId);
    t.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    const rest = await collect({ [Symbol.asyncIterator]: () => subscribed });
    t.ok(rest.some((e) => e.payload?.$case === 'statusUpdate' && e.payload.value.status?.state === TaskState.TASK_STATE_CANCELED), 'the subscription sees the cancel');
  });

  t.test(`${name}: push notification configs create/get/list/delete`, async (t) => {
    const task = await sendText(clients[name], 'task for push');
    const taskId = isTask(task) ? task.id : '';
    const created = await clients[name].createTaskPushNotificationConfig({ tenant: '', id: 'cfg-1', taskId, url: 'http://127.0.0.1:9/hook', token: 'tok', authentication: undefined });
    t.equal(created.taskId, taskId);
    t.equal(created.url, 'http://127.0.0.1:9/hook');
    t.equal(created.id, 'cfg-1');
    const got = await clients[name].getTaskPushNotificationConfig({ tenant: '', taskId, id: 'cfg-1' });
    t.equal(got.url, 'http://127.0.0.1:9/hook');
    const list = await clients[name].listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' });
    t.same(list.configs.map((c) => c.id), ['cfg-1']);
    await clients[name].deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'cfg-1' });
    t.same((await clients[name].listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 0, pageToken: '' })).configs, []);
  });

  t.test(`${name}: GetExtendedAgentCard gives a 1.0 card rewritten to the gateway`, async (t) => {
    const body = await rpc(name, 'GetExtendedAgentCard', {});
    const card = body.result as { name: string; url?: string; supportedInterfaces: { url: string; protocolVersion: string }[] };
    // The 0.3 SDK gives its extended card to authenticated users only; unauthenticated, the public one.
    t.equal(card.name, 'SDK 0.3 test agent');
    t.notOk(Object.hasOwn(card, 'url'), 'no 0.3 members');
    t.same(card.supportedInterfaces.map((i) => [i.url, i.protocolVersion]), [[`${gw.url}/remotes/${name}/`, '1.0']]);
  });

  t.test(`${name}: errors: TaskNotFound keeps its code and gains A2A's ErrorInfo; ListTasks has no 0.3 counterpart`, async (t) => {
    await t.rejects(getTask(clients[name], 'no-such-task'), { name: /TaskNotFound/ });
    const body = await rpc(name, 'GetTask', { id: 'no-such-task' });
    t.equal(body.error?.code, -32001);
    t.ok(body.error?.data.some((d) => d.reason === 'TASK_NOT_FOUND' && d.domain === 'a2a-protocol.org'), 'A2A ErrorInfo for the 1.0 caller');
    const before = up.requests.length;
    const list = await rpc(name, 'ListTasks', {});
    t.equal(list.error?.code, -32004, 'UnsupportedOperation');
    t.ok(list.error?.data.some((d) => d.reason === 'NO_COUNTERPART'));
    t.equal(up.requests.length, before, 'nothing sent upstream');
    await t.rejects(clients[name].listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, includeArtifacts: false } as never), /does not exist in A2A 0\.3/);
  });
}
