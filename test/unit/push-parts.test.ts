import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { ConfigRateLimiter } from '../../src/push/config-rate.js';
import { PushServerFileSchema } from '../../src/config/push.js';
import { PushConfigError, resolvePushConfig } from '../../src/push/config.js';
import { RedeliveryWindow } from '../../src/push/dedupe.js';
import { PushDelivery } from '../../src/push/delivery.js';
import { localHeaders, presentedCredentials, ticketOf } from '../../src/push/listener.js';
import type { PushTicket } from '../../src/push/ticket.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

t.test('redelivery window: same config and body within the window is seen; bounded; forgets on request', async (t) => {
  let now = 0;
  const w = new RedeliveryWindow(1000, 3, () => now);
  t.notOk(w.seenBefore('c1', 'a'));
  t.ok(w.seenBefore('c1', 'a'), 'a redelivery');
  t.notOk(w.seenBefore('c2', 'a'), 'another config is another push');
  t.notOk(w.seenBefore('c1', 'b'));
  now = 999;
  t.ok(w.seenBefore('c1', 'a'), 'just inside the window');
  now = 1000;
  t.notOk(w.seenBefore('c1', 'a'), 'just outside the window: delivered again');
  for (let i = 0; i < 10; i++) w.seenBefore('c', String(i));
  t.equal(w.size, 3, 'never more than maxEntries');
  t.notOk(w.seenBefore('c', '0'), 'the oldest was forgotten first');
  w.forget('c', '0');
  t.notOk(w.seenBefore('c', '0'));
});

t.test('rate per config: each config its own burst; bounded number of buckets', async (t) => {
  let now = 0;
  const r = new ConfigRateLimiter({ perSecond: 1, burst: 2 }, 2, () => now);
  t.ok(r.take('a').ok);
  t.ok(r.take('a').ok, 'burst 2: the second passes (just under)');
  t.match(r.take('a'), { ok: false, retryAfterMs: 1000 }, 'the third does not (just over)');
  t.ok(r.take('b').ok, 'another config is not affected');
  now = 1000;
  t.ok(r.take('a').ok, 'refilled');
  r.take('c');
  t.equal(r.size, 2);
});

t.test('config: the TypeBox fragment validates with the loader’s ajv options; resolve reads keys from env or file', async (t) => {
  const ajv = addFormats(new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }));
  const validate = ajv.compile(PushServerFileSchema);
  const minimal = { port: 8090, publicBaseUrl: 'https://gw.example.com/push', keys: { env: 'PUSH_KEYS' } };
  t.ok(validate(minimal), JSON.stringify(validate.errors));
  t.ok(validate({ ...minimal, keys: { file: '/run/secrets/push' }, allowedTargets: ['loopback', 'https://*.corp.example'], rate: { burst: 5 }, delivery: { maxAttempts: 1 } }));
  t.notOk(validate({ ...minimal, keys: { env: 'X', file: 'y' } }), 'one key source');
  t.notOk(validate({ ...minimal, unknown: 1 }), 'unknown keys are errors');
  t.notOk(validate({ ...minimal, maxBodyBytes: 1023 }), 'bounds');
  t.notOk(validate({ port: 1, keys: { env: 'X' } }), 'publicBaseUrl is required');
  t.notOk(validate({ ...minimal, publicBaseUrl: 'ftp://x' }));

  const key = randomBytes(32).toString('base64');
  const s = resolvePushConfig(minimal, { env: { PUSH_KEYS: key } });
  t.equal(s.webhookBase, 'https://gw.example.com/push');
  t.equal(s.basePath, '/push');
  t.equal(s.host, '127.0.0.1', 'loopback bind by default');
  t.same(s.allowedTargets, ['loopback']);
  t.equal(s.delivery.maxAttempts, 5);
  t.equal(resolvePushConfig({ ...minimal, publicBaseUrl: 'https://gw.example.com/' }, { env: { PUSH_KEYS: key } }).basePath, '');
  const fromFile = resolvePushConfig({ ...minimal, keys: { file: '/k' } }, { readFile: () => `# push keys\n${key}\n` });
  t.equal(fromFile.keys.size, 1);
  t.throws(() => resolvePushConfig(minimal, { env: {} }), new PushConfigError('server.push.keys: environment variable PUSH_KEYS is not set'));
  t.throws(() => resolvePushConfig(minimal, { env: { PUSH_KEYS: 'short' } }), { name: 'PushConfigError', message: /key 1 is not base64/ });
  t.throws(() => resolvePushConfig({ ...minimal, keys: { file: '/nope' } }, { readFile: () => { throw Object.assign(new Error('x'), { code: 'ENOENT' }); } }), { message: /cannot read \/nope: ENOENT/ });
  t.throws(() => resolvePushConfig({ ...minimal, publicBaseUrl: 'https://u:p@gw.example.com/' }, { env: { PUSH_KEYS: key } }), { message: /credentials/ });
  t.throws(() => resolvePushConfig({ ...minimal, publicBaseUrl: 'https://gw.example.com/?a=1' }, { env: { PUSH_KEYS: key } }), { message: /query/ });
  t.throws(() => resolvePushConfig({ ...minimal, allowedTargets: ['nope'] }, { env: { PUSH_KEYS: key } }), { message: /allowedTargets: entry 1/ });
});

t.test('listener helpers: ticket in the path, presented credentials, headers for the local agent', async (t) => {
  t.equal(ticketOf('/push/abc_-1', '/push'), 'abc_-1');
  t.equal(ticketOf('/abc', ''), 'abc');
  for (const bad of ['/push', '/push/', '/push/a/b', '/push/a?x=1', '/pushabc', '/other/abc', '/push/a%2Fb']) t.equal(ticketOf(bad, '/push'), undefined, bad);
  t.same(presentedCredentials({ headers: { authorization: 'Bearer abc' } }), ['abc']);
  t.same(presentedCredentials({ headers: { authorization: 'bearer   abc  ' } }), ['abc']);
  t.same(presentedCredentials({ headers: { authorization: 'Basic abc' } }), ['Basic abc'], 'another scheme counts as a wrong credential');
  t.same(presentedCredentials({ headers: { 'x-a2a-notification-token': 'tok' } }), ['tok']);
  t.same(presentedCredentials({ headers: { authorization: 'Bearer a', 'x-a2a-notification-token': 'b' } }), ['a', 'b']);
  t.same(presentedCredentials({ headers: {} }), []);
  const ticket: PushTicket = { target: 'http://127.0.0.1/h', remote: 'r', callerGeneration: '0.3', remoteGeneration: '1.0', issuedAt: 0, auth: { schemes: ['Basic', 'Bearer'], credentials: 'dXNlcjpwdw==' }, token: 'tok' };
  t.same(localHeaders(ticket), { 'content-type': 'application/json', 'user-agent': 'a2a-egress-push', authorization: 'Basic dXNlcjpwdw==', 'x-a2a-notification-token': 'tok' });
  t.same(localHeaders({ ...ticket, callerGeneration: '1.0', auth: { schemes: ['Bearer'] }, token: undefined as unknown as string }), { 'content-type': 'application/a2a+json', 'user-agent': 'a2a-egress-push' }, 'a scheme without credentials sends nothing');
});

t.test('delivery backoff: doubles from baseMs, capped at maxMs, jitter within [ceiling/2, ceiling]', async (t) => {
  const config = { timeoutMs: 1000, maxAttempts: 10, baseMs: 100, maxMs: 1000, maxQueuedPerTarget: 1, maxQueuedBytes: 65536, maxTargets: 1 };
  const low = new PushDelivery(config, () => undefined, { random: () => 0 });
  const high = new PushDelivery(config, () => undefined, { random: () => 0.999999 });
  t.same([1, 2, 3, 4, 5, 40].map((a) => low.backoffMs(a)), [50, 100, 200, 400, 500, 500]);
  t.same([1, 2, 3, 4, 5, 40].map((a) => high.backoffMs(a)), [100, 200, 400, 800, 1000, 1000]);
  await low.close();
  await high.close();
});
