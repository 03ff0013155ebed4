/**
 * JSON-RPC and HTTP+JSON callers transcoded to a gRPC remote, end to end with
 * real @a2a-js/sdk peers: the SDK JSON-RPC and REST clients start from the
 * card the gateway serves for a gRPC-only SDK server (`binding: grpc`: the
 * gateway advertises its JSON-RPC and HTTP+JSON endpoints), and every method
 * and both streams reach the remote through the gateway's gRPC call handler.
 * `binding: auto`: HTTP+JSON callers go to gRPC when it is the first
 * interface the card lists; JSON-RPC callers keep JSON-RPC at url.
 */
import t, { type Test } from 'tap';
import type { Task } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { startSdkGrpcUpstream } from '../support/grpc-peers.js';
import { serveCard, startGrpcGateway } from '../support/grpc-gateway.js';
import { freePort, newKey } from '../support/push-kit.js';
import { collect, eventKinds, loopbackOnlyFetch, replyText, userMessage } from '../support/sdk-client.js';

const SECRET = 'grpc-remote-token-for-transcode-0123';
const upstream = await startSdkGrpcUpstream({ stepDelayMs: 5, extendedCard: true });
const cardHost = await serveCard(() => upstream.card);
const pushPort = await freePort();
const gw = await startGrpcGateway(
  `
server:
  host: 127.0.0.1
  port: 0
  grpc: { port: 0 }
  # Push notifications on: push configs go through the gateway's webhook.
  push: { port: ${pushPort}, publicBaseUrl: 'http://127.0.0.1:${pushPort}/push', keys: { env: PUSH_KEYS }, allowedTargets: [loopback, 'https://hooks.example'] }
remotes:
  viaGrpc:
    url: ${cardHost.url}/
    binding: grpc
    allowPrivateNetwork: true
    auth: { type: bearer, tokenEnv: GRPC_REMOTE_TOKEN }
  auto:
    url: ${cardHost.url}/
    allowPrivateNetwork: true
  old:
    url: ${cardHost.url}/
    binding: grpc
    allowPrivateNetwork: true
`,
  { GRPC_REMOTE_TOKEN: SECRET, PUSH_KEYS: newKey() },
);
t.teardown(async () => {
  await gw.close();
  await cardHost.close();
  await upstream.close();
});

type Transport = 'jsonrpc' | 'rest';

function clientThroughCard(baseUrl: string, transport: Transport): Promise<Client> {
  // Only the one transport: the client must use the card's interface of that binding.
  const factory = new ClientFactory({
    transports: [transport === 'rest' ? new RestTransportFactory({ fetchImpl: loopbackOnlyFetch }) : new JsonRpcTransportFactory({ fetchImpl: loopbackOnlyFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopbackOnlyFetch }),
  });
  return factory.createFromUrl(baseUrl);
}

async function everyMethod(t: Test, client: Client, label: string): Promise<void> {
  const sent = await client.sendMessage(userMessage('hello'));
  t.equal(replyText(sent), 'echo: hello', `${label}: SendMessage`);
  const metadata = upstream.received.at(-1)!.getMap();
  t.equal(metadata.authorization, `Bearer ${SECRET}`, `${label}: the remote’s credential as metadata`);

  const task = (await client.sendMessage(userMessage('task one'))) as Task;
  t.ok(task.id, `${label}: a task`);
  t.match(await client.getTask({ tenant: '', id: task.id, historyLength: 1 }), { id: task.id }, `${label}: GetTask`);
  const page = await client.listTasks({ tenant: '', contextId: task.contextId, status: 0, pageSize: 10, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: false });
  t.same(page.tasks.map((x) => x.id), [task.id], `${label}: ListTasks`);

  const events = await collect(client.sendMessageStream(userMessage('task streamed')));
  t.same(eventKinds(events), ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate', 'statusUpdate'], `${label}: SendStreamingMessage, every event in order`);

  const stream = client.sendMessageStream(userMessage('wait here'));
  const first = await stream.next();
  const waitId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
  t.ok(waitId, `${label}: a waiting task`);
  const config = await client.createTaskPushNotificationConfig({ tenant: '', id: 'cfg1', taskId: waitId, url: 'https://hooks.example/x', token: 'tok', authentication: undefined });
  t.match(config, { id: 'cfg1', taskId: waitId }, `${label}: CreateTaskPushNotificationConfig`);
  t.match(await client.getTaskPushNotificationConfig({ tenant: '', taskId: waitId, id: 'cfg1' }), { id: 'cfg1' }, `${label}: GetTaskPushNotificationConfig`);
  const configs = await client.listTaskPushNotificationConfig({ tenant: '', taskId: waitId, pageSize: 0, pageToken: '' });
  t.same(configs.configs.map((c) => c.id), ['cfg1'], `${label}: ListTaskPushNotificationConfigs`);
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: waitId, id: 'cfg1' });
  t.pass(`${label}: DeleteTaskPushNotificationConfig`);

  const subscribed: unknown[] = [];
  let canceled: Task | undefined;
  for await (const event of client.resubscribeTask({ tenant: '', id: waitId })) {
    subscribed.push(event);
    if (subscribed.length === 1) canceled = await client.cancelTask({ tenant: '', id: waitId, metadata: undefined });
  }
  t.ok(subscribed.length >= 2, `${label}: SubscribeToTask until the task ended`);
  t.equal(canceled?.status?.state, 5, `${label}: CancelTask`);
  await stream.return(undefined);

  const extended = await client.getAgentCard();
  t.equal(extended.description, 'the extended card', `${label}: GetExtendedAgentCard`);
  const urls = extended.supportedInterfaces.map((i) => i.url);
  t.ok(urls.length > 0 && urls.every((u) => u.startsWith(gw.url) || u === gw.grpc.shared), `${label}: the extended card points at the gateway`);
  t.notMatch(JSON.stringify(extended), upstream.target, `${label}: not at the remote`);

  const missing = await client.getTask({ tenant: '', id: 'no-such-task', historyLength: 0 }).catch((err: unknown) => err as Error);
  t.equal((missing as Error).name, 'TaskNotFoundError', `${label}: the remote’s typed error stays typed`);
}

t.test('binding: grpc — the card advertises the gateway’s JSON-RPC and HTTP+JSON endpoints for a gRPC-only remote', async (t) => {
  const res = await fetch(`${gw.url}/remotes/viaGrpc/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
  t.equal(res.status, 200);
  const card = (await res.json()) as { supportedInterfaces: { url: string; protocolBinding: string }[] };
  t.same(
    card.supportedInterfaces.map((i) => [i.protocolBinding, i.url]),
    [
      ['JSONRPC', `${gw.url}/remotes/viaGrpc/`],
      ['HTTP+JSON', `${gw.url}/remotes/viaGrpc`],
    ],
  );
  t.notMatch(JSON.stringify(card), upstream.target);
});

t.test('the SDK JSON-RPC client → gRPC remote: every method and both streams', async (t) => {
  const client = await clientThroughCard(`${gw.url}/remotes/viaGrpc/`, 'jsonrpc');
  await everyMethod(t, client, 'jsonrpc→grpc');
  const lines = gw.calls().filter((c) => c.remote === 'viaGrpc');
  t.ok(lines.length >= 12, 'one log line per call');
  t.ok(lines.every((c) => c.binding === undefined), 'logged as JSON-RPC calls (the caller’s binding)');
  t.ok(lines.some((c) => c.method === 'SendStreamingMessage' && c.events === 5 && c.outcome === 'ok'), 'a stream’s events counted');
});

t.test('the SDK REST client → gRPC remote: every method and both streams', async (t) => {
  const client = await clientThroughCard(`${gw.url}/remotes/viaGrpc/`, 'rest');
  await everyMethod(t, client, 'rest→grpc');
  const restLines = gw.calls().filter((c) => c.remote === "viaGrpc" && c.binding === "http+json");
  t.ok(restLines.length >= 12, 'logged as HTTP+JSON calls');
});

t.test('binding: auto — HTTP+JSON callers take the card’s first interface (gRPC); JSON-RPC callers keep JSON-RPC at url', async (t) => {
  const rest = await clientThroughCard(`${gw.url}/remotes/auto/`, 'rest');
  const before = upstream.received.length;
  t.equal(replyText(await rest.sendMessage(userMessage('auto rest'))), 'echo: auto rest');
  t.equal(upstream.received.length, before + 1, 'reached the gRPC remote');
  const res = await fetch(`${gw.url}/remotes/auto/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x' } }),
  });
  const body = (await res.json()) as { error?: { code: number } };
  t.ok(body.error, 'JSON-RPC at url (a card server, no JSON-RPC there): an error, not the gRPC remote');
  t.equal(upstream.received.length, before + 1, 'the gRPC remote was not called');
});

t.test('an A2A 0.3 JSON-RPC caller cannot reach a gRPC remote: a typed refusal', async (t) => {
  const res = await fetch(`${gw.url}/remotes/old/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '0.3' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { id: 'x' } }),
  });
  const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
  t.equal(body.id, 8);
  t.match(body.error?.message, /0\.3 callers cannot reach a gRPC remote/);
  t.match(gw.calls().at(-1)!, { remote: 'old', outcome: 'UNSUPPORTED_BINDING_VERSION' });
});

t.test('JSON-RPC caller, gRPC stream refused before any event: one JSON-RPC error, not an empty stream', async (t) => {
  const res = await fetch(`${gw.url}/remotes/viaGrpc/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'SubscribeToTask', params: { id: 'no-such-task' } }),
  });
  t.match(res.headers.get('content-type'), /application\/json/);
  const body = (await res.json()) as { id: number; error?: { code: number } };
  t.equal(body.id, 9);
  t.equal(body.error?.code, -32001, 'TaskNotFound');
});
