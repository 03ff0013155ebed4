/**
 * HTTP+JSON through the running gateway, end to end with real parts: the
 * @a2a-js/sdk REST client, the gateway as users start it, and a real
 * @a2a-js/sdk server as the remote — every operation, streams included, for
 * each caller/remote pair: REST → REST, REST → JSON-RPC, JSON-RPC → REST;
 * and a remote that answers a streaming call with a single result.
 */
import t, { type Test } from 'tap';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { createServer } from 'node:http';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';
import { cardFor, collect, loopbackOnlyFetch, userMessage } from '../support/sdk-client.js';
import { startSdkRestUpstream } from '../support/sdk-rest-upstream.js';
import { startSdkUpstream } from '../support/sdk-upstream.js';
import { newKey, pushYaml } from '../support/push-kit.js';

type Transport = 'rest' | 'jsonrpc';

/** Every URL the SDK client asked for, so a test can show which binding the client really spoke. */
const requestedUrls: string[] = [];
const recordingFetch: typeof fetch = (input, init) => {
  requestedUrls.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  return loopbackOnlyFetch(input, init);
};

async function clientThroughCard(baseUrl: string, transport: Transport): Promise<Client> {
  // Only the transport under test: ClientFactoryOptions.createFrom(default, ...) would add the default JSON-RPC
  // transport too, and the client would take whichever interface the card lists first.
  const factory = new ClientFactory({
    transports: [transport === 'rest' ? new RestTransportFactory({ fetchImpl: recordingFetch }) : new JsonRpcTransportFactory({ fetchImpl: recordingFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: loopbackOnlyFetch }),
    clientConfig: { polling: true },
  });
  return factory.createFromUrl(baseUrl);
}

// Push notifications on (push configs go through the gateway's webhook); the round trip registers https://hooks.example/x.
const PUSH_ENV = { PUSH_KEYS: newKey() };
const push = () => pushYaml("    allowedTargets: [loopback, 'https://hooks.example']\n");

function gatewayYaml(url: string, binding: string, cardUrl: string, pushLines = '', extra = ''): string {
  return `
server:
  host: 127.0.0.1
  port: 0
${pushLines}remotes:
  agent:
    url: ${url}
    agentCardUrl: ${cardUrl}
    binding: ${binding}
    allowPrivateNetwork: true
${extra}`;
}

async function roundTrip(t: Test, client: Client, gw: RunningGateway, label: string): Promise<void> {
  requestedUrls.length = 0;
  const sent = await client.sendMessage(userMessage('hello'));
  t.match(sent, { parts: [{ content: { value: /hello/ } }] }, `${label}: SendMessage echo`);

  const task = await client.sendMessage(userMessage('task one'));
  const taskId = (task as { id: string }).id;
  t.ok(taskId, `${label}: SendMessage made a task`);
  t.match(await client.getTask({ tenant: '', id: taskId, historyLength: 1 }), { id: taskId }, `${label}: GetTask`);
  const page = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 10, pageToken: '', historyLength: 0, statusTimestampAfter: undefined, includeArtifacts: false });
  t.ok(page.tasks.some((x) => x.id === taskId), `${label}: ListTasks`);

  const events = await collect(client.sendMessageStream(userMessage('task streamed')));
  t.ok(events.length >= 2, `${label}: SendStreamingMessage events`);

  const waiting = await client.sendMessage(userMessage('wait here'));
  const waitId = (waiting as { id: string }).id;
  const config = await client.createTaskPushNotificationConfig({ tenant: '', id: 'cfg1', taskId: waitId, url: 'https://hooks.example/x', token: 'tok', authentication: undefined });
  t.match(config, { id: 'cfg1', taskId: waitId }, `${label}: CreateTaskPushNotificationConfig`);
  t.match(await client.getTaskPushNotificationConfig({ tenant: '', taskId: waitId, id: 'cfg1' }), { id: 'cfg1' }, `${label}: GetTaskPushNotificationConfig`);
  const configs = await client.listTaskPushNotificationConfig({ tenant: '', taskId: waitId, pageSize: 0, pageToken: '' });
  t.equal(configs.configs.length, 1, `${label}: ListTaskPushNotificationConfigs`);
  await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: waitId, id: 'cfg1' });
  t.pass(`${label}: DeleteTaskPushNotificationConfig`);

  // SubscribeToTask on a task that waits: the first event is the task; canceling it ends the stream.
  const subscribed: unknown[] = [];
  let canceled: unknown;
  for await (const event of client.resubscribeTask({ tenant: '', id: waitId })) {
    subscribed.push(event);
    if (subscribed.length === 1) canceled = await client.cancelTask({ tenant: '', id: waitId, metadata: undefined });
  }
  t.ok(subscribed.length >= 2, `${label}: SubscribeToTask events until the task ended`);
  t.match(canceled, { id: waitId }, `${label}: CancelTask`);

  const extended = await client.getAgentCard();
  t.match(extended, { name: /extended/ }, `${label}: GetExtendedAgentCard`);
  const urls = (extended.supportedInterfaces ?? []).map((i) => i.url);
  t.ok(urls.length > 0 && urls.every((u) => u.startsWith(gw.url)), `${label}: the extended card points at the gateway`);

  const missing = await client.getTask({ tenant: '', id: 'no-such-task', historyLength: 0 }).catch((err: unknown) => err as Error & { statusCode?: number });
  t.equal((missing as Error).name, 'TaskNotFoundError', `${label}: a remote's typed error stays typed`);

  const calls = gw.logs.filter((l) => l.msg === 'call').map((l) => l.call as Record<string, unknown>);
  t.ok(calls.length >= 10, `${label}: one log line per call`);
  const restPaths = requestedUrls.filter((u) => /\/message:(send|stream)$/.test(u));
  if (label.startsWith('rest')) t.ok(restPaths.length >= 3, `${label}: the SDK client really spoke HTTP+JSON to the gateway`);
  else t.equal(restPaths.length, 0, `${label}: the SDK client spoke JSON-RPC to the gateway`);
}

t.test('REST caller → REST remote (binding: http+json), through the gateway card', async (t) => {
  const remote = await startSdkRestUpstream({ extendedCard: true });
  t.teardown(() => remote.close());
  const gw = await startGateway(gatewayYaml(remote.url, 'http+json', `${remote.url}/.well-known/agent-card.json`, await push()), { env: PUSH_ENV });
  t.teardown(() => gw.close());
  const card = (await (await fetch(`${gw.url}/remotes/agent/.well-known/agent-card.json`)).json()) as { supportedInterfaces: unknown[] };
  t.same(card.supportedInterfaces, [
    { url: `${gw.url}/remotes/agent`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    { url: `${gw.url}/remotes/agent/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
  ], 'the remote\'s HTTP+JSON interface, rewritten; JSON-RPC advertised (binding: http+json transcodes it)');
  const client = await clientThroughCard(`${gw.url}/remotes/agent/`, 'rest');
  await roundTrip(t, client, gw, 'rest→rest');
});

t.test('REST caller → JSON-RPC remote (binding: auto, no HTTP+JSON on the card): transcoded', async (t) => {
  const remote = await startSdkUpstream({ extendedCard: (card) => ({ ...card, name: `${card.name} (extended)` }) });
  t.teardown(() => remote.close());
  const gw = await startGateway(gatewayYaml(remote.url, 'auto', remote.cardUrl, await push()), { env: PUSH_ENV });
  t.teardown(() => gw.close());
  const card = (await (await fetch(`${gw.url}/remotes/agent/.well-known/agent-card.json`)).json()) as { supportedInterfaces: unknown[] };
  t.same(card.supportedInterfaces, [
    { url: `${gw.url}/remotes/agent/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: `${gw.url}/remotes/agent`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ], 'the remote\'s JSON-RPC interface, and HTTP+JSON advertised after it');
  const client = await clientThroughCard(`${gw.url}/remotes/agent/`, 'rest');
  await roundTrip(t, client, gw, 'rest→jsonrpc');
  t.ok(remote.requests.every((r) => r.method === 'POST' && JSON.parse(r.body).jsonrpc === '2.0' || r.method === 'GET'), 'the remote saw JSON-RPC only');
});

t.test('JSON-RPC caller → REST remote (binding: http+json): transcoded', async (t) => {
  const remote = await startSdkRestUpstream({ extendedCard: true });
  t.teardown(() => remote.close());
  const gw = await startGateway(gatewayYaml(remote.url, 'http+json', `${remote.url}/.well-known/agent-card.json`, await push()), { env: PUSH_ENV });
  t.teardown(() => gw.close());
  const client = await clientThroughCard(`${gw.url}/remotes/agent/`, 'jsonrpc');
  await roundTrip(t, client, gw, 'jsonrpc→rest');
});

t.test('a JSON-RPC remote that answers SendStreamingMessage with a single result (no stream): the SDK REST client reads it as a one-event stream', async (t) => {
  const single = '{"message":{"messageId":"r1","contextId":"c1","role":"ROLE_AGENT","parts":[{"text":"done at once"}]}}';
  const remote = createServer(async (req, res) => {
    const body = JSON.parse((await readBody(req)).toString('utf8')) as { id: unknown };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":${single}}`);
  });
  const tracker = trackConnections(remote);
  const port = await listenOnLoopback(remote);
  t.teardown(() => closeServer(remote, tracker));
  const gw = await startGateway(gatewayYaml(`http://127.0.0.1:${port}/`, 'jsonrpc', `http://127.0.0.1:${port}/card.json`));
  t.teardown(() => gw.close());
  const card = { ...cardFor(`${gw.url}/remotes/agent`), supportedInterfaces: [{ url: `${gw.url}/remotes/agent`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' }] };
  const transport = await new RestTransportFactory({ fetchImpl: loopbackOnlyFetch }).create(`${gw.url}/remotes/agent`, card);
  const events = await collect(transport.sendMessageStream(userMessage('now')));
  t.equal(events.length, 1, 'one event');
  t.match(events[0], { payload: { $case: 'message', value: { messageId: 'r1' } } }, 'the remote\'s single result');
  // The same remote, called by a JSON-RPC caller: the one result envelope, as the JSON-RPC path always passed it on.
  const rpcReply = await fetch(`${gw.url}/remotes/agent/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'SendStreamingMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } } }),
  });
  t.match(rpcReply.headers.get('content-type'), /^application\/json/);
  t.same(await rpcReply.json(), { jsonrpc: '2.0', id: 9, result: JSON.parse(single) });
});
