import t from 'tap';
import type { Test } from 'tap';
import { OPERATIONS } from '../../src/a2a/operations.js';
import type { A2ACall } from '../../src/core/call.js';
import type { ResultOutcome } from '../../src/core/outcome.js';
import { openTicket, mintCredential } from '../../src/push/ticket.js';
import { rewritePushRequest, type PushRequestRewrite } from '../../src/push/outbound.js';
import { restorePushReply } from '../../src/push/reply.js';
import { callOf, pushSettings } from '../support/push-kit.js';

const push = pushSettings({ publicBaseUrl: 'https://gw.example.com/a2a-push/' });
const NOW = 1_800_000_000_000;
const LOCAL = 'http://127.0.0.1:3000/hooks/a2a';
const AUTH10 = { scheme: 'Bearer', credentials: 'local-agent-secret' };
const AUTH03 = { schemes: ['Bearer'], credentials: 'local-agent-secret' };

function rewritten(r: PushRequestRewrite): A2ACall {
  if (r.kind !== 'rewritten') throw new Error(`expected a rewrite, got ${JSON.stringify(r)}`);
  return r.call;
}

/** The gateway's URL and credential in what the remote receives, and nothing of the caller's. */
function assertGatewaySide(t: Test, call: A2ACall, config: Record<string, unknown>, generation: '0.3' | '1.0'): string {
  for (const secret of [LOCAL, '127.0.0.1:3000', 'local-agent-secret', 'caller-token']) t.notOk(call.paramsJson.includes(secret), `remote never sees ${secret}`);
  t.equal(call.rawJsonRpcBody, undefined, 'the caller bytes fast path is off: the bytes changed');
  t.same(JSON.parse(call.paramsJson), call.params);
  const url = config.url as string;
  t.ok(url.startsWith('https://gw.example.com/a2a-push/'), 'gateway webhook under publicBaseUrl (trailing slash dropped)');
  const ticket = url.slice('https://gw.example.com/a2a-push/'.length);
  const opened = openTicket(push.keys, ticket);
  t.ok(opened.ok);
  const credential = opened.ok ? mintCredential(opened.key, ticket) : '';
  t.equal(config.token, credential);
  t.same(config.authentication, generation === '1.0' ? { scheme: 'Bearer', credentials: credential } : { schemes: ['Bearer'], credentials: credential });
  return ticket;
}

t.test('CreateTaskPushNotificationConfig 1.0 (flat): URL and auth replaced; ticket holds the caller side', async (t) => {
  const call = callOf('CreateTaskPushNotificationConfig', '1.0', { tenant: 'acme', taskId: 'task-1', id: 'cfg-1', url: LOCAL, token: 'caller-token', authentication: AUTH10, extra: 'dropped' });
  const out = rewritten(rewritePushRequest(call, { push, nowMs: NOW }));
  t.same(Object.keys(out.params), ['tenant', 'id', 'taskId', 'url', 'token', 'authentication'], 'only known members, camelCase');
  const ticket = assertGatewaySide(t, out, out.params, '1.0');
  const opened = openTicket(push.keys, ticket);
  t.same(opened.ok && opened.ticket, {
    target: LOCAL,
    auth: { schemes: ['Bearer'], credentials: 'local-agent-secret' },
    token: 'caller-token',
    remote: 'weather',
    taskId: 'task-1',
    configId: 'cfg-1',
    callerGeneration: '1.0',
    remoteGeneration: '1.0',
    issuedAt: NOW / 1000,
  });
});

t.test('tasks/pushNotificationConfig/set 0.3 (nested), remote speaking 1.0', async (t) => {
  const call = callOf('CreateTaskPushNotificationConfig', '0.3', { taskId: 'task-1', pushNotificationConfig: { url: LOCAL, token: 'caller-token', authentication: AUTH03 } });
  const out = rewritten(rewritePushRequest(call, { push, nowMs: NOW, remoteGeneration: '1.0' }));
  t.same(Object.keys(out.params), ['taskId', 'pushNotificationConfig']);
  t.equal(out.params.taskId, 'task-1');
  const ticket = assertGatewaySide(t, out, out.params.pushNotificationConfig as Record<string, unknown>, '0.3');
  const opened = openTicket(push.keys, ticket);
  t.match(opened.ok && opened.ticket, { callerGeneration: '0.3', remoteGeneration: '1.0', taskId: 'task-1' });
  t.notOk(opened.ok && 'configId' in opened.ticket, 'no id given: the remote assigns it');
});

t.test('SendMessage / message/stream carrying a config: only the config changes', async (t) => {
  const message = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'task go' }], taskId: 'task-9' };
  const call10 = callOf('SendMessage', '1.0', { message, configuration: { returnImmediately: true, taskPushNotificationConfig: { url: LOCAL, authentication: AUTH10 } }, metadata: { k: 1 } });
  const out10 = rewritten(rewritePushRequest(call10, { push, nowMs: NOW }));
  t.same(out10.params.message, message);
  t.same(out10.params.metadata, { k: 1 });
  const configuration = out10.params.configuration as Record<string, unknown>;
  t.equal(configuration.returnImmediately, true);
  const ticket = assertGatewaySide(t, out10, configuration.taskPushNotificationConfig as Record<string, unknown>, '1.0');
  const opened = openTicket(push.keys, ticket);
  t.equal(opened.ok && opened.ticket.taskId, 'task-9', "a message continuing a task binds the config to it");

  const call03 = callOf('SendStreamingMessage', '0.3', { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] }, configuration: { blocking: false, pushNotificationConfig: { url: LOCAL, token: 'caller-token' } } });
  const out03 = rewritten(rewritePushRequest(call03, { push, nowMs: NOW }));
  assertGatewaySide(t, out03, (out03.params.configuration as Record<string, Record<string, unknown>>).pushNotificationConfig!, '0.3');
});

t.test('snake_case spellings are read, removed and written back camelCase; both spellings are refused', async (t) => {
  const snake = callOf('SendMessage', '1.0', { message: { messageId: 'm' }, configuration: { task_push_notification_config: { url: LOCAL, task_id: 't' } } });
  const out = rewritten(rewritePushRequest(snake, { push, nowMs: NOW }));
  const configuration = out.params.configuration as Record<string, unknown>;
  t.notOk('task_push_notification_config' in configuration, "the caller's spelling is gone: no remote can read the caller's URL under it");
  t.ok('taskPushNotificationConfig' in configuration);
  t.notOk(out.paramsJson.includes(LOCAL));

  const both = callOf('SendMessage', '1.0', { message: { messageId: 'm' }, configuration: { taskPushNotificationConfig: { url: LOCAL }, task_push_notification_config: { url: 'http://127.0.0.1:1/' } } });
  t.match(rewritePushRequest(both, { push, nowMs: NOW }), { kind: 'refused', error: { reason: 'INVALID_PARAMS', code: -32602, message: /given twice/ } });
  const bothTask = callOf('CreateTaskPushNotificationConfig', '1.0', { taskId: 'a', task_id: 'b', url: LOCAL });
  t.match(rewritePushRequest(bothTask, { push, nowMs: NOW }), { kind: 'refused', error: { reason: 'INVALID_PARAMS' } });
});

t.test('refusals: typed ErrorOutcomes with their reasons, nothing of the caller text in the message', async (t) => {
  const create = (config: Record<string, unknown>) => callOf('CreateTaskPushNotificationConfig', '1.0', { taskId: 't', ...config });
  t.match(rewritePushRequest(create({ url: LOCAL }), { push: undefined, nowMs: NOW }), {
    kind: 'refused',
    error: { reason: 'PUSH_NOT_ENABLED', code: -32003, a2a: { reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED' } },
  });
  const outside = rewritePushRequest(create({ url: 'https://attacker.example/steal' }), { push, nowMs: NOW });
  t.match(outside, { kind: 'refused', error: { reason: 'PUSH_TARGET_NOT_ALLOWED', code: -32602, metadata: { remote: 'weather' } } });
  t.notOk(outside.kind === 'refused' && outside.error.message.includes('attacker'));
  t.match(rewritePushRequest(create({ url: 'http://169.254.169.254/latest' }), { push, nowMs: NOW }), { error: { reason: 'PUSH_TARGET_NOT_ALLOWED' } });
  t.match(rewritePushRequest(create({ url: 'http://u:p@127.0.0.1/' }), { push, nowMs: NOW }), { error: { reason: 'PUSH_TARGET_NOT_ALLOWED' } });
  t.match(rewritePushRequest(create({ url: `${push.webhookBase}/x` }), { push: { ...push, targets: pushSettings({ allowedTargets: ['https://gw.example.com'] }).targets }, nowMs: NOW }), { error: { reason: 'PUSH_TARGET_NOT_ALLOWED', message: /own webhook/ } });
  t.match(rewritePushRequest(create({}), { push, nowMs: NOW }), { error: { reason: 'INVALID_PARAMS', message: /no url/ } });
  t.match(rewritePushRequest(create({ url: 42 }), { push, nowMs: NOW }), { error: { reason: 'INVALID_PARAMS', message: /url must be a string/ } });
  t.match(rewritePushRequest(create({ url: LOCAL, token: 'a\r\nX-Injected: 1' }), { push, nowMs: NOW }), { error: { reason: 'INVALID_PARAMS', message: /token must be printable ASCII/ } });
  t.match(rewritePushRequest(create({ url: LOCAL, authentication: { scheme: 'Bearer', credentials: 'x'.repeat(4097) } }), { push, nowMs: NOW }), { error: { reason: 'INVALID_PARAMS', message: /credentials/ } });
  t.equal(rewritePushRequest(create({ url: LOCAL, authentication: { scheme: 'Bearer', credentials: 'x'.repeat(4096) } }), { push: { ...push, maxWebhookUrlBytes: 65_536 }, nowMs: NOW }).kind, 'rewritten', '4096 bytes of credentials: just under');
  t.match(rewritePushRequest(create({ url: LOCAL, authentication: { scheme: 'Bear er', credentials: 'x' } }), { push, nowMs: NOW }), { error: { reason: 'INVALID_PARAMS', message: /scheme/ } });
});

t.test('the webhook URL bound: just under and just over', async (t) => {
  const call = (n: number) => callOf('CreateTaskPushNotificationConfig', '1.0', { taskId: 't', url: `http://127.0.0.1/${'a'.repeat(n)}` });
  const probe = rewritten(rewritePushRequest(call(0), { push, nowMs: NOW }));
  const base = Buffer.byteLength(probe.params.url as string);
  // Each 3 bytes of plaintext are 4 characters of ticket: find the longest path that fits 1024.
  const fits = (n: number) => rewritePushRequest(call(n), { push: { ...push, maxWebhookUrlBytes: 1024 }, nowMs: NOW });
  let n = Math.floor(((1024 - base) * 3) / 4);
  while (fits(n + 1).kind === 'rewritten') n++;
  while (fits(n).kind !== 'rewritten') n--;
  const under = rewritten(fits(n));
  t.ok(Buffer.byteLength(under.params.url as string) <= 1024, 'just under: carried');
  t.match(fits(n + 3), { kind: 'refused', error: { reason: 'PUSH_CONFIG_TOO_LARGE', code: -32602 } }, 'just over: refused');
});

t.test('calls without a push config are left alone (same object, bytes kept)', async (t) => {
  for (const call of [
    callOf('SendMessage', '1.0', { message: { messageId: 'm' } }),
    callOf('SendMessage', '1.0', { message: { messageId: 'm' }, configuration: { returnImmediately: true } }),
    callOf('GetTask', '1.0', { id: 't' }),
    callOf('GetTaskPushNotificationConfig', '1.0', { taskId: 't', id: 'c' }),
    callOf('DeleteTaskPushNotificationConfig', '0.3', { id: 't', pushNotificationConfigId: 'c' }),
  ]) {
    t.same(rewritePushRequest(call, { push, nowMs: NOW }), { kind: 'unchanged' }, call.operation.name);
    t.same(rewritePushRequest(call, { push: undefined, nowMs: NOW }), { kind: 'unchanged' }, `${call.operation.name} without push`);
  }
});

// ---- replies ----

function result(value: unknown): ResultOutcome {
  return { kind: 'result', json: JSON.stringify(value), value };
}

function minted(generation: '0.3' | '1.0', config: Record<string, unknown>, remote = 'weather') {
  const call = generation === '1.0'
    ? callOf('CreateTaskPushNotificationConfig', '1.0', { taskId: 'task-1', ...config }, remote)
    : callOf('CreateTaskPushNotificationConfig', '0.3', { taskId: 'task-1', pushNotificationConfig: config }, remote);
  return rewritten(rewritePushRequest(call, { push, nowMs: NOW })).params;
}

t.test('create / get / list replies show the caller its own URL and credentials again (1.0)', async (t) => {
  const sent = minted('1.0', { id: 'cfg-1', url: LOCAL, token: 'caller-token', authentication: AUTH10 });
  const echoed = { ...sent, id: 'cfg-1' };
  const mine = { taskId: 'task-1', id: 'cfg-1', url: LOCAL, token: 'caller-token', authentication: AUTH10 };
  for (const name of ['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig'] as const) {
    const r = restorePushReply({ remote: 'weather', operation: OPERATIONS[name], generation: '1.0' }, result(echoed), push);
    t.match(r, { kind: 'restored', restored: 1, dropped: 0 }, name);
    if (r.kind === 'restored') {
      t.same(r.outcome.value, mine);
      t.same(JSON.parse(r.outcome.json), mine);
      t.notOk(r.outcome.json.includes('gw.example.com') || r.outcome.json.includes(String(sent.token)), 'nothing of the gateway side');
    }
  }
  const foreign = { taskId: 'task-1', id: 'other', url: 'https://elsewhere.example/h', token: 'theirs' };
  const list = restorePushReply({ remote: 'weather', operation: OPERATIONS.ListTaskPushNotificationConfigs, generation: '1.0' }, result({ configs: [echoed, foreign], nextPageToken: 'p2' }), push);
  t.match(list, { kind: 'restored', restored: 1, dropped: 0 });
  t.same(list.kind === 'restored' && list.outcome.value, { nextPageToken: 'p2', configs: [mine, foreign] }, 'a config registered some other way is shown as the remote has it');
});

t.test('0.3 replies: {taskId, pushNotificationConfig} and the list array', async (t) => {
  const sent = minted('0.3', { url: LOCAL, token: 'caller-token', authentication: AUTH03 });
  const echoed = { taskId: 'task-1', pushNotificationConfig: { ...(sent.pushNotificationConfig as object), id: 'task-1' } };
  const mine = { taskId: 'task-1', pushNotificationConfig: { id: 'task-1', url: LOCAL, token: 'caller-token', authentication: AUTH03 } };
  const get = restorePushReply({ remote: 'weather', operation: OPERATIONS.GetTaskPushNotificationConfig, generation: '0.3' }, result(echoed), push);
  t.same(get.kind === 'restored' && get.outcome.value, mine);
  const list = restorePushReply({ remote: 'weather', operation: OPERATIONS.ListTaskPushNotificationConfigs, generation: '0.3' }, result([echoed]), push);
  t.same(list.kind === 'restored' && list.outcome.value, [mine]);
});

t.test('unreadable gateway configs: refused alone, left out of a list; echoed credentials refused', async (t) => {
  const sent = minted('1.0', { url: LOCAL, authentication: AUTH10 });
  const otherGateway = pushSettings({ publicBaseUrl: 'https://gw.example.com/a2a-push' });
  const get = (value: unknown, generation: '0.3' | '1.0' = '1.0', remote = 'weather') =>
    restorePushReply({ remote, operation: OPERATIONS.GetTaskPushNotificationConfig, generation }, result(value), push);
  const retired = restorePushReply({ remote: 'weather', operation: OPERATIONS.GetTaskPushNotificationConfig, generation: '1.0' }, result(sent), otherGateway);
  t.match(retired, { kind: 'refused', error: { reason: 'PUSH_CONFIG_UNREADABLE', code: -32006 } }, 'sealed under a key no longer held');
  const url = sent.url as string;
  t.match(get({ ...sent, url: `${url.slice(0, -2)}${url.endsWith('xx') ? 'yy' : 'xx'}` }), { kind: 'refused', error: { reason: 'PUSH_CONFIG_UNREADABLE' } }, 'altered');
  t.match(get(sent, '1.0', 'news'), { kind: 'refused', error: { reason: 'PUSH_CONFIG_UNREADABLE' } }, "another remote's ticket is never opened for this one");
  t.match(get({ ...sent, taskId: 'task-2' }), { kind: 'refused', error: { reason: 'PUSH_CONFIG_UNREADABLE' } }, 'another task');
  const list = restorePushReply({ remote: 'weather', operation: OPERATIONS.ListTaskPushNotificationConfigs, generation: '1.0' }, result({ configs: [sent, { ...sent, url: `${url}x` }] }), push);
  t.match(list, { kind: 'restored', restored: 1, dropped: 1 });
  t.match(get({ ...sent, id: String(sent.token) }), { kind: 'refused', error: { reason: 'CREDENTIAL_ECHOED', code: -32006 } }, 'the minted credential echoed in an id');
  t.same(get({ taskId: 't', url: 'https://elsewhere.example/' }), { kind: 'unchanged' });
  t.same(restorePushReply({ remote: 'weather', operation: OPERATIONS.GetTask, generation: '1.0' }, result(sent), push), { kind: 'unchanged' }, 'other operations untouched');
  t.same(get(sent, '1.0'), get(JSON.parse(JSON.stringify(sent).replace(/\//g, '\\/'))), 'escaped slashes in the remote text change nothing (decided on parsed values)');
});

t.test('a send carrying the other generation’s push config member is refused, not passed on unchecked', async (t) => {
  const settings = pushSettings();
  const message10 = { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] };
  const wrong10 = rewritePushRequest(callOf('SendMessage', '1.0', { message: message10, configuration: { pushNotificationConfig: { url: 'https://elsewhere.example/x', token: 'tok' } } }), { push: settings, nowMs: Date.now() });
  t.match(wrong10, { kind: 'refused', error: { reason: 'INVALID_PARAMS', message: /pushNotificationConfig is not an A2A 1\.0 member/ } });
  const message03 = { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] };
  const wrong03 = rewritePushRequest(callOf('SendMessage', '0.3', { message: message03, configuration: { task_push_notification_config: { url: 'https://elsewhere.example/x' } } }), { push: settings, nowMs: Date.now() });
  t.match(wrong03, { kind: 'refused', error: { reason: 'INVALID_PARAMS' } });
  const nulled = rewritePushRequest(callOf('SendMessage', '1.0', { message: message10, configuration: { pushNotificationConfig: null } }), { push: settings, nowMs: Date.now() });
  t.same(nulled, { kind: 'unchanged' }, 'a null member is no config');
});
