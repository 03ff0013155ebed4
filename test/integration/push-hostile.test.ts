/**
 * Hostile pushes against the real webhook listener, sent as raw HTTP: each
 * is refused with its HTTP status and reason (in the body, the metrics and
 * the log) and never reaches the local agent, or is cleaned before it does.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import t from 'tap';
import { Redactor } from '../../src/envelope/redact.js';
import { PushKeyRing } from '../../src/push/keys.js';
import { sealTicket } from '../../src/push/ticket.js';
import { mintConfig, newKey, pushSettings, startPush, startReceiver, statusPush, withBase, type MintedConfig } from '../support/push-kit.js';
import { delay, rawRequest, type RawReply } from '../support/servers.js';

const REMOTE_CREDENTIAL = 'remote-bearer-token-0123';

function post(config: MintedConfig, body: string | Buffer, headers: Record<string, string> = {}, url = config.url): Promise<RawReply> {
  return rawRequest(url, { body, headers: { 'content-type': 'application/a2a+json', authorization: `Bearer ${config.credential}`, ...headers } });
}

function reasonOf(reply: RawReply): string {
  const body = JSON.parse(reply.body.toString('utf8')) as { error: { code: number; details: { reason: string; domain: string }[] } };
  if (body.error.code !== reply.status || body.error.details[0]?.domain !== 'a2a-egress') throw new Error('not a gateway Status body');
  return body.error.details[0].reason;
}

t.test('hostile pushes: refused with their reason, or cleaned; nothing bad reaches the local agent', async (t) => {
  const keys = [newKey()];
  const settings = pushSettings({ keys });
  const push = await startPush(settings, { remotes: { weather: { redactor: new Redactor([REMOTE_CREDENTIAL]) }, news: {} } });
  const receiver = await startReceiver();
  t.teardown(async () => {
    await push.close();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  const other = mintConfig(push.settings, receiver.url, { taskId: 'task-2' });
  let accepted = 0;
  const refused = async (name: string, reply: Promise<RawReply>, status: number, reason: string): Promise<void> => {
    const r = await reply;
    t.equal(r.status, status, `${name}: HTTP ${status}`);
    t.equal(reasonOf(r), reason, `${name}: ${reason}`);
  };
  const taken = async (name: string, reply: Promise<RawReply>): Promise<void> => {
    t.equal((await reply).status, 202, `${name}: accepted`);
    accepted++;
  };

  // --- who may push ---
  await refused('no credential', post(config, JSON.stringify(statusPush('x')), { authorization: '' }), 401, 'PUSH_CREDENTIAL_MISSING');
  await refused('wrong credential', post(config, JSON.stringify(statusPush('x')), { authorization: `Bearer ${config.credential.slice(0, -1)}${config.credential.endsWith('A') ? 'B' : 'A'}` }), 401, 'PUSH_CREDENTIAL_INVALID');
  await refused("another config's credential", post(config, JSON.stringify(statusPush('x')), { authorization: `Bearer ${other.credential}` }), 401, 'PUSH_CREDENTIAL_INVALID');
  await refused('Basic instead of Bearer', post(config, JSON.stringify(statusPush('x')), { authorization: `Basic ${config.credential}` }), 401, 'PUSH_CREDENTIAL_INVALID');
  await refused('right bearer, wrong token header', post(config, JSON.stringify(statusPush('x')), { 'x-a2a-notification-token': 'nope' }), 401, 'PUSH_CREDENTIAL_INVALID');
  await taken('the token header alone (0.3 senders)', post(config, JSON.stringify(statusPush('by token')), { authorization: '', 'x-a2a-notification-token': config.credential }));
  const missing = await post(config, JSON.stringify(statusPush('x')), { authorization: '' });
  t.equal(missing.headers['www-authenticate'], 'Bearer');

  // --- which URLs are webhooks ---
  const ticket = config.url.slice(config.url.lastIndexOf('/') + 1);
  const flipped = `${ticket.slice(0, 20)}${ticket[20] === 'A' ? 'B' : 'A'}${ticket.slice(21)}`;
  await refused('altered ticket', post(config, '{}', {}, config.url.replace(ticket, flipped)), 404, 'PUSH_NOT_FOUND');
  await refused('not a ticket', post(config, '{}', {}, `${push.settings.webhookBase}/hello`), 404, 'PUSH_NOT_FOUND');
  await refused('outside the base path', post(config, '{}', {}, `${push.listener.url}/other/${ticket}`), 404, 'PUSH_NOT_FOUND');
  await refused('query string', post(config, '{}', {}, `${config.url}?x=1`), 404, 'PUSH_NOT_FOUND');
  const foreign = withBase(pushSettings(), push.listener.url);
  const foreignConfig = mintConfig(foreign, receiver.url);
  await refused('unknown key (another gateway, or a retired key)', post(foreignConfig, JSON.stringify(statusPush('x'))), 404, 'PUSH_KEY_UNKNOWN');
  await refused('GET', rawRequest(config.url, { headers: { authorization: `Bearer ${config.credential}` } }), 405, 'PUSH_METHOD_NOT_ALLOWED');
  const gone = mintConfig(push.settings, receiver.url, { remote: 'sports' });
  await refused('remote no longer configured', post(gone, JSON.stringify(statusPush('x'))), 410, 'PUSH_REMOTE_UNKNOWN');
  const old = mintConfig(push.settings, receiver.url, { nowMs: Date.now() - (settings.maxConfigAgeSeconds + 60) * 1000 });
  await refused('expired config', post(old, JSON.stringify(statusPush('x'))), 410, 'PUSH_CONFIG_EXPIRED');

  // --- what may be pushed ---
  await refused('HTML', post(config, '<html><body><h1>502 Bad Gateway</h1></body></html>'), 400, 'PUSH_NOT_JSON');
  await refused('HTML content type', post(config, '<html></html>', { 'content-type': 'text/html' }), 415, 'PUSH_UNSUPPORTED_MEDIA_TYPE');
  await refused('compressed', post(config, JSON.stringify(statusPush('x')), { 'content-encoding': 'gzip' }), 415, 'PUSH_UNSUPPORTED_MEDIA_TYPE');
  await refused('latin-1', post(config, JSON.stringify(statusPush('x')), { 'content-type': 'application/json; charset=iso-8859-1' }), 415, 'PUSH_UNSUPPORTED_MEDIA_TYPE');
  await refused('invalid JSON', post(config, '{"statusUpdate":{"taskId":"task-1",'), 400, 'PUSH_INVALID_JSON');
  await refused('invalid UTF-8', post(config, Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])), 400, 'PUSH_INVALID_UTF8');
  await refused('deep', post(config, `{"a":${'['.repeat(100)}${']'.repeat(100)}}`), 400, 'PUSH_JSON_TOO_DEEP');
  await refused('__proto__', post(config, '{"__proto__":{"x":1}}'), 400, 'PUSH_UNSAFE_JSON');
  await refused('duplicate member', post(config, '{"statusUpdate":{"taskId":"task-1","taskId":"task-2","status":{"state":"TASK_STATE_WORKING"}}}'), 400, 'PUSH_DUPLICATE_MEMBER');
  await refused('not an A2A update', post(config, '{"hello":"world"}'), 400, 'PUSH_INVALID_EVENT');
  await refused('a 0.3 Task to a 1.0 config', post(config, JSON.stringify({ kind: 'task', id: 'task-1', contextId: 'c', status: { state: 'working' } })), 400, 'PUSH_INVALID_EVENT');
  await refused('another task', post(config, JSON.stringify(statusPush('x', 'task-999'))), 403, 'PUSH_TASK_MISMATCH');
  await refused('credential in a member name', post(config, JSON.stringify({ statusUpdate: { ...(statusPush('x').statusUpdate as object), metadata: { [config.credential]: true } } })), 400, 'PUSH_CREDENTIAL_ECHOED');
  const ten = Buffer.alloc(10 * 1024 * 1024, 0x20);
  await refused('10 MB', post(config, ten), 413, 'PUSH_TOO_LARGE');

  // --- cleaned on the way through ---
  await taken('CR/LF and bidi text', post(config, JSON.stringify(statusPush('done\r\nX-Injected: yes\u202Etxt.exe\u200b\x1b]0;title\x07'))));
  await taken('the gateway credential echoed in text', post(config, JSON.stringify(statusPush(`I was called with Bearer ${config.credential}`))));
  await taken("the remote's own credential echoed", post(config, JSON.stringify(statusPush(`my upstream token: ${REMOTE_CREDENTIAL}`))));
  const replayed = JSON.stringify(statusPush('once'));
  await taken('first delivery', post(config, replayed));
  const again = await post(config, replayed);
  t.equal(again.status, 200, 'replayed: acknowledged, dropped');

  const received = await receiver.waitFor(accepted);
  await delay(200);
  t.equal(receiver.received.length, accepted, 'only what was accepted reached the local agent, once');
  const texts = received.map((r) => (JSON.parse(r.body) as { statusUpdate: { status: { message: { parts: { text: string }[] } } } }).statusUpdate.status.message.parts[0]!.text);
  t.same(texts, ['by token', 'done\nX-Injected: yestxt.exe', 'I was called with Bearer [redacted]', 'my upstream token: [redacted]', 'once']);
  for (const r of received) {
    t.notOk(r.body.includes(config.credential) || r.body.includes(REMOTE_CREDENTIAL));
    t.notOk(/[\r\u202E\u200b\x1b\x07]/u.test(r.body));
    t.equal(r.headers.authorization, 'Bearer local-agent-secret');
  }

  // --- every outcome counted and logged with its reason ---
  for (const reason of ['PUSH_CREDENTIAL_MISSING', 'PUSH_CREDENTIAL_INVALID', 'PUSH_INVALID_JSON', 'PUSH_TOO_LARGE', 'PUSH_TASK_MISMATCH', 'PUSH_CREDENTIAL_ECHOED', 'PUSH_CONFIG_EXPIRED']) {
    t.ok((await push.count('a2a_egress_push_received_total', { remote: 'weather', outcome: reason })) >= 1, `metric: ${reason}`);
    t.ok(push.logs.some((l) => l.msg === 'push' && l.outcome === reason), `log: ${reason}`);
  }
  for (const reason of ['PUSH_NOT_FOUND', 'PUSH_KEY_UNKNOWN', 'PUSH_REMOTE_UNKNOWN']) {
    t.ok((await push.count('a2a_egress_push_received_total', { remote: 'unknown', outcome: reason })) >= 1, `${reason}: the remote label is "unknown" (no configured remote is known yet)`);
  }
  t.equal(await push.count('a2a_egress_push_cleaned_total', { remote: 'weather', kind: 'redacted' }), 2);
  t.ok((await push.count('a2a_egress_push_cleaned_total', { remote: 'weather', kind: 'sanitized' })) >= 1);
  const logText = JSON.stringify(push.logs);
  for (const secret of [config.credential, 'local-agent-secret', 'caller-token-123', receiver.url]) t.notOk(logText.includes(secret), 'logs hold no credential and no local URL');
});

t.test('a 10 MB push without Content-Length is cut at the bound, not buffered', async (t) => {
  const push = await startPush(pushSettings());
  const receiver = await startReceiver();
  t.teardown(async () => {
    await push.close();
    await receiver.close();
  });
  const config = mintConfig(push.settings, receiver.url);
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(config.url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${config.credential}`, 'transfer-encoding': 'chunked' } });
    req.once('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => undefined); // the listener stops reading and closes: the write side may fail after the answer
    setTimeout(() => reject(new Error('no answer')), 10_000).unref();
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < 10 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  t.equal(status, 413);
  t.equal(await push.count('a2a_egress_push_received_total', { remote: 'weather', outcome: 'PUSH_TOO_LARGE' }), 1);
  t.equal(receiver.received.length, 0);
});

t.test('key rotation: configs made under the previous key keep working while it is listed, and stop once it is removed', async (t) => {
  const [oldKey, newKey_] = [newKey(), newKey()];
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const before = await startPush(pushSettings({ keys: [oldKey] }));
  const config = mintConfig(before.settings, receiver.url);
  await before.close();
  const path = new URL(config.url).pathname;

  const during = await startPush(pushSettings({ keys: [newKey_, oldKey] }));
  const r1 = await post(config, JSON.stringify(statusPush('still here')), {}, `${during.listener.url}${path}`);
  t.equal(r1.status, 202, 'the previous key still opens its tickets');
  await receiver.waitFor(1);
  await during.close();

  const after = await startPush(pushSettings({ keys: [newKey_] }));
  t.teardown(() => after.close());
  const r2 = await post(config, JSON.stringify(statusPush('gone')), {}, `${after.listener.url}${path}`);
  t.equal(r2.status, 404);
  t.equal(reasonOf(r2), 'PUSH_KEY_UNKNOWN');
  // A ticket sealed by hand under a random key is as unknown as a retired one.
  const stray = sealTicket(new PushKeyRing([randomBytes(32)]), { target: receiver.url, remote: 'weather', callerGeneration: '1.0', remoteGeneration: '1.0', issuedAt: Math.floor(Date.now() / 1000) });
  t.equal(reasonOf(await post(config, '{}', {}, `${after.settings.webhookBase}/${stray}`)), 'PUSH_KEY_UNKNOWN');
  t.equal(receiver.received.length, 1);
});
