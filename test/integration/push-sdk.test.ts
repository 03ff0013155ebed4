/**
 * Push notifications with real parts: an @a2a-js/sdk 1.3 server with push
 * notifications on (its DefaultPushNotificationSender, or the legacy-aware
 * one for 0.3 configs) pushes to the gateway's webhook listener, which
 * delivers to a local webhook receiver.
 *
 * The gateway's call path is not wired to the push modules yet: each test
 * applies the outbound rewrite (rewritePushRequest) and the reply restore
 * (restorePushReply) itself to the JSON-RPC calls it sends the SDK server,
 * as the wiring will. The lead's wiring test will do the same through the
 * gateway.
 */
import t from 'tap';
import { bridgeParams } from '../../src/a2a/bridge/index.js';
import { OPERATIONS, type OperationName, type ProtocolGeneration } from '../../src/a2a/operations.js';
import type { A2ACall } from '../../src/core/call.js';
import { rewritePushRequest } from '../../src/push/outbound.js';
import { restorePushReply } from '../../src/push/reply.js';
import { callOf, pushSettings, startPush, startReceiver } from '../support/push-kit.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';
import { delay, rawRequest } from '../support/servers.js';

// The SDK's sender logs every push with its URL: keep the test output readable.
console.info = () => undefined;

const LOCAL_AUTH = 'local-agent-secret';
const LOCAL_TOKEN = 'caller-token-123';

async function rpc(upstream: SdkUpstream, generation: ProtocolGeneration, method: string, paramsJson: string): Promise<unknown> {
  const res = await fetch(upstream.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': generation },
    body: `{"jsonrpc":"2.0","id":1,"method":${JSON.stringify(method)},"params":${paramsJson}}`,
  });
  const reply = (await res.json()) as { result?: unknown; error?: unknown };
  if (reply.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
  return reply.result;
}

/** What the wiring will do: the outbound rewrite, then (if the remote speaks the other generation) the version bridge. */
function outbound(call: A2ACall, settings: Parameters<typeof rewritePushRequest>[1]['push'], remoteGeneration: ProtocolGeneration = call.generation): { method: string; paramsJson: string } {
  const r = rewritePushRequest(call, { push: settings, nowMs: Date.now(), remoteGeneration });
  if (r.kind !== 'rewritten') throw new Error(`not rewritten: ${JSON.stringify(r)}`);
  const bridged = bridgeParams(call.operation, call.generation, remoteGeneration, r.call.params);
  if (!bridged.ok) throw new Error(bridged.problem);
  return { method: call.operation.jsonrpc[remoteGeneration]!, paramsJson: JSON.stringify(bridged.value) };
}

function restore(name: OperationName, generation: ProtocolGeneration, value: unknown, settings: Parameters<typeof restorePushReply>[2]): unknown {
  const r = restorePushReply({ remote: 'weather', operation: OPERATIONS[name], generation }, { kind: 'result', json: JSON.stringify(value), value }, settings);
  if (r.kind !== 'restored') throw new Error(`not restored: ${JSON.stringify(r)}`);
  return r.outcome.value;
}

const stateOf = (body: string): string => {
  const v = JSON.parse(body) as Record<string, { status?: { state?: string } }>;
  return v.task?.status?.state ?? v.statusUpdate?.status?.state ?? (v.artifactUpdate ? 'artifact' : (v as { kind?: string }).kind ?? '?');
};

t.test('a long task pushed by an SDK server: every update arrives once, in order, clean, with the local agent’s own credentials', async (t) => {
  const push = await startPush(pushSettings());
  const receiver = await startReceiver();
  const upstream = await startSdkUpstream({ stepDelayMs: 20 });
  t.teardown(async () => {
    await upstream.close();
    await push.close();
    await receiver.close();
  });
  const call = callOf('SendMessage', '1.0', {
    message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'task build it' }] },
    configuration: { returnImmediately: true, taskPushNotificationConfig: { url: receiver.url, token: LOCAL_TOKEN, authentication: { scheme: 'Bearer', credentials: LOCAL_AUTH } } },
  });
  const sent = outbound(call, push.settings);
  for (const secret of [receiver.url, LOCAL_AUTH, LOCAL_TOKEN]) t.notOk(sent.paramsJson.includes(secret), 'the remote never learns the local target or its credentials');
  const minted = (JSON.parse(sent.paramsJson) as { configuration: { taskPushNotificationConfig: { url: string; token: string } } }).configuration.taskPushNotificationConfig;

  await rpc(upstream, '1.0', sent.method, sent.paramsJson);
  const received = await receiver.waitFor(5);
  await delay(300); // nothing more comes: no update twice
  t.same(received.map((r) => stateOf(r.body)), ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  for (const r of received) {
    t.equal(r.method, 'POST');
    t.equal(r.url, '/hooks/a2a', "delivered to the local agent's own URL");
    t.equal(r.headers.authorization, `Bearer ${LOCAL_AUTH}`, 'with its own authentication');
    t.equal(r.headers['x-a2a-notification-token'], LOCAL_TOKEN, 'and its own token');
    t.equal(r.headers['content-type'], 'application/a2a+json');
    t.notOk(r.body.includes(minted.token) || JSON.stringify(r.headers).includes(minted.token), "the gateway's credential never reaches the local agent");
  }
  t.equal(await push.count('a2a_egress_push_received_total', { remote: 'weather', outcome: 'accepted' }), 5);
  t.equal(await push.count('a2a_egress_push_deliveries_total', { remote: 'weather', outcome: 'delivered' }), 5);
  t.ok(push.logs.some((l) => l.msg === 'push' && l.outcome === 'accepted'), 'each push logged with its outcome');

  // A redelivery of the same event (at-least-once senders retry): acknowledged, not delivered again.
  const replay = await rawRequest(minted.url, { body: received[2]!.body, headers: { 'content-type': 'application/a2a+json', authorization: `Bearer ${minted.token}` } });
  t.equal(replay.status, 200);
  await delay(200);
  t.equal(receiver.received.length, 5, 'still five');
  t.equal(await push.count('a2a_egress_push_received_total', { remote: 'weather', outcome: 'duplicate' }), 1);
});

t.test('CreateTaskPushNotificationConfig on a waiting task: get and list show the caller its own config; cancel is pushed', async (t) => {
  const push = await startPush(pushSettings());
  const receiver = await startReceiver();
  const upstream = await startSdkUpstream();
  t.teardown(async () => {
    await upstream.close();
    await push.close();
    await receiver.close();
  });
  const task = (await rpc(upstream, '1.0', 'SendMessage', JSON.stringify({ message: { messageId: 'w1', role: 'ROLE_USER', parts: [{ text: 'wait for it' }] }, configuration: { returnImmediately: true } }))) as { task: { id: string } };
  const taskId = task.task.id;
  const mine = { taskId, id: 'cfg-1', url: receiver.url, token: LOCAL_TOKEN, authentication: { scheme: 'Bearer', credentials: LOCAL_AUTH } };
  const create = outbound(callOf('CreateTaskPushNotificationConfig', '1.0', mine), push.settings);
  const created = await rpc(upstream, '1.0', create.method, create.paramsJson);
  t.match(created, { url: /^http:\/\/127\.0\.0\.1:\d+\/push\// }, 'the remote holds the gateway webhook');
  t.same(restore('CreateTaskPushNotificationConfig', '1.0', created, push.settings), mine, 'the create reply shows the caller its own');
  const got = await rpc(upstream, '1.0', 'GetTaskPushNotificationConfig', JSON.stringify({ taskId, id: 'cfg-1' }));
  t.same(restore('GetTaskPushNotificationConfig', '1.0', got, push.settings), mine);
  const listed = await rpc(upstream, '1.0', 'ListTaskPushNotificationConfigs', JSON.stringify({ taskId }));
  t.same(restore('ListTaskPushNotificationConfigs', '1.0', listed, push.settings), { configs: [mine] }, 'ProtoJSON leaves the empty page token out');

  await rpc(upstream, '1.0', 'CancelTask', JSON.stringify({ id: taskId }));
  const received = await receiver.waitFor(1);
  await delay(200);
  t.equal(received.length, 1);
  t.equal(stateOf(received[0]!.body), 'TASK_STATE_CANCELED');
  t.equal(received[0]!.headers.authorization, `Bearer ${LOCAL_AUTH}`);
});

t.test('A2A 0.3 on both sides: an SDK server with its 0.3 compat layer pushes 0.3 Tasks, delivered as 0.3', async (t) => {
  const push = await startPush(pushSettings());
  const receiver = await startReceiver();
  const upstream = await startSdkUpstream({ legacyCompat: true, stepDelayMs: 20 });
  t.teardown(async () => {
    await upstream.close();
    await push.close();
    await receiver.close();
  });
  const call = callOf('SendMessage', '0.3', {
    message: { kind: 'message', messageId: 'm03', role: 'user', parts: [{ kind: 'text', text: 'task old style' }] },
    configuration: { blocking: false, pushNotificationConfig: { url: receiver.url, token: LOCAL_TOKEN, authentication: { schemes: ['Bearer'], credentials: LOCAL_AUTH } } },
  });
  const sent = outbound(call, push.settings);
  t.equal(sent.method, 'message/send');
  await rpc(upstream, '0.3', sent.method, sent.paramsJson);
  const received = await receiver.waitFor(5);
  await delay(300);
  t.equal(received.length, 5);
  for (const r of received) {
    const v = JSON.parse(r.body) as { kind: string; id: string };
    t.equal(v.kind, 'task', 'a 0.3 Task, as the SDK sends to 0.3 webhooks');
    t.equal(r.headers['content-type'], 'application/json');
    t.equal(r.headers.authorization, `Bearer ${LOCAL_AUTH}`);
  }
  t.equal((JSON.parse(received.at(-1)!.body) as { status: { state: string } }).status.state, 'completed');
});

t.test('a 0.3 local agent and a 1.0 remote: the remote pushes 1.0, the local agent gets 0.3 (version bridge on the way in)', async (t) => {
  const push = await startPush(pushSettings());
  const receiver = await startReceiver();
  const upstream = await startSdkUpstream({ stepDelayMs: 20 });
  t.teardown(async () => {
    await upstream.close();
    await push.close();
    await receiver.close();
  });
  const call = callOf('SendMessage', '0.3', {
    message: { kind: 'message', messageId: 'mx', role: 'user', parts: [{ kind: 'text', text: 'task across' }] },
    configuration: { blocking: false, pushNotificationConfig: { url: receiver.url, authentication: { schemes: ['Bearer'], credentials: LOCAL_AUTH } } },
  });
  const sent = outbound(call, push.settings, '1.0');
  t.equal(sent.method, 'SendMessage');
  await rpc(upstream, '1.0', sent.method, sent.paramsJson);
  const received = await receiver.waitFor(5);
  const kinds = received.map((r) => (JSON.parse(r.body) as { kind: string }).kind);
  t.same(kinds, ['task', 'status-update', 'artifact-update', 'status-update', 'status-update']);
  t.equal((JSON.parse(received.at(-1)!.body) as { status: { state: string } }).status.state, 'completed');
  t.ok(received.every((r) => r.headers['content-type'] === 'application/json'));
});
