/**
 * `limits.validateResults` (off by default) through the gateway: with it, a
 * result or stream event that does not match the A2A schema becomes -32006
 * INVALID_RESULT (the SDK's InvalidAgentResponseError); without it, results
 * pass as the remote sent them. A real SDK upstream behind a validating
 * gateway must see no false positive on any method.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { TaskState } from '@a2a-js/sdk';
import t from 'tap';
import { rpc, rpcRequest, reasonOf, startGateway, type RunningGateway } from '../support/gateway.js';
import { newKey, pushYaml } from '../support/push-kit.js';
import { cancelTask, clientForJsonRpcUrl, clientFromBaseUrl, eventKinds, getTask, isTask, replyText, sendText, streamText, taskIdOf, userMessage } from '../support/sdk-client.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';
import { isWrappedStreamError } from '../support/sdk-gateway-cases.js';

const message = { messageId: 'm1', contextId: 'c1', role: 'ROLE_AGENT', parts: [{ text: 'fine' }] };
const task = { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' } };
/** Just invalid: the same message without its required messageId. */
const { messageId: _dropped, ...messageWithoutId } = message;

const RESULTS: Record<string, unknown> = {
  '/valid': { message },
  '/invalid': { message: messageWithoutId },
};
const STREAMS: Record<string, unknown[]> = {
  '/stream-valid': [{ task }, { statusUpdate: { taskId: 't1', contextId: 'c1', status: { state: 'TASK_STATE_COMPLETED' } } }],
  // The second event's status update has no status.
  '/stream-invalid': [{ task }, { statusUpdate: { taskId: 't1', contextId: 'c1' } }],
};

async function startShapeUpstream(): Promise<{ origin: string; close(): Promise<void> }> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { id } = JSON.parse((await readBody(req)).toString('utf8')) as { id: unknown };
    const envelope = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });
    const events = STREAMS[req.url ?? ''];
    if (events) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(events.map((e) => `data: ${envelope(e)}\n\n`).join(''));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(envelope(RESULTS[req.url ?? '']));
  };
  const server = createServer((req, res) => void handle(req, res));
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return { origin: `http://127.0.0.1:${port}`, close: () => closeServer(server, tracker) };
}

let shapes: Awaited<ReturnType<typeof startShapeUpstream>>;
let sdk: SdkUpstream;
let gw: RunningGateway;
const strict = '    limits:\n      validateResults: true\n';

t.before(async () => {
  shapes = await startShapeUpstream();
  sdk = await startSdkUpstream();
  const remote = (name: string, url: string, extra = '') => `  ${name}:\n    url: ${url}\n    allowPrivateNetwork: true\n${extra}`;
  gw = await startGateway(
    [
      // Push notifications on: push configs go through the gateway's webhook.
      `server:\n  logLevel: warn\n${await pushYaml()}remotes:`,
      remote('strict-valid', `${shapes.origin}/valid`, strict),
      remote('strict-invalid', `${shapes.origin}/invalid`, strict),
      remote('lenient-invalid', `${shapes.origin}/invalid`),
      remote('strict-stream-valid', `${shapes.origin}/stream-valid`, strict),
      remote('strict-stream-invalid', `${shapes.origin}/stream-invalid`, strict),
      remote('lenient-stream-invalid', `${shapes.origin}/stream-invalid`),
      remote('sdk', sdk.url, strict),
    ].join('\n'),
    { env: { PUSH_KEYS: newKey() } },
  );
});
t.teardown(async () => {
  await gw?.close();
  await sdk?.close();
  await shapes?.close();
});

const client = (remote: string) => clientForJsonRpcUrl(`${gw.url}/remotes/${remote}/`);

t.test('unary: a just-valid result passes, a just-invalid one is -32006 INVALID_RESULT naming the path', async (t) => {
  const ok = await sendText(await client('strict-valid'), 'x');
  t.notOk(isTask(ok));
  await t.rejects(sendText(await client('strict-invalid'), 'x'), {
    name: 'InvalidAgentResponseError',
    message: 'remote sent a result that does not match the A2A schema: result.message.messageId is required',
  });
  const raw = await rpc(`${gw.url}/remotes/strict-invalid/`, rpcRequest('SendMessage', 'v1', { message: {} }));
  t.equal(raw.json.error?.code, -32006);
  t.equal(reasonOf(raw), 'INVALID_RESULT');
  t.equal(raw.json.id, 'v1');
});

t.test('off by default: the same invalid result passes as the remote sent it', async (t) => {
  const raw = await rpc(`${gw.url}/remotes/lenient-invalid/`, rpcRequest('SendMessage', 'v2', { message: {} }));
  t.same(raw.json.result, { message: messageWithoutId });
});

t.test('streams: each event is checked; the first invalid one ends the stream with -32006', async (t) => {
  t.same(eventKinds(await streamText(await client('strict-stream-valid'), 'x')), ['task', 'statusUpdate']);
  const c = await client('strict-stream-invalid');
  const seen: string[] = [];
  let thrown: unknown;
  try {
    for await (const e of c.sendMessageStream(userMessage('x'))) seen.push(e.payload?.$case ?? '');
  } catch (err) {
    thrown = err;
  }
  t.same(seen, ['task'], 'the valid first event got through');
  t.ok(isWrappedStreamError(thrown));
  t.equal((thrown as { cause?: Error }).cause?.name, 'InvalidAgentResponseError');
  const lenient = await streamText(await client('lenient-stream-invalid'), 'x');
  t.same(eventKinds(lenient), ['task', 'statusUpdate'], 'without validateResults both events pass');
});

t.test('a real SDK upstream behind a validating gateway: no false positive on any method', async (t) => {
  const c = await clientFromBaseUrl(`${gw.url}/remotes/sdk/`, { polling: true });
  t.equal(replyText(await sendText(c, 'hello')), 'echo: hello');
  const events = await streamText(c, 'task build it');
  t.equal(events.length, 5);
  const id = taskIdOf(events[0]!)!;
  t.equal((await getTask(c, id)).status?.state, TaskState.TASK_STATE_COMPLETED);
  const waiting = await sendText(c, 'wait a bit');
  const waitingId = isTask(waiting) ? waiting.id : '';
  const url = 'http://127.0.0.1:9/never-called';
  await c.createTaskPushNotificationConfig({ tenant: '', id: 'v1', taskId: waitingId, url, token: '', authentication: undefined });
  t.equal((await c.getTaskPushNotificationConfig({ tenant: '', taskId: waitingId, id: 'v1' })).url, url);
  t.equal((await c.listTaskPushNotificationConfig({ tenant: '', taskId: waitingId, pageSize: 5, pageToken: '' })).configs.length, 1);
  await c.deleteTaskPushNotificationConfig({ tenant: '', taskId: waitingId, id: 'v1' });
  t.equal((await cancelTask(c, waitingId)).status?.state, TaskState.TASK_STATE_CANCELED);
  const listed = await c.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined });
  t.ok(listed.tasks.length >= 2);
  const outcomes = gw.logs.filter((l) => l.msg === 'call' && (l.call as { remote: string }).remote === 'sdk').map((l) => (l.call as { outcome: string }).outcome);
  t.ok(outcomes.length >= 9);
  t.same([...new Set(outcomes)], ['ok'], 'every call through the validating gateway was ok');
});
