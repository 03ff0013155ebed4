/**
 * gRPC callers transcoded to HTTP remotes, end to end with real @a2a-js/sdk
 * peers: the SDK gRPC client starts from the card the gateway serves (the
 * gateway's gRPC listener advertised for a remote that has no gRPC itself),
 * and every A2AService method reaches an SDK JSON-RPC server (binding auto:
 * the card lists JSON-RPC only) and an SDK HTTP+JSON server (binding
 * http+json) through the call runner. Hostile JSON-RPC remotes become typed
 * gRPC statuses with bounded, fixed messages.
 */
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import type { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { jsonToBinary, SERVICE_PATH } from '../../src/bindings/grpc/proto-json.js';
import { startHostileUpstream } from '../support/hostile-upstream.js';
import { ARTIFACT_TEXT, textOf } from '../support/sdk-agent.js';
import { userMessage, cancelTask, collect, eventKinds, getTask, isTask, replyText, resubscribe, sendText, streamText, taskIdOf } from '../support/sdk-client.js';
import { startSdkRestUpstream } from '../support/sdk-rest-upstream.js';
import { startSdkUpstream } from '../support/sdk-upstream.js';
import { sdkGrpcClientFromBaseUrl, sdkGrpcClientOf, startGrpcGateway } from '../support/grpc-gateway.js';
import { freePort, newKey } from '../support/push-kit.js';

const jsonRpc = await startSdkUpstream({ stepDelayMs: 5, extendedCard: (card) => ({ ...card, description: 'the extended card' }) });
const rest = await startSdkRestUpstream({ extendedCard: true });
const hostile = await startHostileUpstream();
const pushPort = await freePort();
const gw = await startGrpcGateway(`
server:
  host: 127.0.0.1
  port: 0
  grpc: { port: 0 }
  # Push notifications on: push configs go through the gateway's webhook.
  push: { port: ${pushPort}, publicBaseUrl: 'http://127.0.0.1:${pushPort}/push', keys: { env: PUSH_KEYS }, allowedTargets: [loopback, 'https://hooks.example.com'] }
remotes:
  agent:
    url: ${jsonRpc.url}
    allowPrivateNetwork: true
    grpc: { listen: { port: 0 } }
  restAgent:
    url: ${rest.url}
    agentCardUrl: ${rest.url}/.well-known/agent-card.json
    binding: http+json
    allowPrivateNetwork: true
    grpc: { listen: { port: 0 } }
  quiet:
    url: ${jsonRpc.url}
    allowPrivateNetwork: true
    advertiseBindings: false
    grpc: { listen: { port: 0 } }
  fiveOk:
    url: ${jsonRpc.url}
    allowPrivateNetwork: true
    limits: { maxStreamEvents: 5 }
  fiveOver:
    url: ${jsonRpc.url}
    allowPrivateNetwork: true
    limits: { maxStreamEvents: 4 }
  html500:
    url: ${hostile.caseUrl('text-500')}
    binding: jsonrpc
    allowPrivateNetwork: true
  html502:
    url: ${hostile.caseUrl('html-502')}
    binding: jsonrpc
    allowPrivateNetwork: true
  brokenEvent:
    url: ${hostile.caseUrl('sse-garbage')}
    binding: jsonrpc
    allowPrivateNetwork: true
  errorEvent:
    url: ${hostile.caseUrl('sse-error-event')}
    binding: jsonrpc
    allowPrivateNetwork: true
`, { PUSH_KEYS: newKey() });
t.teardown(async () => {
  await gw.close();
  await jsonRpc.close();
  await rest.close();
  await hostile.close();
});

let sdk: Client;

t.test('the card of a JSON-RPC remote advertises the gateway’s gRPC listener (advertiseBindings), not without it', async (t) => {
  const res = await fetch(`${gw.url}/remotes/agent/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
  const card = (await res.json()) as { supportedInterfaces: { url: string; protocolBinding: string }[] };
  t.same(
    card.supportedInterfaces.map((i) => [i.protocolBinding, i.url]),
    [
      ['JSONRPC', `${gw.url}/remotes/agent/`],
      ['HTTP+JSON', `${gw.url}/remotes/agent`],
      ['GRPC', gw.grpc.remotes.agent],
    ],
  );
  const quiet = (await (await fetch(`${gw.url}/remotes/quiet/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json()) as typeof card;
  t.same(quiet.supportedInterfaces.map((i) => i.protocolBinding), ['JSONRPC'], 'advertiseBindings: false lists what the remote has');
  sdk = await sdkGrpcClientFromBaseUrl(`${gw.url}/remotes/agent/`);
});

t.test('SendMessage to a JSON-RPC remote: a message reply; logged as a gRPC call', async (t) => {
  const reply = await sendText(sdk, 'hello there');
  t.notOk(isTask(reply));
  t.equal(replyText(reply), 'echo: hello there');
  t.match(gw.calls().at(-1)!, { remote: 'agent', binding: 'grpc', method: 'SendMessage', outcome: 'ok', upstreamStatus: 200 });
  const sent = jsonRpc.requests.at(-1)!;
  t.match(JSON.parse(sent.body), { jsonrpc: '2.0', method: 'SendMessage', params: { message: { role: 'ROLE_USER' } } }, 'the remote got JSON-RPC 1.0');
  t.equal(sent.headers['a2a-version'], '1.0');
});

t.test('a task: SendMessage, GetTask, ListTasks', async (t) => {
  const task = (await sendText(sdk, 'task build it')) as Task;
  t.ok(isTask(task));
  t.equal(task.status?.state, 3, 'COMPLETED');
  const got = await getTask(sdk, task.id);
  t.equal(got.id, task.id);
  t.equal(textOf(got.artifacts[0] ? ({ parts: got.artifacts[0].parts } as never) : undefined), ARTIFACT_TEXT);
  const listed = await sdk.listTasks({ tenant: '', contextId: task.contextId, status: 0, pageSize: 10, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: false });
  t.same(listed.tasks.map((x) => x.id), [task.id]);
  t.match(gw.calls().at(-1)!, { method: 'ListTasks', outcome: 'ok' });
});

t.test('SendStreamingMessage: every event in order, counted', async (t) => {
  const events = await streamText(sdk, 'task stream it');
  t.same(eventKinds(events), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate', 'statusUpdate']);
  t.match(gw.calls().at(-1)!, { method: 'SendStreamingMessage', binding: 'grpc', outcome: 'ok', events: 5 });
  t.match(await gw.metrics(), /a2a_egress_open_streams\{remote="agent"\} 0/);
});

t.test('CancelTask and SubscribeToTask on a waiting task', async (t) => {
  const stream = sdk.sendMessageStream({
    tenant: '',
    message: { messageId: 'm-wait', contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: 'wait here' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: undefined,
    metadata: undefined,
  });
  const first = await stream.next();
  const taskId = taskIdOf(first.value!)!;
  t.ok(taskId);
  const resubscribed = resubscribe(sdk, taskId);
  const firstResub = await resubscribed.next();
  t.equal(taskIdOf(firstResub.value!), taskId, 'SubscribeToTask streams the task');
  const canceled = await cancelTask(sdk, taskId);
  t.equal(canceled.status?.state, 5, 'CANCELED');
  const rest = await collect({ [Symbol.asyncIterator]: () => resubscribed });
  t.ok(rest.some((e) => e.payload?.$case === 'statusUpdate' && e.payload.value.status?.state === 5), 'the cancel reaches the subscriber');
  await stream.return(undefined);
  t.ok(gw.calls().some((c) => c.method === 'SubscribeToTask' && c.binding === 'grpc'));
});

t.test('push notification configs: create, get, list, delete', async (t) => {
  const task = (await sendText(sdk, 'task push')) as Task;
  const created = await sdk.createTaskPushNotificationConfig({ tenant: '', id: 'cfg-1', taskId: task.id, url: 'https://hooks.example.com/a2a', token: 'tok', authentication: undefined });
  t.equal(created.id, 'cfg-1');
  const got = await sdk.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
  t.equal(got.url, 'https://hooks.example.com/a2a');
  const listed = await sdk.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
  t.same(listed.configs.map((c) => c.id), ['cfg-1']);
  await sdk.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
  t.match(gw.calls().at(-1)!, { method: 'DeleteTaskPushNotificationConfig', outcome: 'ok' });
  const after = await sdk.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
  t.same(after.configs, []);
});

t.test('GetExtendedAgentCard: rewritten, the gateway’s gRPC listener advertised', async (t) => {
  const card = await sdk.getAgentCard();
  t.match(gw.calls().at(-1)!, { method: 'GetExtendedAgentCard', outcome: 'ok' });
  t.equal(card.description, 'the extended card');
  t.same(card.supportedInterfaces.map((i) => i.protocolBinding), ['JSONRPC', 'HTTP+JSON', 'GRPC'], 'as the public card');
  t.equal(card.supportedInterfaces.at(-1)?.url, gw.grpc.remotes.agent);
  t.notMatch(JSON.stringify(card), jsonRpc.origin, 'the remote’s own endpoint is not shown');
});

t.test('A2A errors keep their type and gRPC status', async (t) => {
  const err = await getTask(sdk, 'no-such-task').catch((e: unknown) => e);
  t.match(err, { name: 'TaskNotFoundError', status: grpc.status.NOT_FOUND });
  t.match(gw.calls().at(-1)!, { method: 'GetTask', outcome: 'REMOTE_ERROR' });
  const done = (await sendText(sdk, 'task done')) as Task;
  const notCancelable = await cancelTask(sdk, done.id).catch((e: unknown) => e);
  t.match(notCancelable, { name: 'TaskNotCancelableError', status: grpc.status.FAILED_PRECONDITION });
});

t.test('an HTTP+JSON remote (binding http+json): unary, a task, a stream, an error', async (t) => {
  const client = await sdkGrpcClientFromBaseUrl(`${gw.url}/remotes/restAgent/`);
  t.equal(replyText(await sendText(client, 'over rest')), 'echo: over rest');
  const task = (await sendText(client, 'task build it')) as Task;
  t.equal((await getTask(client, task.id)).id, task.id);
  const events = await streamText(client, 'task stream it');
  t.same(eventKinds(events).slice(0, 1), ['task']);
  t.equal(events.at(-1)?.payload?.$case, 'statusUpdate');
  const err = await getTask(client, 'no-such-task').catch((e: unknown) => e);
  t.match(err, { name: 'TaskNotFoundError', status: grpc.status.NOT_FOUND });
  t.match(gw.calls().at(-1)!, { remote: 'restAgent', binding: 'grpc', method: 'GetTask', outcome: 'REMOTE_ERROR', upstreamStatus: 404 });
});

t.test('an unknown remote on the shared listener is NOT_FOUND before any upstream call', async (t) => {
  const shared = await sdkGrpcClientOf(gw.grpc.shared!, jsonRpc.card);
  const unknown = await sendText(shared, 'x', { serviceParameters: { 'a2a-egress-remote': 'nope' } }).catch((e: unknown) => e);
  t.match(unknown, { status: grpc.status.NOT_FOUND });
});

const shared = () => sdkGrpcClientOf(gw.grpc.shared!, jsonRpc.card);
const via = (remote: string) => ({ serviceParameters: { 'a2a-egress-remote': remote } });

t.test('a hostile JSON-RPC remote: HTML and stack traces become typed statuses with fixed, bounded messages', async (t) => {
  const client = await shared();
  for (const [remote, reason] of [
    ['html500', 'UPSTREAM_HTTP_ERROR'],
    ['html502', 'UPSTREAM_HTTP_ERROR'],
  ] as const) {
    const err = (await sendText(client, 'x', via(remote)).catch((e: unknown) => e)) as Error & { status?: number };
    t.ok(err instanceof Error, `${remote}: an error`);
    t.equal(err.status, grpc.status.INTERNAL, `${remote}: INTERNAL (status-map: a remote that answers with no A2A reply)`);
    t.ok(Buffer.byteLength(err.message) < 512, `${remote}: bounded message`);
    t.notMatch(err.message, /LEAKED|<html|at worker|stack/i, `${remote}: nothing of the remote’s body`);
    t.match(gw.calls().at(-1)!, { remote, binding: 'grpc', outcome: reason });
  }
});

t.test('a hostile stream: a broken event and an error event end the gRPC stream with one typed status', async (t) => {
  const client = await shared();
  const seen: string[] = [];
  const events: string[] = [];
  const broken = await (async () => {
    for await (const e of client.sendMessageStream(userMessage('x'), via('brokenEvent'))) events.push(e.payload?.$case ?? 'none');
  })().catch((e: unknown) => e);
  t.same(events, ['task'], 'the good event first, then the ending');
  t.ok(broken instanceof Error, 'the stream ends in an error');
  const err = broken as Error & { status?: number };
  t.equal(err.status, grpc.status.INTERNAL, 'INVALID_EVENT is INTERNAL');
  t.notMatch(err.message, /<html>/);
  t.ok(Buffer.byteLength(err.message) < 512);
  t.match(gw.calls().at(-1)!, { remote: 'brokenEvent', method: 'SendStreamingMessage', events: 2 });
  seen.push(String(gw.calls().at(-1)!.outcome));

  const errored = await collect(client.sendMessageStream(userMessage('x'), via('errorEvent'))).catch((e: unknown) => e);
  const err2 = errored as Error & { status?: number };
  t.ok(errored instanceof Error);
  t.equal(err2.status, grpc.status.INTERNAL, 'the remote’s -32603 is INTERNAL');
  t.notMatch(err2.message, /\u001b|\r|\n|Error: x/, 'the remote’s text sanitized (control characters gone), its stack member dropped');
  t.match(gw.calls().at(-1)!, { remote: 'errorEvent', outcome: 'REMOTE_ERROR' });
  seen.push(String(gw.calls().at(-1)!.outcome));
  t.same(seen, ['INVALID_EVENT', 'REMOTE_ERROR']);
});

/** A raw grpc-js unary call on the shared listener: the reply's response metadata and status. */
function rawUnary(remote: string, requestId: string | undefined): Promise<{ headers?: grpc.Metadata; error?: grpc.ServiceError }> {
  const client = new grpc.Client(gw.grpc.shared!, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('a2a-egress-remote', remote);
  if (requestId !== undefined) metadata.set('x-request-id', requestId);
  const raw = (b: Buffer): Buffer => b;
  const body = Buffer.from(jsonToBinary('GetTaskRequest', { id: 'no-such-task' }));
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    const call = client.makeUnaryRequest(`${SERVICE_PATH}GetTask`, raw, raw, body, metadata, {}, (error) => {
      client.close();
      resolve({ ...(headers ? { headers } : {}), ...(error ? { error } : {}) });
    });
    call.on('metadata', (m) => (headers = m));
  });
}

t.test('the caller’s x-request-id metadata: to the remote, in the log line, back as response metadata', async (t) => {
  const id = 'grpc-caller-req-0001';
  const { headers, error } = await rawUnary('agent', id);
  t.equal(error?.code, grpc.status.NOT_FOUND, 'the call went through (the remote’s TaskNotFound)');
  t.equal(jsonRpc.requests.at(-1)!.headers['x-request-id'], id, 'the remote got the caller’s id');
  t.equal(gw.logs.filter((l) => l.msg === 'call').at(-1)!.requestId, id, 'the call line carries it');
  t.same(headers?.get('x-request-id'), [id], 'and the caller gets it back');

  const odd = `bad id ${'x'.repeat(200)}`;
  const replaced = await rawUnary('agent', odd);
  const sent = jsonRpc.requests.at(-1)!.headers['x-request-id'];
  t.match(sent, /^[0-9a-f-]{36}$/, 'an id that is not short and plain is replaced by a UUID');
  t.same(replaced.headers?.get('x-request-id'), [sent]);

  const none = await rawUnary('agent', undefined);
  t.match(none.headers?.get('x-request-id')[0], /^[0-9a-f-]{36}$/, 'none given: a UUID');
});


t.test('stream bound maxStreamEvents through the relay: 5 events at 5 pass, at 4 the gRPC stream ends with one typed status', async (t) => {
  const client = await shared();
  const ok = await streamText(client, 'task stream it', via('fiveOk'));
  t.equal(ok.length, 5);
  t.match(gw.calls().at(-1)!, { remote: 'fiveOk', outcome: 'ok', events: 5 });
  const events: string[] = [];
  const err = await (async () => {
    for await (const e of client.sendMessageStream(userMessage('task stream it'), via('fiveOver'))) events.push(e.payload?.$case ?? 'none');
  })().catch((e: unknown) => e);
  t.equal(events.length, 4, 'the events within the bound');
  t.match(err, { status: grpc.status.INTERNAL, message: /more than 4 events/ }, 'the catalogue’s code and text (as for JSON-RPC callers)');
  t.match(gw.calls().at(-1)!, { remote: 'fiveOver', outcome: 'STREAM_TOO_MANY_EVENTS', events: 5 });
});

t.test('a gRPC caller that cancels a transcoded stream: the upstream stream is closed, logged CALLER_CLOSED', async (t) => {
  const client = await shared();
  const controller = new AbortController();
  const stream = client.sendMessageStream(userMessage('wait here'), { ...via('agent'), signal: controller.signal });
  const first = await stream.next();
  t.ok(taskIdOf(first.value!), 'the first event');
  controller.abort();
  await stream.next().catch(() => undefined);
  for (let i = 0; i < 50 && !/a2a_egress_open_streams\{remote="agent"\} 0/.test(await gw.metrics()); i++) await new Promise((r) => setTimeout(r, 20));
  t.match(await gw.metrics(), /a2a_egress_open_streams\{remote="agent"\} 0/, 'no stream left open');
  const line = gw.calls().filter((c) => c.remote === 'agent' && c.method === 'SendStreamingMessage').at(-1)!;
  t.equal(line.outcome, 'CALLER_CLOSED');
});
