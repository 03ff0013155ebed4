/**
 * Every A2AService method, end to end between real @a2a-js/sdk peers:
 * the SDK gRPC client → the gateway's gRPC listener → A2ACall → the gateway's
 * gRPC client → the SDK gRPC server (agent: test/support/sdk-agent.ts) →
 * Outcome → listener → SDK client. No policy in between (that is the wiring's).
 */
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import type { Task } from '@a2a-js/sdk';
import type { A2ACall } from '../../src/core/call.js';
import type { CallHandler } from '../../src/bindings/grpc/contracts.js';
import { grpcClientFor, sdkGrpcClient, startHarness, startSdkGrpcUpstream } from '../support/grpc-peers.js';
import { ARTIFACT_TEXT, textOf } from '../support/sdk-agent.js';
import { cancelTask, collect, eventKinds, getTask, isTask, replyText, resubscribe, sendText, streamText, taskIdOf } from '../support/sdk-client.js';

const upstream = await startSdkGrpcUpstream({ stepDelayMs: 5, extendedCard: true });
const client = grpcClientFor(upstream.target);
const calls: A2ACall[] = [];
// Records each internal call, then forwards it: the harness the pipeline will replace.
const recording: CallHandler = {
  unary: (call, signal) => {
    calls.push(call);
    return client.unary(call, signal);
  },
  stream: (call, sink) => {
    calls.push(call);
    return client.stream(call, sink);
  },
};
const harness = await startHarness(recording, { forwardHeadersOf: () => ['x-trace-me'] });
const sdk = await sdkGrpcClient(harness.target);
t.teardown(async () => {
  client.close();
  await harness.close();
  await upstream.close();
});

t.test('SendMessage: a message reply', async (t) => {
  const reply = await sendText(sdk, 'hello there');
  t.notOk(isTask(reply));
  t.equal(replyText(reply), 'echo: hello there');
  const call = calls.at(-1)!;
  t.equal(call.operation.name, 'SendMessage');
  t.equal(call.generation, '1.0');
  t.equal(call.caller.binding, 'grpc');
  t.same(JSON.parse(call.paramsJson), call.params, 'paramsJson is the ProtoJSON of the request');
  t.match(call.params, { message: { role: 'ROLE_USER', parts: [{ text: 'hello there', mediaType: 'text/plain' }] } });
});

t.test('SendMessage: a task reply, then GetTask, ListTasks', async (t) => {
  const reply = await sendText(sdk, 'task build it');
  t.ok(isTask(reply));
  const task = reply as Task;
  t.equal(task.status?.state, 6 - 3, 'COMPLETED (3)');
  const got = await getTask(sdk, task.id);
  t.equal(got.id, task.id);
  t.equal(textOf(got.artifacts[0] ? { parts: got.artifacts[0].parts } as never : undefined), ARTIFACT_TEXT);
  const listed = await sdk.listTasks({ tenant: '', contextId: task.contextId, status: 0, pageSize: 10, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: false });
  t.same(listed.tasks.map((x) => x.id), [task.id]);
  t.equal(calls.at(-1)!.operation.name, 'ListTasks');
});

t.test('SendStreamingMessage: every event in order', async (t) => {
  const events = await streamText(sdk, 'task stream it');
  t.same(eventKinds(events), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate', 'statusUpdate']);
  const last = events.at(-1)!.payload;
  t.equal(last?.$case === 'statusUpdate' ? last.value.status?.state : undefined, 3);
});

t.test('CancelTask and SubscribeToTask on a waiting task', async (t) => {
  const stream = sdk.sendMessageStream({ tenant: '', message: { messageId: 'm-wait', contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: 'wait here' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] }, configuration: undefined, metadata: undefined });
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
});

t.test('push notification configs: create, get, list, delete', async (t) => {
  const task = (await sendText(sdk, 'task push')) as Task;
  const created = await sdk.createTaskPushNotificationConfig({ tenant: '', id: 'cfg-1', taskId: task.id, url: 'https://hooks.example.com/a2a', token: 'tok', authentication: undefined });
  t.equal(created.id, 'cfg-1');
  t.equal(created.url, 'https://hooks.example.com/a2a');
  const got = await sdk.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
  t.equal(got.token, 'tok');
  const listed = await sdk.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
  t.same(listed.configs.map((c) => c.id), ['cfg-1']);
  await sdk.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'cfg-1' });
  t.equal(calls.at(-1)!.operation.name, 'DeleteTaskPushNotificationConfig');
  const after = await sdk.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
  t.same(after.configs, []);
});

t.test('GetExtendedAgentCard', async (t) => {
  // The SDK client asks for the extended card when the card it was built from says there is one.
  const withExtended = await sdkGrpcClient(harness.target, upstream.card);
  const card = await withExtended.getAgentCard();
  t.equal(calls.at(-1)!.operation.name, 'GetExtendedAgentCard');
  t.equal(card.description, 'the extended card');
  t.equal(card.supportedInterfaces[0]?.protocolBinding, 'GRPC');
});

t.test('A2A errors keep their type and status through the gateway', async (t) => {
  const err = await getTask(sdk, 'no-such-task').catch((e: unknown) => e);
  t.match(err, { name: 'TaskNotFoundError', status: grpc.status.NOT_FOUND });
  t.match((err as Error).message, /Task not found/);
  const notCancelable = await cancelTask(sdk, ((await sendText(sdk, 'task done')) as Task).id).catch((e: unknown) => e);
  t.match(notCancelable, { name: 'TaskNotCancelableError', status: grpc.status.FAILED_PRECONDITION });
});

t.test('service parameters and allowlisted metadata reach the remote; nothing else does', async (t) => {
  const metadata = { 'a2a-extensions': 'https://example.com/ext/a/v1', 'x-trace-me': 'yes', 'x-secret': 'no' };
  await sendText(sdk, 'hi', { serviceParameters: metadata });
  const call = calls.at(-1)!;
  t.equal(call.service.a2aVersion, '1.0', 'the SDK sends a2a-version as metadata');
  t.equal(upstream.received.at(-1)!.get('a2a-version')[0], '1.0');
  t.equal(call.service.extensions, 'https://example.com/ext/a/v1');
  t.same(call.service.forwarded, { 'x-trace-me': 'yes' });
  const seen = upstream.received.at(-1)!.getMap();
  t.equal(seen['a2a-extensions'], 'https://example.com/ext/a/v1');
  t.equal(seen['x-trace-me'], 'yes');
  t.equal(seen['x-secret'], undefined);
  t.equal(seen['x-request-id'], call.caller.requestId);
});

t.test('one HTTP/2 connection carries many calls', async (t) => {
  await Promise.all(Array.from({ length: 20 }, (_, i) => sendText(sdk, `parallel ${i}`)));
  t.ok(client.connections >= 1 && client.connections <= 2, `connections: ${client.connections}`);
});
