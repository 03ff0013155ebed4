/**
 * Push notifications through the running gateway, end to end: a gateway
 * started from YAML with `server.push`, a real @a2a-js/sdk server with push
 * notifications on as the remote, a local webhook receiver on 127.0.0.1 as
 * the local agent, and a JSON-RPC caller that registers its webhook through
 * the gateway. The remote only ever sees the gateway's webhook and minted
 * credential; its pushes reach the gateway's listener and are delivered to
 * the receiver with the caller's own credentials. Refusals are typed.
 */
import t, { type Test } from 'tap';
import { request } from 'undici';
import { freePort, newKey, pushYaml, startReceiver, statusPush, type Receiver } from '../support/push-kit.js';
import { reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { startSdkRestUpstream } from '../support/sdk-rest-upstream.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';
import { delay, rawRequest } from '../support/servers.js';

// The SDK's push sender logs every push with its URL: keep the test output readable.
console.info = () => undefined;

const LOCAL_AUTH = 'local-agent-secret-3b7e';
const LOCAL_TOKEN = 'caller-token-8c2d';
const KEYS = { PUSH_KEYS: newKey() };

interface Rig {
  readonly gw: RunningGateway;
  readonly upstream: SdkUpstream;
  readonly receiver: Receiver;
  readonly rpcUrl: string;
}

async function rig(t: Test, push: string | null = '', legacyCompat = false): Promise<Rig> {
  const upstream = await startSdkUpstream({ stepDelayMs: 20, legacyCompat });
  const receiver = await startReceiver();
  let server = 'server: { logLevel: warn }';
  if (push !== null) {
    const port = await freePort();
    server = `server:
  logLevel: warn
  push:
    port: ${port}
    publicBaseUrl: http://127.0.0.1:${port}/push
    keys: { env: PUSH_KEYS }${push}`;
  }
  const gw = await startGateway(`${server}\nremotes:\n  sdk: { url: '${upstream.url}', allowPrivateNetwork: true }\n`, { env: KEYS });
  t.teardown(async () => {
    // The remote first: it must not push to a listener that is already gone.
    await upstream.close();
    await gw.close();
    await receiver.close();
  });
  return { gw, upstream, receiver, rpcUrl: `${gw.url}/remotes/sdk` };
}

const V1 = { 'a2a-version': '1.0' };
const message = (text: string) => ({ messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }] });
const localConfig = (url: string) => ({ url, token: LOCAL_TOKEN, authentication: { scheme: 'Bearer', credentials: LOCAL_AUTH } });
const stateOf = (body: string): string => {
  const v = JSON.parse(body) as Record<string, { status?: { state?: string } }>;
  return v.task?.status?.state ?? v.statusUpdate?.status?.state ?? (v.artifactUpdate ? 'artifact' : '?');
};
/** What the remote was sent, as text, for every request it received. */
const remoteSaw = (upstream: SdkUpstream): string => upstream.requests.map((r) => r.body).join('\n');

t.test('SendMessage with a push config through the gateway: every update of the task reaches the local agent once, with its own credentials', async (t) => {
  const { upstream, receiver, rpcUrl, gw } = await rig(t);
  const reply = await rpc(rpcUrl, rpcRequest('SendMessage', 1, { message: message('task build it'), configuration: { returnImmediately: true, taskPushNotificationConfig: localConfig(receiver.url) } }), V1);
  t.equal(reply.status, 200);
  t.ok((reply.json.result as { task?: unknown } | undefined)?.task, 'the task came back');

  const seen = remoteSaw(upstream);
  for (const secret of [receiver.url, LOCAL_AUTH, LOCAL_TOKEN]) t.notOk(seen.includes(secret), 'the remote never learns the local target or its credentials');
  const minted = /"url":"(http:\/\/127\.0\.0\.1:\d+\/push\/[^"]+)","token":"([^"]+)"/.exec(seen);
  t.ok(minted, 'the remote holds the gateway webhook and a minted credential');

  const received = await receiver.waitFor(5);
  await delay(300);
  t.same(received.map((r) => stateOf(r.body)), ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED'], 'each update once, in order');
  for (const r of received) {
    t.equal(r.url, '/hooks/a2a');
    t.equal(r.headers.authorization, `Bearer ${LOCAL_AUTH}`, 'the local agent’s own authentication');
    t.equal(r.headers['x-a2a-notification-token'], LOCAL_TOKEN, 'and its own token');
    t.notOk(minted && (r.body.includes(minted[2]!) || JSON.stringify(r.headers).includes(minted[2]!)), 'never the gateway’s credential');
  }

  // A hostile push to the same webhook: CR/LF and bidi text cleaned; too large refused, typed.
  if (!minted) return;
  const [, url, credential] = minted;
  const task = JSON.parse(received[0]!.body) as { task: { id: string } };
  const dirty = await rawRequest(url!, { body: JSON.stringify(statusPush('done\u202e\r\nok\u0007', task.task.id)), headers: { 'content-type': 'application/a2a+json', authorization: `Bearer ${credential}` } });
  t.equal(dirty.status, 202, 'accepted');
  const [cleaned] = (await receiver.waitFor(6)).slice(5);
  t.notOk(/[\u202e\u0007\r]/.test(cleaned!.body), 'bidi override, BEL and CR removed before delivery');
  const big = await rawRequest(url!, { body: JSON.stringify(statusPush('x'.repeat(1_100_000), task.task.id)), headers: { 'content-type': 'application/a2a+json', authorization: `Bearer ${credential}` } });
  t.equal(big.status, 413, 'a push over maxBodyBytes is refused');
  t.match(JSON.parse(big.body.toString()), { error: { details: [{ reason: 'PUSH_TOO_LARGE' }] } });
  const forged = await rawRequest(url!, { body: JSON.stringify(statusPush('hi', task.task.id)), headers: { 'content-type': 'application/a2a+json', authorization: 'Bearer not-the-credential' } });
  t.equal(forged.status, 401, 'a wrong credential is refused');
  const replay = await rawRequest(url!, { body: received[4]!.body, headers: { 'content-type': 'application/a2a+json', authorization: `Bearer ${credential}` } });
  t.equal(replay.status, 200, 'a redelivery is acknowledged');
  await delay(150);
  t.equal(receiver.received.length, 6, 'no refused or redelivered push reached the local agent');

  const metrics = await (await request(`${gw.url}/metrics`)).body.text();
  t.match(metrics, /a2a_egress_push_received_total\{remote="sdk",outcome="accepted"\} 6/, 'pushes counted in the gateway’s /metrics');
  t.match(metrics, /a2a_egress_push_deliveries_total\{remote="sdk",outcome="delivered"\} 6/);
  t.match(metrics, /a2a_egress_push_received_total\{remote="sdk",outcome="PUSH_TOO_LARGE"\} 1/);

  // The listener closes with the gateway.
  await upstream.close();
  await gw.close();
  await t.rejects(rawRequest(url!, { body: '{}', timeoutMs: 1000 }), { code: 'ECONNREFUSED' }, 'nothing listens on the webhook port after close');
});

t.test('A2A 0.3 through the gateway: message/send with a push config, 0.3 Tasks delivered; set/get show the caller its own', async (t) => {
  const { upstream, receiver, rpcUrl } = await rig(t, '', true);
  const reply = await rpc(rpcUrl, rpcRequest('message/send', 1, {
    message: { kind: 'message', messageId: 'm03', role: 'user', parts: [{ kind: 'text', text: 'task old style' }] },
    configuration: { blocking: false, pushNotificationConfig: { url: receiver.url, token: LOCAL_TOKEN, authentication: { schemes: ['Bearer'], credentials: LOCAL_AUTH } } },
  }));
  const task = reply.json.result as { kind: string; id: string };
  t.equal(task.kind, 'task');
  const received = await receiver.waitFor(5);
  await delay(200);
  t.equal(received.length, 5);
  for (const r of received) {
    t.equal((JSON.parse(r.body) as { kind: string }).kind, 'task', 'a 0.3 Task');
    t.equal(r.headers.authorization, `Bearer ${LOCAL_AUTH}`);
    t.equal(r.headers['x-a2a-notification-token'], LOCAL_TOKEN);
  }
  const mine = { url: receiver.url, token: LOCAL_TOKEN, authentication: { schemes: ['Bearer'], credentials: LOCAL_AUTH }, id: 'c03' };
  const set = await rpc(rpcUrl, rpcRequest('tasks/pushNotificationConfig/set', 2, { taskId: task.id, pushNotificationConfig: mine }));
  t.same(set.json.result, { taskId: task.id, pushNotificationConfig: mine }, 'set shows the caller its own');
  const got = await rpc(rpcUrl, rpcRequest('tasks/pushNotificationConfig/get', 3, { id: task.id, pushNotificationConfigId: 'c03' }));
  t.same(got.json.result, { taskId: task.id, pushNotificationConfig: mine }, 'get too');
  const seen = remoteSaw(upstream);
  for (const secret of [receiver.url, LOCAL_AUTH, LOCAL_TOKEN]) t.notOk(seen.includes(secret), 'the remote never saw them');
});

t.test('CreateTaskPushNotificationConfig, get and list through the gateway show the caller its own config; the remote holds the gateway’s', async (t) => {
  const { upstream, receiver, rpcUrl } = await rig(t);
  const started = await rpc(rpcUrl, rpcRequest('SendMessage', 1, { message: message('wait for it'), configuration: { returnImmediately: true } }), V1);
  const taskId = (started.json.result as { task: { id: string } }).task.id;
  const mine = { taskId, id: 'cfg-1', ...localConfig(receiver.url) };

  const created = await rpc(rpcUrl, rpcRequest('CreateTaskPushNotificationConfig', 2, mine), V1);
  t.same(created.json.result, mine, 'create shows the caller its own');
  const got = await rpc(rpcUrl, rpcRequest('GetTaskPushNotificationConfig', 3, { taskId, id: 'cfg-1' }), V1);
  t.same(got.json.result, mine, 'get too');
  const listed = await rpc(rpcUrl, rpcRequest('ListTaskPushNotificationConfigs', 4, { taskId }), V1);
  t.same(listed.json.result, { configs: [mine] }, 'and list');
  const seen = remoteSaw(upstream);
  for (const secret of [receiver.url, LOCAL_AUTH, LOCAL_TOKEN]) t.notOk(seen.includes(secret), 'the remote never saw them');

  await rpc(rpcUrl, rpcRequest('CancelTask', 5, { id: taskId }), V1);
  const [canceled] = await receiver.waitFor(1);
  t.equal(stateOf(canceled!.body), 'TASK_STATE_CANCELED', 'the cancel is pushed to the local agent');
  t.equal(canceled!.headers.authorization, `Bearer ${LOCAL_AUTH}`);
});

t.test('refusals are typed and nothing reaches the remote: target not allowed, config too large, push not enabled', async (t) => {
  const { upstream, receiver, rpcUrl, gw } = await rig(t, '\n    maxWebhookUrlBytes: 256');
  const create = (id: number, config: Record<string, unknown>) => rpc(rpcUrl, rpcRequest('CreateTaskPushNotificationConfig', id, { taskId: 'task-x', ...config }), V1);

  const outside = await create(1, localConfig('https://hooks.example.com/a2a'));
  t.equal(outside.json.error?.code, -32602);
  t.equal(reasonOf(outside), 'PUSH_TARGET_NOT_ALLOWED', 'only loopback targets by default');
  const metadata = await create(2, localConfig('http://169.254.169.254/latest'));
  t.equal(reasonOf(metadata), 'PUSH_TARGET_NOT_ALLOWED', 'nor the metadata address');
  const tooLarge = await create(3, { ...localConfig(receiver.url), token: 't'.repeat(400) });
  t.equal(tooLarge.json.error?.code, -32602);
  t.equal(reasonOf(tooLarge), 'PUSH_CONFIG_TOO_LARGE', 'a webhook URL over maxWebhookUrlBytes');
  const inSend = await rpc(rpcUrl, rpcRequest('SendMessage', 4, { message: message('hi'), configuration: { taskPushNotificationConfig: localConfig('http://10.0.0.8/hook') } }), V1);
  t.equal(reasonOf(inSend), 'PUSH_TARGET_NOT_ALLOWED', 'the config inside SendMessage’s configuration too');
  t.equal(upstream.requests.length, 0, 'no refused call reached the remote');

  const card = await request(`${gw.url}/remotes/sdk/.well-known/agent-card.json`, { headers: V1 });
  t.match(await card.body.json(), { capabilities: { pushNotifications: true } }, 'the card keeps the remote’s push capability');
});

t.test('without server.push: push configs are refused with PUSH_NOT_ENABLED (-32003) and the card says no push', async (t) => {
  const { upstream, receiver, rpcUrl, gw } = await rig(t, null);
  const refused = await rpc(rpcUrl, rpcRequest('CreateTaskPushNotificationConfig', 1, { taskId: 'task-x', ...localConfig(receiver.url) }), V1);
  t.equal(refused.json.error?.code, -32003);
  t.equal(reasonOf(refused), 'PUSH_NOT_ENABLED');
  const legacy = await rpc(rpcUrl, rpcRequest('message/send', 2, { message: { kind: 'message', ...message('hi'), role: 'user', parts: [{ kind: 'text', text: 'hi' }] }, configuration: { pushNotificationConfig: { url: receiver.url } } }));
  t.equal(reasonOf(legacy), 'PUSH_NOT_ENABLED', '0.3 message/send with a config too');
  t.equal(upstream.requests.length, 0);
  const plain = await rpc(rpcUrl, rpcRequest('SendMessage', 3, { message: message('hello') }), V1);
  t.ok(plain.json.result, 'calls without a push config are untouched');

  const card = await request(`${gw.url}/remotes/sdk/.well-known/agent-card.json`, { headers: V1 });
  t.match(await card.body.json(), { capabilities: { pushNotifications: false } }, 'the gateway does not offer what it refuses');
});

t.test('HTTP+JSON callers too: a REST SendMessage with a push config reaches the remote with the gateway’s webhook; updates reach the local agent', async (t) => {
  const { upstream, receiver, rpcUrl } = await rig(t);
  const res = await request(`${rpcUrl}/message:send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ message: message('task build it'), configuration: { returnImmediately: true, taskPushNotificationConfig: localConfig(receiver.url) } }),
  });
  t.equal(res.statusCode, 200);
  t.ok(((await res.body.json()) as { task?: unknown }).task, 'the task came back');
  const seen = remoteSaw(upstream);
  for (const secret of [receiver.url, LOCAL_AUTH, LOCAL_TOKEN]) t.notOk(seen.includes(secret), 'the remote (JSON-RPC, transcoded) never saw them');
  const received = await receiver.waitFor(5);
  t.ok(received.every((r) => r.headers.authorization === `Bearer ${LOCAL_AUTH}` && r.headers['x-a2a-notification-token'] === LOCAL_TOKEN), 'delivered by the gateway, with the caller’s credentials');
});

t.test('HTTP+JSON callers without server.push: PUSH_NOT_ENABLED as HTTP 400 FAILED_PRECONDITION; nothing reaches the remote', async (t) => {
  const { upstream, receiver, rpcUrl } = await rig(t, null);
  const res = await request(`${rpcUrl}/tasks/task-x/pushNotificationConfigs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ taskId: 'task-x', ...localConfig(receiver.url) }),
  });
  t.equal(res.statusCode, 400);
  t.match(await res.body.json(), { error: { status: 'FAILED_PRECONDITION', details: [{ reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED' }, { reason: 'PUSH_NOT_ENABLED' }] } });
  t.equal(upstream.requests.filter((r) => r.method === 'POST').length, 0, 'no call reached the remote (binding: auto may read its card)');
});

t.test('JSON-RPC caller → HTTP+JSON remote (transcoded): create and get show the caller its own config; the update is delivered', async (t) => {
  const remote = await startSdkRestUpstream();
  const receiver = await startReceiver();
  const gw = await startGateway(
    `server:\n  logLevel: warn\n${await pushYaml()}remotes:\n  rest: { url: '${remote.url}', agentCardUrl: '${remote.url}/.well-known/agent-card.json', binding: http+json, allowPrivateNetwork: true }\n`,
    { env: KEYS },
  );
  t.teardown(async () => {
    await remote.close();
    await gw.close();
    await receiver.close();
  });
  const rpcUrl = `${gw.url}/remotes/rest`;
  const started = await rpc(rpcUrl, rpcRequest('SendMessage', 1, { message: message('wait for it'), configuration: { returnImmediately: true } }), V1);
  const taskId = (started.json.result as { task: { id: string } }).task.id;
  const mine = { taskId, id: 'cfg-r', ...localConfig(receiver.url) };
  const created = await rpc(rpcUrl, rpcRequest('CreateTaskPushNotificationConfig', 2, mine), V1);
  t.same(created.json.result, mine, 'create shows the caller its own');
  const got = await rpc(rpcUrl, rpcRequest('GetTaskPushNotificationConfig', 3, { taskId, id: 'cfg-r' }), V1);
  t.same(got.json.result, mine, 'get too');
  await rpc(rpcUrl, rpcRequest('CancelTask', 4, { id: taskId }), V1);
  const [canceled] = await receiver.waitFor(1);
  t.equal(stateOf(canceled!.body), 'TASK_STATE_CANCELED');
  t.equal(canceled!.headers['x-a2a-notification-token'], LOCAL_TOKEN, 'delivered by the gateway');
});

t.test('across the version bridge: a 0.3 caller’s message/send with a push config to a 1.0-only remote; updates delivered as 0.3, set/get restored', async (t) => {
  const upstream = await startSdkUpstream({ stepDelayMs: 20 });
  const receiver = await startReceiver();
  const gw = await startGateway(`server:\n  logLevel: warn\n${await pushYaml()}remotes:\n  sdk: { url: '${upstream.url}', allowPrivateNetwork: true, versions: ['1.0'] }\n`, { env: KEYS });
  t.teardown(async () => {
    await upstream.close();
    await gw.close();
    await receiver.close();
  });
  const rpcUrl = `${gw.url}/remotes/sdk`;
  const V03 = { 'a2a-version': '0.3' };
  const reply = await rpc(rpcUrl, rpcRequest('message/send', 1, {
    message: { kind: 'message', messageId: 'mb', role: 'user', parts: [{ kind: 'text', text: 'task across' }] },
    configuration: { blocking: false, pushNotificationConfig: { url: receiver.url, token: LOCAL_TOKEN, authentication: { schemes: ['Bearer'], credentials: LOCAL_AUTH } } },
  }), V03);
  const task = reply.json.result as { kind: string; id: string };
  t.equal(task.kind, 'task', 'a 0.3 Task for the 0.3 caller');
  t.match(upstream.requests.at(-1), { headers: { 'a2a-version': '1.0' } }, 'the remote was spoken to in 1.0');
  const received = await receiver.waitFor(5);
  t.same(received.map((r) => (JSON.parse(r.body) as { kind: string }).kind), ['task', 'status-update', 'artifact-update', 'status-update', 'status-update'], 'the remote’s 1.0 pushes delivered as 0.3');
  t.ok(received.every((r) => r.headers.authorization === `Bearer ${LOCAL_AUTH}` && r.headers['content-type'] === 'application/json'));

  const mine = { url: receiver.url, token: LOCAL_TOKEN, authentication: { schemes: ['Bearer'], credentials: LOCAL_AUTH }, id: 'cb' };
  const set = await rpc(rpcUrl, rpcRequest('tasks/pushNotificationConfig/set', 2, { taskId: task.id, pushNotificationConfig: mine }), V03);
  t.same(set.json.result, { taskId: task.id, pushNotificationConfig: mine }, 'set shows the 0.3 caller its own, in 0.3');
  const got = await rpc(rpcUrl, rpcRequest('tasks/pushNotificationConfig/get', 3, { id: task.id, pushNotificationConfigId: 'cb' }), V03);
  t.same(got.json.result, { taskId: task.id, pushNotificationConfig: mine }, 'get too');
  const seen = remoteSaw(upstream);
  for (const secret of [receiver.url, LOCAL_AUTH, LOCAL_TOKEN]) t.notOk(seen.includes(secret), 'the remote never saw them');
});
