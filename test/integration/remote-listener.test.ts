/**
 * `remotes.<name>.listen`: a remote served at the root of a listener of its
 * own, exactly as under /remotes/<name>/ on the shared one (the same route
 * plugin mounted with the remote fixed by the listener): calls, cards and
 * every policy, with the card's URLs pointing at that listener. A real
 * @a2a-js/sdk client given only the listener's origin works unchanged.
 */
import { TaskState } from '@a2a-js/sdk';
import t from 'tap';
import { Agent, request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { reasonOf, rpc, rpcRequest } from '../support/gateway.js';
import { startOpsGateway, type OpsGateway } from '../support/ops-gateway.js';
import { clientFromBaseUrl, getTask, isTask, sendText, streamText } from '../support/sdk-client.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';

let sdk: SdkUpstream;
let gw: OpsGateway;

const yaml = (extraServer = '') => `
server:
  logLevel: warn
${extraServer}
remotes:
  sdk:
    url: ${sdk.url}
    allowPrivateNetwork: true
    listen: { port: 0 }
  narrow:
    url: ${sdk.url}
    allowPrivateNetwork: true
    methods: [GetTask]
    # 3: the card fetch in the first test takes one (card fetches on the remote's origin obey its rate limit).
    rateLimit: { perSecond: 0.001, burst: 3 }
    listen: { port: 0, publicBaseUrl: 'https://narrow.example/' }
`;

t.before(async () => {
  sdk = await startSdkUpstream({ extendedCard: (card) => ({ ...card, description: 'extended' }) });
  gw = await startOpsGateway(yaml());
});
t.teardown(async () => {
  await gw?.close();
  await sdk?.close();
});

const own = (name: string) => gw.remoteUrls[name]!;
const getJson = async (url: string) => {
  const res = await request(url);
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, any> };
};

t.test('the card at the listener\'s root names the listener; the shared form still names /remotes/<name>/', async (t) => {
  t.match(own('sdk'), /^http:\/\/127\.0\.0\.1:\d+$/, 'loopback by default');
  const atRoot = await getJson(`${own('sdk')}/.well-known/agent-card.json`);
  t.equal(atRoot.status, 200);
  t.same(atRoot.body.supportedInterfaces.map((i: { url: string }) => i.url), [`${own('sdk')}/`, own('sdk')], 'JSON-RPC at the root, HTTP+JSON at the root (advertised)');
  t.ok(atRoot.headers.etag && atRoot.headers['last-modified'] && atRoot.headers['cache-control'], 'the same caching headers');
  const legacyPath = await getJson(`${own('sdk')}/.well-known/agent.json`);
  t.same(legacyPath.body, atRoot.body, 'the 0.2-era path too');
  const shared = await getJson(`${gw.url}/remotes/sdk/.well-known/agent-card.json`);
  t.same(shared.body.supportedInterfaces.map((i: { url: string }) => i.url), [`${gw.url}/remotes/sdk/`, `${gw.url}/remotes/sdk`]);
  const named = await getJson(`${own('narrow')}/.well-known/agent-card.json`);
  t.same(named.body.supportedInterfaces.map((i: { url: string }) => i.url), ['https://narrow.example/', 'https://narrow.example'], 'listen.publicBaseUrl');
});

t.test('the extended card (GetExtendedAgentCard) names the listener too', async (t) => {
  const reply = await rpc(`${own('sdk')}/`, rpcRequest('GetExtendedAgentCard', 'x1', {}), { 'a2a-version': '1.0' });
  const card = reply.json.result as { description: string; supportedInterfaces: Array<{ url: string }> };
  t.equal(card.description, 'extended');
  t.same(card.supportedInterfaces.map((i) => i.url), [`${own('sdk')}/`, own('sdk')]);
});

t.test('a real @a2a-js/sdk client given only the listener\'s origin: send, stream, get', async (t) => {
  const client = await clientFromBaseUrl(`${own('sdk')}/`);
  const before = sdk.requests.length;
  const echo = await sendText(client, 'hello');
  t.notOk(isTask(echo));
  const events = await streamText(client, 'task please');
  t.ok(events.length >= 3, `${events.length} events`);
  const task = await sendText(client, 'task done');
  t.ok(isTask(task));
  const got = await getTask(client, isTask(task) ? task.id : '');
  t.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
  t.ok(sdk.requests.slice(before).every((r) => r.headers['user-agent']?.startsWith('a2a-egress/')), 'every call went through the gateway');
});

t.test('paths: / is the remote\'s URL, sub-paths map below it, unsafe paths are refused; another remote is never reachable', async (t) => {
  const call = rpcRequest('GetTask', 'p1', { id: 'none' });
  await rpc(`${own('sdk')}/`, call, { 'a2a-version': '1.0' });
  t.equal(sdk.requests.at(-1)?.url, new URL(sdk.url).pathname, 'POST / → the remote\'s own path');
  await rpc(`${own('sdk')}/v1/x`, call, { 'a2a-version': '1.0' });
  t.equal(sdk.requests.at(-1)?.url, `${new URL(sdk.url).pathname}v1/x`);
  await rpc(`${own('sdk')}/remotes/narrow`, call, { 'a2a-version': '1.0' });
  t.equal(sdk.requests.at(-1)?.url, `${new URL(sdk.url).pathname}remotes/narrow`, '/remotes/<other> is only a sub-path of this remote');
  const count = sdk.requests.length;
  const { Client } = await import('undici');
  const client = new Client(own('sdk'));
  t.teardown(() => client.close());
  for (const path of ['/a/../etc', '/%2e%2e/etc', '/a%2fb']) {
    const res = await client.request({ path, method: 'POST', body: JSON.stringify(call), headers: { 'content-type': 'application/json' } });
    t.match(await res.body.text(), /"reason":"INVALID_PATH"/, path);
  }
  t.equal(sdk.requests.length, count, 'nothing sent for unsafe paths');
});

t.test('policies hold on the listener as under /remotes/<name>/: the method allowlist, one rate bucket for both forms', async (t) => {
  const refused = await rpc(`${own('narrow')}/`, rpcRequest('SendMessage', 'n1', {}), { 'a2a-version': '1.0' });
  t.equal(reasonOf(refused), 'METHOD_NOT_ALLOWED');
  const get = rpcRequest('GetTask', 'n2', { id: 'none' });
  t.equal(reasonOf(await rpc(`${own('narrow')}/`, get, { 'a2a-version': '1.0' })), 'REMOTE_ERROR', 'token 2 (the card fetch above took token 1; the remote: task not found)');
  t.equal(reasonOf(await rpc(`${gw.url}/remotes/narrow/`, get, { 'a2a-version': '1.0' })), 'REMOTE_ERROR', 'token 3, through the shared form');
  t.equal(reasonOf(await rpc(`${own('narrow')}/`, get, { 'a2a-version': '1.0' })), 'RATE_LIMITED', 'the bucket is the remote\'s, whichever form');
});

t.test('anything else on a listener: a 404 problem without the /remotes/ hints', async (t) => {
  for (const path of ['/', '/remotes/sdk/.well-known/agent-card.json', '/metrics']) {
    const res = await request(`${own('sdk')}${path}`);
    const body = (await res.body.json()) as { reason: string; detail: string };
    t.equal(res.statusCode, 404, path);
    t.equal(body.detail, 'no such route on this gateway', path);
  }
});

t.test('server.auth applies on a remote\'s own listener too', async (t) => {
  const authed = await startOpsGateway(yaml('  auth: { type: bearer, tokensEnv: LISTENER_TOKENS }'), { env: { LISTENER_TOKENS: 'tok-123456789' } });
  t.teardown(() => authed.close());
  const url = `${authed.remoteUrls.sdk}/`;
  const call = rpcRequest('GetTask', 'a1', { id: 'none' });
  const denied = await rpc(url, call, { 'a2a-version': '1.0' });
  t.equal(denied.status, 401);
  t.equal(reasonOf(denied), 'UNAUTHENTICATED');
  t.equal((await request(`${authed.remoteUrls.sdk}/.well-known/agent-card.json`)).statusCode, 401, 'the card too');
  const allowed = await rpc(url, call, { 'a2a-version': '1.0', authorization: 'Bearer tok-123456789' });
  t.equal(reasonOf(allowed), 'REMOTE_ERROR');
});

t.test('a reload that removes the remote: its listener answers UNKNOWN_REMOTE; close() closes the listeners', async (t) => {
  const other = await startOpsGateway(yaml());
  const url = other.remoteUrls.narrow!;
  other.gateway.reload(parseConfig(`remotes:\n  sdk:\n    url: ${sdk.url}\n    allowPrivateNetwork: true\n`, 'reload.yaml'));
  const gone = await rpc(`${url}/`, rpcRequest('GetTask', 'r1', { id: 'x' }));
  t.equal(reasonOf(gone), 'UNKNOWN_REMOTE');
  t.equal((await request(`${url}/.well-known/agent-card.json`)).statusCode, 404);
  await other.close();
  // A fresh connection (a pooled keep-alive socket would only say "other side closed").
  const fresh = new Agent();
  t.teardown(() => fresh.close());
  await t.rejects(request(`${url}/.well-known/agent-card.json`, { dispatcher: fresh }), { code: 'ECONNREFUSED' }, 'nothing listens there any more');
});
