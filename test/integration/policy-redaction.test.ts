/**
 * The gateway's own credentials never come back to a caller. A real remote
 * (test/support/echo-credential-upstream.ts) echoes the credential it
 * received in every place a caller reads: error.message, kept error.data,
 * result text (raw, \u-escaped, with invisible characters or terminal
 * sequences inside, percent- and base64-encoded), a member name, stream
 * events, the extended card, the public card and a response header. Each
 * test shows nothing of it reaches the caller, that the place is counted in
 * /metrics and logged without the value, and that a remote without `auth`
 * is passed through untouched.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import { createGateway } from '../../src/server.js';
import { echoedForms, NO_CREDENTIAL, startEchoUpstream, type EchoUpstream } from '../support/echo-credential-upstream.js';
import { gatewayInfoOf, reasonOf, rpc, rpcRequest, spawnGatewayCli, startGateway, writeTempConfig, type RpcReply, type RunningGateway } from '../support/gateway.js';
import { leaksIn } from '../support/secret-oracle.js';
import { streamRpc } from '../support/sse-client.js';
import { clientForJsonRpcUrl, sendText, replyText } from '../support/sdk-client.js';
import { tempDir } from '../support/temp-dir.js';

const TOKEN = 'gw-token-9c1d7e55af02/+=';
const API_KEY = 'api-key-3b8f1a6e77d4';
const FILE_TOKEN_1 = 'file-token-one-71c2aa90';
const FILE_TOKEN_2 = 'file-token-two-0e4d5b13';
const SECRETS = [TOKEN, API_KEY, FILE_TOKEN_1, FILE_TOKEN_2];

let upstream: EchoUpstream;
let gw: RunningGateway;
let tokenFile: string;

t.before(async () => {
  upstream = await startEchoUpstream();
  tokenFile = join(tempDir('a2a-egress-redact-'), 'token');
  writeFileSync(tokenFile, `${FILE_TOKEN_1}\n`);
  gw = await startGateway(
    `
server: { maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
  keepRemoteErrorData: true
remotes:
  echo:
    url: ${upstream.url}/
    auth: { type: bearer, tokenEnv: ECHO_TOKEN }
  short:
    url: ${upstream.url}/
    auth: { type: bearer, tokenEnv: ECHO_TOKEN }
    limits: { maxErrorMessageBytes: 48 }
  apikey:
    url: ${upstream.url}/
    auth: { type: header, name: x-api-key, valueEnv: ECHO_API_KEY }
  filetok:
    url: ${upstream.url}/
    auth: { type: bearer, tokenFile: '${tokenFile}' }
  keycard:
    url: ${upstream.url}/
    agentCardUrl: ${upstream.url}/key-card.json
    auth: { type: bearer, tokenEnv: ECHO_TOKEN }
  plain:
    url: ${upstream.url}/
`,
    { env: { ECHO_TOKEN: TOKEN, ECHO_API_KEY: API_KEY } },
  );
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const call = (path: string, method = 'SendMessage', id: string | number = 'c-1'): Promise<RpcReply> =>
  rpc(`${gw.url}/remotes/${path}`, rpcRequest(method, id, { message: { messageId: 'u-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }));

/** Asserts that nothing of `secret` reaches the caller, in any reading (see secret-oracle.ts). */
function assertHidden(t: Test, secret: string, reply: { text: string; headers?: Record<string, string | string[] | undefined> }, what: string): void {
  t.same(leaksIn(secret, reply), [], `${what}: nothing of the credential reaches the caller`);
}

async function redactionCount(remote: string, path: string): Promise<number> {
  const metrics = await (await request(`${gw.url}/metrics`)).body.text();
  const line = metrics.split('\n').find((l) => l.startsWith(`a2a_egress_redactions_total{remote="${remote}",path="${path}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

t.test('error.message: "invalid token Bearer …" reaches the caller as [redacted]', async (t) => {
  const reply = await call('echo/message-error');
  t.equal(reply.json.error?.code, -32001, 'the remote’s own code is kept');
  t.equal(reply.json.error?.message, 'invalid token Bearer [redacted] for this agent');
  assertHidden(t, TOKEN, reply, 'message');
  t.ok((await redactionCount('echo', 'reply')) >= 1, 'counted in /metrics');
});

t.test('error.message cut by the bound in the middle of the credential: never half-shown', async (t) => {
  const reply = await call('short/long-message-error');
  const message = reply.json.error?.message ?? '';
  t.equal(gatewayInfoOf(reply)?.metadata.messageTruncated, 'true');
  t.notMatch(message, /gw-|token/, `no start of the credential in ${JSON.stringify(message)}`);
  t.match(message, /^x+\[/, 'the marker, cut, follows the padding');
  assertHidden(t, TOKEN, reply, 'cut message');
});

t.test('kept error.data (keepRemoteErrorData): every string redacted', async (t) => {
  const reply = await call('echo/data-error');
  const detail = reply.json.error?.data.find((d) => (d as unknown as Record<string, unknown>)['@type'] !== 'type.googleapis.com/google.rpc.ErrorInfo') as unknown as Record<string, unknown>;
  t.equal(detail['@type'], 'type.googleapis.com/google.rpc.DebugInfo');
  t.equal(detail.detail, 'Authorization: Bearer [redacted]');
  t.same(detail.stackEntries, ['at check([redacted])']);
  assertHidden(t, TOKEN, reply, 'data');
});

t.test('result text: raw, invisible characters inside, terminal sequences inside, percent- and base64-encoded', async (t) => {
  const reply = await call('echo/result');
  t.ok(reply.json.result, 'still a result');
  const text = (reply.json.result as { parts: { text: string }[] }).parts[0]!.text;
  for (const label of ['raw', 'invisible', 'ansi', 'newlines', 'percent', 'base64', 'base64url']) t.match(text, new RegExp(`${label} [^|]*\\[redacted\\]`), `${label} form replaced`);
  assertHidden(t, TOKEN, reply, 'result');
  const sanity = echoedForms(TOKEN).join(' | ');
  t.not(leaksIn(TOKEN, { text: JSON.stringify({ sanity }) }).length, 0, 'the oracle does see the forms the remote sent');
});

t.test('result text with every character of the credential written as a JSON \\u escape', async (t) => {
  const reply = await call('echo/escaped-result');
  t.same(reply.json.result, { kind: 'message', messageId: 'm-2', role: 'agent', parts: [{ kind: 'text', text: 'escaped [redacted]' }] });
  assertHidden(t, TOKEN, reply, 'escaped result');
});

t.test('a credential used as a member name cannot be replaced: -32006 CREDENTIAL_ECHOED', async (t) => {
  const reply = await call('echo/key-result');
  t.equal(reply.json.error?.code, -32006);
  t.equal(reasonOf(reply), 'CREDENTIAL_ECHOED');
  assertHidden(t, TOKEN, reply, 'member name');
});

t.test('header credential (x-api-key) is redacted the same way', async (t) => {
  const reply = await call('apikey/message-error');
  t.equal(reply.json.error?.message, 'invalid token Bearer [redacted] for this agent');
  assertHidden(t, API_KEY, reply, 'api key');
});

t.test('response header carrying the credential is dropped; a clean one passes', async (t) => {
  const reply = await call('echo/header');
  t.ok(reply.json.result);
  t.equal(reply.headers['a2a-version'], '1.0');
  t.notOk(reply.headers['a2a-extensions'], 'A2A-Extensions with the credential dropped whole');
  assertHidden(t, TOKEN, reply, 'headers');
  const plain = await call('plain/header');
  t.match(String(plain.headers['a2a-extensions']), NO_CREDENTIAL, 'a remote without auth keeps its header');
});

t.test('stream: every event and the response header, through to the final error event', async (t) => {
  const before = await redactionCount('echo', 'stream');
  const reply = await streamRpc(`${gw.url}/remotes/echo/stream`, rpcRequest('SendStreamingMessage', 's-1', { message: { messageId: 'u', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }));
  t.equal(reply.events.length, 3, 'status, message, error');
  t.match(JSON.stringify(reply.events[0]), 'working with [redacted]');
  t.equal((reply.events[2]?.error as { message: string }).message, 'stream failed for token [redacted]');
  t.notOk(reply.headers['a2a-extensions'], 'the stream’s A2A-Extensions carried it: dropped');
  assertHidden(t, TOKEN, { text: reply.raw, headers: reply.headers }, 'stream');
  t.ok((await redactionCount('echo', 'stream')) - before >= 3, 'each place counted');
});

t.test('extended card (GetExtendedAgentCard result): redacted before its texts are bounded', async (t) => {
  const reply = await call('echo/extended-card', 'GetExtendedAgentCard');
  const card = reply.json.result as { description: string; skills: { name: string }[] };
  t.equal(card.description, 'Extended card for [redacted]');
  t.equal(card.skills[0]?.name, 'skill [redacted]');
  assertHidden(t, TOKEN, reply, 'extended card');
});

t.test('public card: a credential the remote got on an earlier call is redacted from its card', async (t) => {
  await call('echo/result');
  t.equal(upstream.lastCredential(), TOKEN);
  const before = await redactionCount('echo', 'card');
  const res = await request(`${gw.url}/remotes/echo/.well-known/agent-card.json`);
  const text = await res.body.text();
  t.equal(res.statusCode, 200);
  t.equal((JSON.parse(text) as { description: string }).description, 'Agent reached with [redacted] (yes, really)');
  assertHidden(t, TOKEN, { text, headers: res.headers }, 'public card');
  t.equal((await redactionCount('echo', 'card')) - before, 1);
});

t.test('public card: a credential used as a member name cannot be replaced: HTTP 502 CREDENTIAL_ECHOED', async (t) => {
  await call('keycard/result');
  const res = await request(`${gw.url}/remotes/keycard/.well-known/agent-card.json`);
  const text = await res.body.text();
  t.equal(res.statusCode, 502);
  t.equal((JSON.parse(text) as { reason: string }).reason, 'CREDENTIAL_ECHOED');
  assertHidden(t, TOKEN, { text, headers: res.headers }, 'refused card');
});

t.test('a real A2A client (@a2a-js/sdk) reads [redacted] where the remote wrote the credential', async (t) => {
  const client = await clientForJsonRpcUrl(`${gw.url}/remotes/echo/v1-result`);
  const text = replyText(await sendText(client, 'hello'));
  t.match(text, /^raw \[redacted\]/);
  t.notMatch(text, TOKEN);
});

t.test('token file: the rotated token and the previous one are both redacted', async (t) => {
  t.equal((await call('filetok/message-error')).json.error?.message, 'invalid token Bearer [redacted] for this agent');
  t.equal(upstream.lastCredential(), FILE_TOKEN_1);
  writeFileSync(tokenFile, `${FILE_TOKEN_2}\n`);
  await new Promise((r) => setTimeout(r, 1100));
  // This call carries the new token; the remote echoes the one of the call before (the old token).
  const stale = await call('filetok/previous-error');
  t.equal(upstream.lastCredential(), FILE_TOKEN_2, 'the remote got the new token');
  t.equal(stale.json.error?.message, 'your old token [redacted] expired');
  assertHidden(t, FILE_TOKEN_1, stale, 'previous token');
  const rotated = await call('filetok/result');
  assertHidden(t, FILE_TOKEN_2, rotated, 'new token');
  t.match(JSON.stringify(rotated.json.result), '[redacted]');
});

t.test('a remote without auth is passed through untouched, even text that looks like a credential', async (t) => {
  const reply = await call('plain/result');
  const text = (reply.json.result as { parts: { text: string }[] }).parts[0]!.text;
  t.equal(text, echoedForms(NO_CREDENTIAL).join(' | '), 'byte for byte');
  t.equal(await redactionCount('plain', 'reply'), 0);
});

t.test('logs: each redaction is logged with remote, path and count, never the value', async (t) => {
  const lines = gw.logs.filter((l) => l.msg === 'remote sent back a credential of this gateway; removed before the caller saw it');
  t.ok(lines.length >= 5, 'logged');
  t.ok(lines.every((l) => typeof l.remote === 'string' && typeof l.path === 'string' && typeof l.redactions === 'number'));
  const all = JSON.stringify(gw.logs);
  for (const secret of SECRETS) t.notOk(all.includes(secret), `${secret.slice(0, 8)}… in no log line`);
});

t.test('a credential under 8 bytes: the CLI exits 2 naming the remote and key', async (t) => {
  const file = writeTempConfig(`remotes:\n  weather:\n    url: http://127.0.0.1:9/\n    allowPrivateNetwork: true\n    auth: { type: bearer, tokenEnv: A2A_EGRESS_TEST_SHORT_TOKEN }\n`);
  const cli = spawnGatewayCli(['--config', file, '--port', '0'], { A2A_EGRESS_TEST_SHORT_TOKEN: 'seven77' });
  t.teardown(() => void cli.child.kill('SIGKILL'));
  t.equal(await cli.exited, 2);
  t.match(cli.stderr(), /remotes\.weather\.auth\.tokenEnv: environment variable A2A_EGRESS_TEST_SHORT_TOKEN holds 7 bytes; a credential must be at least 8 bytes/);
  t.notMatch(cli.stderr(), 'seven77');
});

t.test('a credential under 8 bytes on reload: refused, the old config stays in force', async (t) => {
  const yaml = (token: string) => `remotes:\n  r:\n    url: ${upstream.url}/\n    allowPrivateNetwork: true\n    auth: { type: bearer, tokenEnv: ${token} }\n`;
  const gateway = await createGateway(parseConfig(yaml('GOOD')), { env: { GOOD: 'eight888', SHORT: 'seven77' }, processMetrics: false });
  t.teardown(() => gateway.close());
  const before = gateway.config();
  t.throws(() => gateway.reload(parseConfig(yaml('SHORT'))), { name: 'CredentialError', message: /remotes\.r\.auth\.tokenEnv: .*holds 7 bytes/ });
  t.equal(gateway.config(), before, 'the previous config is kept');
});
