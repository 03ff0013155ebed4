/**
 * gRPC through the running gateway, end to end with real @a2a-js/sdk peers:
 * the SDK gRPC client starts from the card the gateway serves (its GRPC
 * interface points at the remote's own gRPC listener), and every A2AService
 * method reaches the SDK gRPC server through the gateway's policy: admission,
 * credentials as metadata, redaction, the per-call log line and metrics.
 * The shared listener names the remote in metadata.
 */
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import type { Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { startSdkGrpcUpstream } from '../support/grpc-peers.js';
import { ARTIFACT_TEXT, textOf } from '../support/sdk-agent.js';
import { cancelTask, collect, eventKinds, getTask, isTask, replyText, resubscribe, sendText, streamText, taskIdOf } from '../support/sdk-client.js';
import { sdkGrpcClientFromBaseUrl, sdkGrpcClientOf, serveCard, startGrpcGateway } from '../support/grpc-gateway.js';
import { freePort, newKey } from '../support/push-kit.js';

const SECRET = 'grpc-remote-token-0123456789';
const upstream = await startSdkGrpcUpstream({ stepDelayMs: 5, extendedCard: true });
// A gRPC server has no well-known URL: the remote's card is served over HTTP beside it.
const cardHost = await serveCard(() => upstream.card);
// A remote whose card offers gRPC first, then JSON-RPC on its url's origin (and a gRPC endpoint on another host).
const bothHost: { url: string; close(): Promise<void> } = await serveCard(() => ({
  ...upstream.card,
  supportedInterfaces: [
    { url: upstream.target, protocolBinding: 'GRPC', protocolVersion: '1.0' },
    { url: `${bothHost.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'elsewhere.example.com:443', protocolBinding: 'GRPC', protocolVersion: '1.0' },
  ],
}));
// A remote whose card offers JSON-RPC only: nothing for the gateway to call over gRPC.
const jsonOnlyHost = await serveCard(() => ({ ...upstream.card, supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] }));
// Push notifications on: gRPC callers' push configs go through the gateway's webhook too.
const pushPort = await freePort();
const gw = await startGrpcGateway(
  `
server:
  host: 127.0.0.1
  port: 0
  grpc: { port: 0 }
  push: { port: ${pushPort}, publicBaseUrl: 'http://127.0.0.1:${pushPort}/push', keys: { env: PUSH_KEYS }, allowedTargets: [loopback, 'https://hooks.example.com'] }
remotes:
  agent:
    url: ${cardHost.url}/
    allowPrivateNetwork: true
    auth: { type: bearer, tokenEnv: GRPC_REMOTE_TOKEN }
    forwardHeaders: [x-trace-me]
    grpc: { listen: { port: 0 } }
  limited:
    url: ${cardHost.url}/
    allowPrivateNetwork: true
    methods: [GetTask]
    rateLimit: { perSecond: 0.001, burst: 1 }
    grpc: { target: "${upstream.target}" }
  jsonOnly:
    url: ${jsonOnlyHost.url}/
    binding: grpc
    allowPrivateNetwork: true
  both:
    url: ${bothHost.url}/a2a
    allowPrivateNetwork: true
    grpc: { listen: { port: 0, publicTarget: "grpc.gateway.example:7443" } }
`,
  { GRPC_REMOTE_TOKEN: SECRET, PUSH_KEYS: newKey() },
);
t.teardown(async () => {
  await gw.close();
  await cardHost.close();
  await jsonOnlyHost.close();
  await bothHost.close();
  await upstream.close();
});

let sdk: Client;

t.test('the listeners are bound and logged; the card points gRPC callers at the remote’s own listener', async (t) => {
  t.match(gw.grpc.shared, /^127\.0\.0\.1:\d+$/);
  t.match(gw.grpc.remotes.agent, /^127\.0\.0\.1:\d+$/);
  t.not(gw.grpc.remotes.agent, gw.grpc.shared);
  const bound = gw.logs.filter((l) => l.msg === 'gRPC listener bound');
  t.same(bound.map((l) => l.grpcAddress).sort(), [gw.grpc.shared, gw.grpc.remotes.agent, gw.grpc.remotes.both].sort());
  const res = await fetch(`${gw.url}/remotes/agent/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
  t.equal(res.status, 200);
  const card = (await res.json()) as { supportedInterfaces: { url: string; protocolBinding: string }[] };
  t.same(
    card.supportedInterfaces,
    [
      { url: gw.grpc.remotes.agent, protocolBinding: 'GRPC', protocolVersion: '1.0' },
      { url: `${gw.url}/remotes/agent`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ],
    'the remote’s gRPC interface, rewritten to the gateway; HTTP+JSON advertised (binding auto: HTTP+JSON callers reach its gRPC)',
  );
  t.notMatch(JSON.stringify(card), upstream.target, 'the remote’s own endpoint is not shown');
  sdk = await sdkGrpcClientFromBaseUrl(`${gw.url}/remotes/agent/`);
});

t.test('a card with gRPC and JSON-RPC: both kept in the remote’s order, rewritten; another host’s gRPC endpoint dropped', async (t) => {
  const res = await fetch(`${gw.url}/remotes/both/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
  const card = (await res.json()) as { supportedInterfaces: { url: string; protocolBinding: string }[] };
  t.same(
    card.supportedInterfaces.map((i) => [i.protocolBinding, i.url]),
    [
      ['GRPC', 'grpc.gateway.example:7443'],
      ['JSONRPC', `${gw.url}/remotes/both/`],
      ['HTTP+JSON', `${gw.url}/remotes/both`],
    ],
    'publicTarget names the gRPC listener; HTTP+JSON is advertised (advertiseBindings)',
  );
  t.notMatch(JSON.stringify(card), /elsewhere/);
  t.notMatch(JSON.stringify(card), upstream.target, 'the remote’s own gRPC endpoint is not shown');
});

t.test('SendMessage: a message reply; the call is logged and counted like a JSON-RPC call', async (t) => {
  const reply = await sendText(sdk, 'hello there');
  t.notOk(isTask(reply));
  t.equal(replyText(reply), 'echo: hello there');
  const line = gw.calls().at(-1)!;
  t.match(line, { remote: 'agent', binding: 'grpc', method: 'SendMessage', outcome: 'ok' });
  t.ok((line.bytesIn as number) > 0 && (line.bytesOut as number) > 0, 'bytes in and out');
  t.type(line.totalMs, 'number');
  t.type(line.upstreamMs, 'number');
  t.match(await gw.metrics(), /a2a_egress_calls_total\{remote="agent",method="SendMessage",outcome="ok"\} 1/);
});

t.test('credentials travel as metadata; the caller’s own metadata only as allowed', async (t) => {
  await sendText(sdk, 'hi', { serviceParameters: { 'x-trace-me': 'yes', 'x-secret': 'no', authorization: 'Bearer caller-token', 'x-request-id': 'grpc-to-grpc-7' } });
  const seen = upstream.received.at(-1)!.getMap();
  t.equal(seen['x-request-id'], 'grpc-to-grpc-7', 'the caller’s x-request-id, also in the call line');
  t.equal(gw.logs.filter((l) => l.msg === 'call').at(-1)!.requestId, 'grpc-to-grpc-7');
  t.equal(seen.authorization, `Bearer ${SECRET}`, 'the remote’s credential, not the caller’s');
  t.equal(seen['x-trace-me'], 'yes');
  t.equal(seen['x-secret'], undefined);
  t.equal(seen['a2a-version'], '1.0');
});

t.test('the remote’s credential is redacted from what it sends back', async (t) => {
  const reply = await sendText(sdk, `say ${SECRET}`);
  t.notMatch(replyText(reply), SECRET);
  t.match(replyText(reply), /\[redacted\]/);
  t.match(gw.calls().at(-1)!, { redactions: 1, outcome: 'ok' });
  t.match(await gw.metrics(), /a2a_egress_redactions_total\{remote="agent",path="reply"\} 1/);
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
  t.match(gw.calls().at(-1)!, { method: 'SendStreamingMessage', outcome: 'ok', events: 5 });
  t.match(await gw.metrics(), /a2a_egress_stream_events_total\{remote="agent"\} 5/);
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
  t.ok(gw.calls().some((c) => c.method === 'SubscribeToTask'));
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
  // A target outside server.push.allowedTargets never reaches the remote.
  await t.rejects(sdk.createTaskPushNotificationConfig({ tenant: '', id: 'cfg-2', taskId: task.id, url: 'https://elsewhere.example.net/a2a', token: 'tok', authentication: undefined }));
  t.match(gw.calls().at(-1)!, { method: 'CreateTaskPushNotificationConfig', outcome: 'PUSH_TARGET_NOT_ALLOWED' });
});

t.test('GetExtendedAgentCard: rewritten like the public card', async (t) => {
  const withExtended = await sdkGrpcClientFromBaseUrl(`${gw.url}/remotes/agent/`);
  const card = await withExtended.getAgentCard();
  t.match(gw.calls().at(-1)!, { method: 'GetExtendedAgentCard', outcome: 'ok' });
  t.equal(card.description, 'the extended card');
  t.same(card.supportedInterfaces.map((i) => [i.url, i.protocolBinding]), [[gw.grpc.remotes.agent, 'GRPC'], [`${gw.url}/remotes/agent`, 'HTTP+JSON']]);
});

t.test('A2A errors keep their type and status', async (t) => {
  const err = await getTask(sdk, 'no-such-task').catch((e: unknown) => e);
  t.match(err, { name: 'TaskNotFoundError', status: grpc.status.NOT_FOUND });
  t.match(gw.calls().at(-1)!, { method: 'GetTask', outcome: 'REMOTE_ERROR' });
});

t.test('the shared listener: the remote named in metadata', async (t) => {
  const shared = await sdkGrpcClientOf(gw.grpc.shared!, upstream.card);
  const reply = await sendText(shared, 'via shared', { serviceParameters: { 'a2a-egress-remote': 'agent' } });
  t.equal(replyText(reply), 'echo: via shared');
  const unnamed = await sendText(shared, 'nobody').catch((e: unknown) => e);
  t.match(unnamed, { status: grpc.status.NOT_FOUND, message: /no remote with that name/ });
  t.match(gw.calls().at(-1)!, { remote: 'unknown', binding: 'grpc', outcome: 'UNKNOWN_REMOTE' });
  const unknown = await sendText(shared, 'x', { serviceParameters: { 'a2a-egress-remote': 'nope' } }).catch((e: unknown) => e);
  t.match(unknown, { status: grpc.status.NOT_FOUND });
});

t.test('the method allowlist and the rate limit hold for gRPC callers', async (t) => {
  const shared = await sdkGrpcClientOf(gw.grpc.shared!, upstream.card);
  const named = { serviceParameters: { 'a2a-egress-remote': 'limited' } };
  const refused = await sendText(shared, 'x', named).catch((e: unknown) => e);
  t.match(refused, { status: grpc.status.PERMISSION_DENIED, message: /method is not allowed/ }, 'the gateway’s own refusal (status-codes.ts), not the remote’s UNIMPLEMENTED');
  t.match(gw.calls().at(-1)!, { remote: 'limited', outcome: 'METHOD_NOT_ALLOWED' });
  const first = await getTask(shared, 'none', named).catch((e: unknown) => e);
  t.match(first, { name: 'TaskNotFoundError' }, 'the one token of the bucket: the call reaches the remote');
  const limited = await getTask(shared, 'none', named).catch((e: unknown) => e);
  t.match(limited, { status: grpc.status.RESOURCE_EXHAUSTED, message: /rate limit/ });
  t.match(gw.calls().at(-1)!, { remote: 'limited', method: 'GetTask', outcome: 'RATE_LIMITED' });
  t.match(await gw.metrics(), /a2a_egress_calls_total\{remote="limited",method="GetTask",outcome="RATE_LIMITED"\} 1/);
});

t.test('binding: grpc and no gRPC endpoint (none configured, none in its card) is NO_USABLE_INTERFACE, not transcoded', async (t) => {
  const shared = await sdkGrpcClientOf(gw.grpc.shared!, upstream.card);
  const err = await sendText(shared, 'x', { serviceParameters: { 'a2a-egress-remote': 'jsonOnly' } }).catch((e: unknown) => e);
  t.match(err, { name: 'InvalidAgentResponseError', status: grpc.status.INTERNAL, message: /no interface the gateway can carry: its agent card lists no gRPC interface/ });
  t.match(gw.calls().at(-1)!, { remote: 'jsonOnly', outcome: 'NO_USABLE_INTERFACE' });
});

t.test('a reload: a remote added is reachable on the shared listener; listener changes need a restart', async (t) => {
  const { parseConfig } = await import('../../src/loader/load.js');
  const next = parseConfig(
    `
server: { host: 127.0.0.1, port: 0, grpc: { port: 1 } }
remotes:
  agent:
    url: ${cardHost.url}/
    allowPrivateNetwork: true
    auth: { type: bearer, tokenEnv: GRPC_REMOTE_TOKEN }
    grpc: { listen: { port: 0 } }
  added:
    url: ${cardHost.url}/
    allowPrivateNetwork: true
    grpc: { target: "${upstream.target}", listen: { port: 0 } }
`,
    'next.yaml',
  );
  const { restartNeeded } = gw.gateway.reload(next);
  // The next file has no server.push: the webhook listener stays as started until a restart.
  t.same([...restartNeeded].sort(), ['remotes.added.grpc.listen', 'remotes.both.grpc.listen', 'server.grpc', 'server.push']);
  const shared = await sdkGrpcClientOf(gw.grpc.shared!, upstream.card);
  const reply = await sendText(shared, 'to the new one', { serviceParameters: { 'a2a-egress-remote': 'added' } });
  t.equal(replyText(reply), 'echo: to the new one');
  const gone = await sendText(shared, 'x', { serviceParameters: { 'a2a-egress-remote': 'limited' } }).catch((e: unknown) => e);
  t.match(gone, { status: grpc.status.NOT_FOUND }, 'a removed remote is gone');
});
