/**
 * TLS to remotes end to end, with a CA generated at test time
 * (test/support/tls.ts): the chain and the host name are always verified,
 * `tls.caFile` adds a private CA, `certFile`/`keyFile` present a client
 * certificate (mTLS), `minVersion` refuses older protocol versions. Each
 * refusal is a typed UPSTREAM_TLS_ERROR and never reaches the remote's handler.
 */
import t from 'tap';
import { reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { createTestPki, startTlsUpstream, type TestPki, type TlsUpstream } from '../support/tls.js';

let pki: TestPki;
let plain: TlsUpstream;
let wrongName: TlsUpstream;
let mutual: TlsUpstream;
let mutual12: TlsUpstream;
let oldTls: TlsUpstream;
let gw: RunningGateway;

t.before(async () => {
  pki = await createTestPki();
  [plain, wrongName, mutual, oldTls] = await Promise.all([
    startTlsUpstream({ identity: pki.server }),
    startTlsUpstream({ identity: pki.otherName }),
    startTlsUpstream({ identity: pki.server, requireClientCertFrom: pki.ca.cert }),
    startTlsUpstream({ identity: pki.server, maxVersion: 'TLSv1.2' }),
  ]);
  mutual12 = await startTlsUpstream({ identity: pki.server, requireClientCertFrom: pki.ca.cert, maxVersion: 'TLSv1.2' });
  const ca = `caFile: '${pki.files.caFile}'`;
  const clientCert = `certFile: '${pki.files.clientCertFile}', keyFile: '${pki.files.clientKeyFile}'`;
  gw = await startGateway(`
server: { maxEventLoopDelayMs: 0 }
defaults:
  allowPrivateNetwork: true
  retries: { attempts: 1 }
  circuitBreaker: { failureThreshold: 10000 }
remotes:
  unknownCa: { url: '${plain.url}/' }
  privateCa: { url: '${plain.url}/', tls: { ${ca} } }
  wrongName: { url: '${wrongName.url}/', tls: { ${ca} } }
  mtlsWithout: { url: '${mutual.url}/', tls: { ${ca} } }
  mtls: { url: '${mutual.url}/', tls: { ${ca}, ${clientCert} } }
  mtls12Without: { url: '${mutual12.url}/', tls: { ${ca} } }
  mtls12: { url: '${mutual12.url}/', tls: { ${ca}, ${clientCert} } }
  tls12ok: { url: '${oldTls.url}/', tls: { ${ca}, minVersion: TLSv1.2 } }
  tls13only: { url: '${oldTls.url}/', tls: { ${ca}, minVersion: TLSv1.3 } }
`);
});
t.teardown(async () => {
  await gw.close();
  await Promise.all([plain, wrongName, mutual, mutual12, oldTls].map((u) => u?.close()));
});

const call = (remote: string, id: string) => rpc(`${gw.url}/remotes/${remote}/a2a`, rpcRequest('GetTask', id, { id: 'task-1' }));

t.test('a CA the gateway does not trust → UPSTREAM_TLS_ERROR; with tls.caFile → success', async (t) => {
  const refused = await call('unknownCa', 'u1');
  t.equal(reasonOf(refused), 'UPSTREAM_TLS_ERROR');
  t.equal(refused.json.id, 'u1');
  t.notMatch(refused.text, /BEGIN CERTIFICATE|127\.0\.0\.1|self.signed|UNABLE_TO/i, 'no TLS details in the reply');
  t.equal(plain.requests.length, 0, 'nothing reached the remote');
  const ok = await call('privateCa', 'u2');
  t.ok(ok.json.result, 'the private CA verifies the chain');
  t.equal(plain.requests.length, 1);
  t.equal(plain.requests[0]?.url, '/a2a');
});

t.test('a valid chain for another host name → UPSTREAM_TLS_ERROR', async (t) => {
  const reply = await call('wrongName', 'n1');
  t.equal(reasonOf(reply), 'UPSTREAM_TLS_ERROR');
  t.equal(wrongName.requests.length, 0);
});

t.test('mTLS over TLS 1.2: without a client certificate → UPSTREAM_TLS_ERROR; with certFile/keyFile → success', async (t) => {
  const refused = await call('mtls12Without', 'm1');
  t.equal(reasonOf(refused), 'UPSTREAM_TLS_ERROR', 'the remote refuses inside the handshake');
  t.equal(mutual12.requests.length, 0, 'the remote never handled a request');
  const ok = await call('mtls12', 'm2');
  t.ok(ok.json.result);
  t.equal(mutual12.requests[0]?.clientCertCn, 'a2a-egress test client', 'the remote saw our client certificate');
});

t.test('mTLS over TLS 1.3: without a client certificate the call fails; with it → success', async (t) => {
  // In TLS 1.3 the client's handshake is done before the server checks the
  // client certificate; its "certificate required" alert comes with the
  // connection close, and undici reports the close ("other side closed").
  const refused = await call('mtlsWithout', 'm3');
  t.match(reasonOf(refused), /^(UPSTREAM_TLS_ERROR|UPSTREAM_RESET)$/, `typed transport error (${reasonOf(refused)})`);
  t.equal(mutual.requests.length, 0, 'the remote never handled a request');
  const ok = await call('mtls', 'm4');
  t.ok(ok.json.result);
  t.equal(mutual.requests.length, 1);
  t.equal(mutual.requests[0]?.clientCertCn, 'a2a-egress test client', 'the remote saw our client certificate');
});

t.test('minVersion: TLSv1.2 reaches a TLSv1.2-only remote; TLSv1.3 refuses it', async (t) => {
  const ok = await call('tls12ok', 'v1');
  t.ok(ok.json.result, 'just under: 1.2 allowed');
  t.equal(oldTls.requests.length, 1);
  const refused = await call('tls13only', 'v2');
  t.equal(reasonOf(refused), 'UPSTREAM_TLS_ERROR', 'just over: 1.3 required');
  t.equal(oldTls.requests.length, 1, 'nothing more reached the remote');
});
