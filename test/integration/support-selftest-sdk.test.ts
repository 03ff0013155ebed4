/**
 * The SDK upstream and the SDK client helpers, exercised directly (no
 * gateway): a real @a2a-js/sdk 1.3 client against a real @a2a-js/sdk 1.3
 * server, plus the loopback-only redirect guard against the hostile upstream.
 */
import { createServer } from 'node:http';
import { TaskState } from '@a2a-js/sdk';
import t from 'tap';
import { startHostileUpstream } from '../support/hostile-upstream.js';
import { ARTIFACT_TEXT, modeOf } from '../support/sdk-agent.js';
import {
  cancelTask,
  clientForJsonRpcUrl,
  clientFromBaseUrl,
  collect,
  eventKinds,
  getTask,
  isTask,
  NonLoopbackRedirectError,
  replyText,
  resubscribe,
  sendText,
  streamText,
  taskIdOf,
  userMessage,
} from '../support/sdk-client.js';
import { listenOnLoopback, rawRequest, readBody } from '../support/servers.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';

let up: SdkUpstream;
t.before(async () => {
  up = await startSdkUpstream();
});
t.teardown(() => up.close());

t.test('modes come from the first word of the text', async (t) => {
  t.equal(modeOf('hello'), 'echo');
  t.equal(modeOf('  Task do it'), 'task');
  t.equal(modeOf('wait'), 'wait');
  t.equal(modeOf('fail now'), 'fail');
  t.equal(modeOf('tasks are not task'), 'echo');
});

t.test('the card is served beside the endpoint and at the root, advertising the JSON-RPC URL', async (t) => {
  t.match(up.url, /^http:\/\/127\.0\.0\.1:\d+\/a2a\/$/);
  t.equal(up.cardUrl, `${up.url}.well-known/agent-card.json`);
  for (const url of [up.cardUrl, up.rootCardUrl]) {
    const card = JSON.parse((await rawRequest(url)).body.toString());
    t.same(card.supportedInterfaces, [{ url: up.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }], url);
    t.equal(card.capabilities.streaming, true);
  }
});

t.test('send: an echo Message; the SDK client sent A2A-Version 1.0', async (t) => {
  const client = await clientFromBaseUrl(up.url);
  const before = up.requests.length;
  const reply = await sendText(client, 'hello upstream');
  t.notOk(isTask(reply));
  t.equal(replyText(reply), 'echo: hello upstream');
  const seen = up.requests.slice(before);
  t.equal(seen.length, 1);
  t.equal(seen[0]?.headers['a2a-version'], '1.0');
  t.equal(JSON.parse(seen[0]?.body ?? '{}').method, 'SendMessage');
});

t.test('stream: task, working, artifact, working, completed; then getTask sees the result', async (t) => {
  const client = await clientFromBaseUrl(up.url);
  const events = await streamText(client, 'task build it');
  t.same(eventKinds(events), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate', 'statusUpdate']);
  const id = taskIdOf(events[0]!);
  t.ok(id);
  t.ok(events.every((e) => taskIdOf(e) === id), 'every event names the same task');
  const task = await getTask(client, id!);
  t.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.equal(replyText(task), 'done: task build it');
  t.equal(task.artifacts[0]?.parts[0]?.content?.$case === 'text' && task.artifacts[0].parts[0].content.value, ARTIFACT_TEXT);
});

t.test('blocking send of a task returns it completed; fail ends FAILED', async (t) => {
  const client = await clientFromBaseUrl(up.url);
  const done = await sendText(client, 'task quick');
  t.ok(isTask(done) && done.status?.state === TaskState.TASK_STATE_COMPLETED);
  const failed = await sendText(client, 'fail please');
  t.ok(isTask(failed) && failed.status?.state === TaskState.TASK_STATE_FAILED);
});

t.test('wait + resubscribe + cancel: the re-attached stream ends CANCELED', async (t) => {
  const client = await clientFromBaseUrl(up.url, { polling: true });
  const started = await sendText(client, 'wait for me');
  t.ok(isTask(started));
  const id = isTask(started) ? started.id : '';
  const stream = resubscribe(client, id);
  const first = await stream.next();
  t.equal(first.value && first.value.payload?.$case, 'task', 'resubscribe starts with the current task');
  const canceled = await cancelTask(client, id);
  t.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
  const rest = await collect({ [Symbol.asyncIterator]: () => stream });
  const last = rest.at(-1)?.payload;
  t.ok(last?.$case === 'statusUpdate' && last.value.status?.state === TaskState.TASK_STATE_CANCELED);
  t.equal((await getTask(client, id)).status?.state, TaskState.TASK_STATE_CANCELED);
});

t.test('unknown task: the SDK raises its typed TaskNotFound error', async (t) => {
  const client = await clientFromBaseUrl(up.url);
  await t.rejects(getTask(client, 'no-such-task'), { name: 'TaskNotFoundError' });
});

t.test('push notification configs: create, get, list, delete; the webhook is called', async (t) => {
  const hits: string[] = [];
  const hook = createServer((req, res) => {
    void readBody(req).then((b) => {
      hits.push(b.toString());
      res.end();
    });
  });
  const port = await listenOnLoopback(hook);
  t.teardown(() => new Promise<void>((r) => hook.close(() => r())));
  const client = await clientFromBaseUrl(up.url, { polling: true });
  const task = await sendText(client, 'wait push');
  const taskId = isTask(task) ? task.id : '';
  const url = `http://127.0.0.1:${port}/hook`;
  await client.createTaskPushNotificationConfig({ tenant: '', id: 'c1', taskId, url, token: 'tok', authentication: undefined });
  t.equal((await client.getTaskPushNotificationConfig({ tenant: '', taskId, id: 'c1' })).url, url);
  const list = () => client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 10, pageToken: '' });
  t.equal((await list()).configs.length, 1);
  await cancelTask(client, taskId);
  const deadline = Date.now() + 1000;
  while (hits.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.match(hits[0], /TASK_STATE_CANCELED/);
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: 'c1' });
  t.equal((await list()).configs.length, 0);
});

t.test('clientForJsonRpcUrl talks to the endpoint without fetching a card', async (t) => {
  const before = up.requests.length;
  const client = await clientForJsonRpcUrl(up.url);
  t.equal(replyText(await sendText(client, 'no card')), 'echo: no card');
  t.same(up.requests.slice(before).map((r) => r.method), ['POST']);
});

t.test('streaming: false on the card makes the SDK fall back to one SendMessage', async (t) => {
  const plain = await startSdkUpstream({ streaming: false, path: '/other/agent' });
  t.teardown(() => plain.close());
  t.match(plain.url, /\/other\/agent\/$/);
  const client = await clientFromBaseUrl(plain.url);
  t.same(eventKinds(await streamText(client, 'task x')), ['task']);
  t.equal(JSON.parse(plain.requests.at(-1)?.body ?? '{}').method, 'SendMessage');
});

t.test('a bad JSON body gets the SDK-shaped parse error and is still recorded', async (t) => {
  const r = await rawRequest(up.url, { body: '{"jsonrpc":' });
  t.equal(r.status, 200);
  t.equal(JSON.parse(r.body.toString()).error.code, -32700);
  t.equal(up.requests.at(-1)?.body, '{"jsonrpc":');
});

t.test('loopbackOnlyFetch: a redirect off loopback is refused, a loopback one is followed', async (t) => {
  const hostile = await startHostileUpstream();
  t.teardown(() => hostile.close());
  const toMetadata = await clientFromBaseUrl(hostile.caseBaseUrl('redirect'));
  await t.rejects(sendText(toMetadata, 'hi'), NonLoopbackRedirectError);
  const toLoopback = await clientFromBaseUrl(hostile.caseBaseUrl('redirect-loopback'));
  t.equal(replyText(await sendText(toLoopback, 'hi')).length, 1024, 'the SDK followed the 307 to /ok');
  t.same(hostile.requests.slice(-2).map((r) => `${r.method} ${r.url}`), ['POST /redirect-loopback', 'POST /ok']);
  t.equal(JSON.parse(hostile.requests.at(-1)?.body ?? '{}').method, 'SendMessage', 'the body was kept');
});

t.test('userMessage builds a user-role message with the given ids', async (t) => {
  const m = userMessage('x', { taskId: 't1', contextId: 'c1' }).message;
  t.equal(m?.taskId, 't1');
  t.equal(m?.contextId, 'c1');
});

t.test('legacyCompat: 0.3 requests (no A2A-Version) are served; without it they get -32009', async (t) => {
  const legacy = await startSdkUpstream({ legacyCompat: true });
  t.teardown(() => legacy.close());
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 'l1',
    method: 'message/send',
    params: { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } },
  });
  const reply = JSON.parse((await rawRequest(legacy.url, { body })).body.toString());
  t.equal(reply.id, 'l1');
  t.same(reply.result.parts, [{ kind: 'text', text: 'echo: hi' }]);
  const card03 = JSON.parse((await rawRequest(legacy.cardUrl)).body.toString());
  t.equal(card03.url, legacy.url, 'a card request without A2A-Version gets the 0.3 card shape');
  const refused = JSON.parse((await rawRequest(up.url, { body })).body.toString());
  t.equal(refused.error.code, -32009);
  t.equal((await clientFromBaseUrl(legacy.url)).protocolVersion, '1.0', 'the 1.0 SDK client still picks the 1.0 interface');
});
