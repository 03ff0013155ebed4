/**
 * The egress guard at connect time, with a resolver hook standing in for a
 * rebinding DNS server: every non-public answer (metadata, RFC 1918, CGNAT,
 * IPv6 unique-local, IPv4-mapped loopback) is refused with EGRESS_DENIED
 * before a socket is opened, unless the remote sets allowPrivateNetwork.
 * Host-header and absolute-form request tricks from a caller never steer a
 * request anywhere but the configured remote.
 *
 * No test here connects outside 127.0.0.0/8: denied answers are checked by
 * the guard first (a `t.before` proves it on the pure function, so a broken
 * guard stops the file before any socket), and the public case is only
 * checked on isNonPublicAddress.
 */
import { connect } from 'node:net';
import type { LookupOptions } from 'node:dns';
import t from 'tap';
import { guardedLookup, isNonPublicAddress, type LookupFunction } from '../../src/upstream/egress.js';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';

const ANSWERS: Readonly<Record<string, { address: string; family: 4 | 6 }>> = {
  'metadata.rebind.test': { address: '169.254.169.254', family: 4 },
  'rfc1918.rebind.test': { address: '10.0.0.5', family: 4 },
  'cgnat.rebind.test': { address: '100.64.0.1', family: 4 },
  'ula.rebind.test': { address: 'fd00::1', family: 6 },
  'mapped.rebind.test': { address: '::ffff:127.0.0.1', family: 6 },
  'loopback.rebind.test': { address: '127.0.0.1', family: 4 },
};

const lookups: string[] = [];
const fakeDns: LookupFunction = (hostname, options: LookupOptions, callback) => {
  lookups.push(hostname);
  const answer = ANSWERS[hostname];
  if (!answer) return callback(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), '');
  if (options.all) return callback(null, [answer]);
  callback(null, answer.address, answer.family);
};

let upstream: HostileUpstream;
let gw: RunningGateway;

t.before(async () => {
  // Safety belt: the pure guard must refuse every non-loopback answer before the gateway may try to connect.
  for (const [host, answer] of Object.entries(ANSWERS)) {
    if (answer.address === '127.0.0.1') continue;
    const refused = await new Promise<boolean>((resolve) => guardedLookup(false, fakeDns)(host, {}, (err) => resolve(err !== null)));
    if (!refused) throw new Error(`egress guard lets ${answer.address} through: not running tests that would connect to it`);
  }
  upstream = await startHostileUpstream();
  const denied = Object.keys(ANSWERS)
    .filter((h) => !h.startsWith('loopback'))
    .map((h) => `  ${h.split('.')[0]}: { url: 'http://${h}:${upstream.port}/' }`)
    .join('\n');
  gw = await startGateway(
    `
server: { maxEventLoopDelayMs: 0 }
defaults:
  retries: { attempts: 1 }
  circuitBreaker: { failureThreshold: 10000 }
  timeouts: { connectMs: 500 }
remotes:
${denied}
  loopbackDenied: { url: 'http://loopback.rebind.test:${upstream.port}/' }
  loopbackAllowed: { url: 'http://loopback.rebind.test:${upstream.port}/', allowPrivateNetwork: true }
  hostile: { url: '${upstream.url}/', allowPrivateNetwork: true }
`,
    { pool: { resolver: fakeDns } },
  );
});
t.teardown(async () => {
  await gw?.close();
  await upstream?.close();
});

for (const [host, answer] of Object.entries(ANSWERS)) {
  if (host.startsWith('loopback')) continue;
  const remote = host.split('.')[0]!;
  t.test(`a name resolving to ${answer.address} → EGRESS_DENIED`, async (t) => {
    const before = upstream.requests.length;
    const reply = await rpc(`${gw.url}/remotes/${remote}/ok`, rpcRequest('GetTask', remote, { id: 'task-1' }));
    t.equal(reasonOf(reply), 'EGRESS_DENIED');
    t.equal(reply.json.id, remote);
    t.notOk(reply.text.includes(answer.address), 'the address is not echoed to the caller');
    t.ok(lookups.includes(host), 'the guard saw the resolver’s answer');
    t.equal(upstream.requests.length, before);
  });
}

t.test('127.0.0.1 answer: denied by default, allowed with allowPrivateNetwork', async (t) => {
  t.equal(reasonOf(await rpc(`${gw.url}/remotes/loopbackDenied/ok`, rpcRequest('GetTask', 'l1', { id: 'task-1' }))), 'EGRESS_DENIED');
  const before = upstream.requests.length;
  const allowed = await rpc(`${gw.url}/remotes/loopbackAllowed/ok`, rpcRequest('GetTask', 'l2', { id: 'task-1' }));
  t.ok(allowed.json.result, 'allowPrivateNetwork: the same answer connects');
  t.equal(upstream.requests.length, before + 1);
});

t.test('isNonPublicAddress: public addresses pass, every non-public form is caught', async (t) => {
  for (const address of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:82a::200e', '::ffff:93.184.216.34']) {
    t.equal(isNonPublicAddress(address), false, `${address} is public`);
  }
  for (const address of ['169.254.169.254', '10.0.0.5', '100.64.0.1', '100.127.255.255', '172.16.0.1', '192.168.1.1', '127.0.0.1', '0.0.0.0', 'fd00::1', 'fe80::1', '::1', '::', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '[::1]', 'not-an-ip']) {
    t.equal(isNonPublicAddress(address), true, `${address} is not public`);
  }
  // The edges of CGNAT (100.64.0.0/10): just outside on either side is public.
  t.equal(isNonPublicAddress('100.63.255.255'), false);
  t.equal(isNonPublicAddress('100.128.0.0'), false);
});

t.test('a caller Host header does not change where the request goes', async (t) => {
  const reply = await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('GetTask', 'h1', { id: 'task-1' }), { host: 'evil.example' });
  t.ok(reply.json.result);
  const seen = upstream.requests.at(-1)!;
  t.equal(seen.headers.host, `127.0.0.1:${upstream.port}`, 'the remote saw its own host');
  t.notOk(lookups.includes('evil.example'), 'evil.example was never resolved');
});

/** Writes one raw HTTP/1.1 request and reads until the server closes. */
function rawExchange(port: number, head: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('raw exchange timed out')));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(`${head}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
}

for (const target of ['http://evil.example/', 'http://evil.example/remotes/hostile/ok', 'http://169.254.169.254/remotes/hostile/ok']) {
  t.test(`absolute-form request target ${target} never reaches anything but the configured remote`, async (t) => {
    const before = upstream.requests.length;
    const port = Number(new URL(gw.url).port);
    const text = await rawExchange(port, `POST ${target} HTTP/1.1\r\nhost: evil.example`, JSON.stringify(rpcRequest('GetTask', 'abs', { id: 'task-1' })));
    const reached = upstream.requests.slice(before);
    t.match(text, /^HTTP\/1\.1 \d{3} /, `the gateway answered (${text.split('\r\n')[0]}; ${reached.length} forwarded)`);
    t.notOk(lookups.includes('evil.example'), 'evil.example was never resolved');
    t.equal(reached.length, 0, 'nothing forwarded: an absolute-form target is refused');
    if (target.includes('/remotes/')) t.match(text, /"reason":"INVALID_PATH"/, 'with INVALID_PATH');
  });
}
