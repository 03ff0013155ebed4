/**
 * Credentials end to end. Per-remote credentials the gateway injects
 * (bearer from env, bearer from a file that is re-read when it changes, a
 * named header from env) replace whatever the caller sent, and the secret
 * shows up nowhere but on the wire to that remote: not in logs, metrics,
 * /readyz detail or any reply. Caller authentication to the gateway itself
 * (`server.auth`) refuses unknown callers with 401 before anything is sent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { reasonOf, rpc, rpcRequest, spawnGatewayCli, startGateway, writeTempConfig, type RunningGateway } from '../support/gateway.js';
import { tempDir } from '../support/temp-dir.js';

const ENV_TOKEN = 'env-token-7f3a9c0d51e2';
const FILE_TOKEN_1 = 'file-token-one-4b8e20';
const FILE_TOKEN_2 = 'file-token-number-two-c0ffee91';
const API_KEY = 'api-key-9d2f66aa13';
const CALLER_TOKENS = ['caller-token-a-5e1d', 'caller-token-b-77c4'] as const;
const SECRETS = [ENV_TOKEN, FILE_TOKEN_1, FILE_TOKEN_2, API_KEY];

let upstream: HostileUpstream;
let gw: RunningGateway;
let tokenFile: string;

t.before(async () => {
  upstream = await startHostileUpstream();
  tokenFile = join(tempDir('a2a-egress-token-'), 'token');
  writeFileSync(tokenFile, `${FILE_TOKEN_1}\n`);
  gw = await startGateway(
    `
server: { maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
remotes:
  envtok:
    url: ${upstream.url}/
    auth: { type: bearer, tokenEnv: UPSTREAM_TOKEN }
  # Even a remote that forwards the caller's Authorization gets the configured one.
  envtokForwarding:
    url: ${upstream.url}/
    forwardHeaders: [authorization]
    auth: { type: bearer, tokenEnv: UPSTREAM_TOKEN }
  filetok:
    url: ${upstream.url}/
    auth: { type: bearer, tokenFile: '${tokenFile}' }
  apikey:
    url: ${upstream.url}/
    auth: { type: header, name: X-Api-Key, valueEnv: UPSTREAM_API_KEY }
`,
    { env: { UPSTREAM_TOKEN: ENV_TOKEN, UPSTREAM_API_KEY: API_KEY } },
  );
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const replies: string[] = [];
async function call(path: string, id: string, headers: Record<string, string> = {}) {
  const reply = await rpc(`${gw.url}/remotes/${path}`, rpcRequest('GetTask', id, { id: 'task-1' }), headers);
  replies.push(reply.text, JSON.stringify(reply.headers));
  return reply;
}
const lastSeen = () => upstream.requests.at(-1)!.headers;

t.test('bearer from env replaces the caller’s own Authorization', async (t) => {
  const reply = await call('envtok/ok', 'e1', { authorization: 'Bearer caller-own-token' });
  t.ok(reply.json.result);
  t.equal(lastSeen().authorization, `Bearer ${ENV_TOKEN}`);
  await call('envtokForwarding/ok', 'e2', { authorization: 'Bearer caller-own-token' });
  t.equal(lastSeen().authorization, `Bearer ${ENV_TOKEN}`, 'configured credential wins over forwardHeaders');
  await call('envtok/ok', 'e3');
  t.equal(lastSeen().authorization, `Bearer ${ENV_TOKEN}`, 'and is sent when the caller sent none');
});

t.test('header credential: X-Api-Key from env', async (t) => {
  const reply = await call('apikey/ok', 'k1', { 'x-api-key': 'caller-guess' });
  t.ok(reply.json.result);
  t.equal(lastSeen()['x-api-key'], API_KEY);
  t.notOk(lastSeen().authorization, 'no Authorization added');
});

t.test('bearer from a file: a changed file is used by the next call after ≥ 1 s', async (t) => {
  await call('filetok/ok', 'f1');
  t.equal(lastSeen().authorization, `Bearer ${FILE_TOKEN_1}`);
  writeFileSync(tokenFile, `${FILE_TOKEN_2}\n`);
  await new Promise((r) => setTimeout(r, 1100));
  await call('filetok/ok', 'f2');
  t.equal(lastSeen().authorization, `Bearer ${FILE_TOKEN_2}`, 'rotated token in use');
});

t.test('no secret in logs, /metrics, /readyz?detail=1 or any reply', async (t) => {
  const metrics = await (await request(`${gw.url}/metrics`)).body.text();
  const ready = await (await request(`${gw.url}/readyz?detail=1`)).body.text();
  t.match(ready, /bearer from env UPSTREAM_TOKEN/, 'readyz names where the credential comes from');
  t.match(ready, /header x-api-key from env UPSTREAM_API_KEY/);
  const logs = JSON.stringify(gw.logs);
  t.ok(replies.length > 0 && gw.logs.length > 0, 'there is something to search');
  for (const secret of SECRETS) {
    t.notOk(logs.includes(secret), `${secret.slice(0, 10)}… not in logs`);
    t.notOk(metrics.includes(secret), `${secret.slice(0, 10)}… not in /metrics`);
    t.notOk(ready.includes(secret), `${secret.slice(0, 10)}… not in /readyz`);
    t.notOk(replies.some((r) => r.includes(secret)), `${secret.slice(0, 10)}… not in any reply`);
  }
});

t.test('caller auth: server.auth bearer tokens from GW_TOKENS', async (t) => {
  const guarded = await startGateway(
    `
server: { maxEventLoopDelayMs: 0, auth: { type: bearer, tokensEnv: GW_TOKENS } }
remotes:
  open: { url: '${upstream.url}/', allowPrivateNetwork: true, retries: { attempts: 1 } }
`,
    { env: { GW_TOKENS: CALLER_TOKENS.join(',') } },
  );
  t.teardown(() => guarded.close());
  const url = `${guarded.url}/remotes/open/ok`;

  for (const [name, headers] of [
    ['no token', {}],
    ['a wrong token', { authorization: 'Bearer not-a-caller-token' }],
    ['a known token with the wrong scheme', { authorization: `Basic ${CALLER_TOKENS[0]}` }],
  ] as const) {
    const before = upstream.requests.length;
    const reply = await rpc(url, rpcRequest('GetTask', 'x', { id: 'task-1' }), headers);
    t.equal(reply.status, 401, `${name}: HTTP 401`);
    t.equal(reasonOf(reply), 'UNAUTHENTICATED', `${name}: UNAUTHENTICATED envelope`);
    t.equal(reply.json.jsonrpc, '2.0');
    t.match(String(reply.headers['www-authenticate']), /^Bearer /);
    t.equal(upstream.requests.length, before, `${name}: nothing forwarded`);
  }

  for (const [i, token] of CALLER_TOKENS.entries()) {
    const reply = await rpc(url, rpcRequest('GetTask', `ok-${i}`, { id: 'task-1' }), { authorization: `Bearer ${token}` });
    t.equal(reply.status, 200, `token ${i + 1} accepted`);
    t.ok(reply.json.result);
    t.notOk(upstream.requests.at(-1)!.headers.authorization, 'the gateway token is not passed to the remote');
  }

  const card = await request(`${guarded.url}/remotes/open/.well-known/agent-card.json`);
  await card.body.dump();
  t.equal(card.statusCode, 401, 'agent cards are behind it too');
  const health = await request(`${guarded.url}/healthz`);
  await health.body.dump();
  t.equal(health.statusCode, 200, '/healthz is not behind caller auth');
  t.notOk(JSON.stringify(guarded.logs).includes(CALLER_TOKENS[0]), 'caller tokens never logged');
});

// Both start-up failures in one test, run side by side: a CLI start is the slow part of this file.
t.test('a missing secret env var makes the CLI exit 2 naming the variable', async (t) => {
  const remoteAuth = writeTempConfig(`remotes:\n  w:\n    url: http://127.0.0.1:9/\n    allowPrivateNetwork: true\n    auth: { type: bearer, tokenEnv: A2A_EGRESS_TEST_MISSING_TOKEN }\n`);
  const callerAuth = writeTempConfig(`server: { auth: { type: bearer, tokensEnv: A2A_EGRESS_TEST_NO_CALLER_TOKENS } }\nremotes:\n  w: { url: 'http://127.0.0.1:9/', allowPrivateNetwork: true }\n`);
  const empty = { A2A_EGRESS_TEST_MISSING_TOKEN: '', A2A_EGRESS_TEST_NO_CALLER_TOKENS: '' };
  const clis = [spawnGatewayCli(['--config', remoteAuth, '--port', '0'], empty), spawnGatewayCli(['--config', callerAuth, '--port', '0'], empty)];
  t.teardown(() => clis.forEach((c) => c.child.kill('SIGKILL')));
  const [remoteExit, callerExit] = await Promise.all(clis.map((c) => c.exited));
  t.equal(remoteExit, 2, 'remote auth.tokenEnv unset → exit 2');
  t.match(clis[0]!.stderr(), /A2A_EGRESS_TEST_MISSING_TOKEN/);
  t.equal(callerExit, 2, 'server.auth.tokensEnv unset → exit 2');
  t.match(clis[1]!.stderr(), /A2A_EGRESS_TEST_NO_CALLER_TOKENS/);
});
