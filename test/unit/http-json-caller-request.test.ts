import t, { type Test } from 'tap';
import type { IncomingHttpHeaders } from 'node:http';
import { gatewayErrors } from '../../src/envelope/codes.js';
import { parseRestCall, type RestCallerContext, type RestCallerParse } from '../../src/bindings/http-json/caller-request.js';
import { REASON_STATUS } from '../../src/bindings/status-map.js';

const ctx: RestCallerContext = { remote: 'weather', requestId: 'req-1', forwarded: { traceparent: 'tp' }, maxRequestBytes: 4096, maxJsonDepth: 16 };
const JSON_CT = { 'content-type': 'application/json', 'a2a-version': '1.0' };
const MESSAGE = '{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}';

function parse(method: string, target: string, opts: { body?: string | Buffer; headers?: IncomingHttpHeaders; ctx?: Partial<RestCallerContext> } = {}): RestCallerParse {
  const q = target.indexOf('?');
  return parseRestCall(
    {
      method,
      path: q === -1 ? target : target.slice(0, q),
      query: q === -1 ? '' : target.slice(q + 1),
      headers: opts.headers ?? JSON_CT,
      body: opts.body === undefined ? undefined : Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(opts.body),
    },
    { ...ctx, ...opts.ctx },
  );
}

function ok(r: RestCallerParse) {
  if (!r.ok) throw new Error(`refused: ${r.error.reason} ${r.error.message}`);
  return r.call;
}

function refused(t: Test, r: RestCallerParse, reason: keyof typeof gatewayErrors, message?: RegExp) {
  t.equal(r.ok, false, `refused with ${reason}`);
  if (r.ok) return undefined;
  t.equal(r.error.reason, reason);
  t.equal(r.error.code, gatewayErrors[reason].code);
  t.equal(r.error.metadata.remote, 'weather');
  t.ok(r.error.message.startsWith(gatewayErrors[reason].message));
  if (message) t.match(r.error.message, message);
  return r;
}

t.test('SendMessage: the caller body is the call, byte for byte', async (t) => {
  const body = '{ "message" : {"messageId":"m1","role":"ROLE_USER","parts":[{"text":"h\\u00e9"}]},\n "unknownMember": [1, 2.50] }';
  const call = ok(parse('POST', '/message:send', { body: `\n${body}\n` }));
  t.equal(call.operation.name, 'SendMessage');
  t.equal(call.generation, '1.0');
  t.equal(call.paramsJson, body, 'exact text, unknown members kept, only surrounding whitespace trimmed');
  t.same(call.params, JSON.parse(body));
  t.equal(call.tenant, undefined);
  t.same(call.service, { a2aVersion: '1.0', forwarded: { traceparent: 'tp' } });
  t.same(call.caller, { binding: 'http+json', requestId: 'req-1' });
  t.equal(call.rawJsonRpcBody, undefined);
  t.equal(ok(parse('POST', '/message:stream', { body: MESSAGE })).operation.name, 'SendStreamingMessage');
  t.equal(ok(parse('POST', '/message:send', { body: `\ufeff${MESSAGE}` })).paramsJson, MESSAGE, 'a BOM is dropped');
});

t.test('path fields are merged into the message: spliced in when missing, the path wins when the body differs', async (t) => {
  const spliced = ok(parse('POST', '/acme/message:send', { body: MESSAGE }));
  t.equal(spliced.tenant, 'acme');
  t.equal(spliced.paramsJson, `{"tenant":"acme",${MESSAGE.slice(1)}`);
  t.same(JSON.parse(spliced.paramsJson), spliced.params);

  const same = ok(parse('POST', '/acme/message:send', { body: `{"tenant":"acme",${MESSAGE.slice(1)}` }));
  t.equal(same.paramsJson, `{"tenant":"acme",${MESSAGE.slice(1)}`, 'agreeing body untouched');

  const other = ok(parse('POST', '/acme/message:send', { body: `{"tenant":"evil",${MESSAGE.slice(1)}` }));
  t.equal(other.params.tenant, 'acme');
  t.equal(JSON.parse(other.paramsJson).tenant, 'acme', 'path wins, re-serialized');

  const cfg = ok(parse('POST', '/tasks/t%201/pushNotificationConfigs', { body: '{"task_id":"other","url":"https://h.example/x","id":"c1"}' }));
  t.same(cfg.params, { taskId: 't 1', url: 'https://h.example/x', id: 'c1' }, 'the snake_case spelling is replaced by the path value');
  t.equal(cfg.paramsJson, JSON.stringify(cfg.params));

  const cancel = ok(parse('POST', '/tasks/t1:cancel', { body: '{ }' }));
  t.equal(cancel.paramsJson, '{"id":"t1"}', 'an empty object gets the path fields');
  const withMeta = ok(parse('POST', '/tasks/t1:cancel', { body: '{"metadata":{"a":1}}' }));
  t.equal(withMeta.paramsJson, '{"id":"t1","metadata":{"a":1}}');
  const noBody = ok(parse('POST', '/tasks/t1:cancel', { headers: { 'a2a-version': '1.0' } }));
  t.equal(noBody.paramsJson, '{"id":"t1"}', 'no body: serialized from the path');
});

t.test('GET/DELETE operations take their fields from path and query (§11.5)', async (t) => {
  const get = ok(parse('GET', '/tasks/t1?historyLength=2&A2A-Version=1.0', { headers: {} }));
  t.same(get.params, { id: 't1', historyLength: 2 });
  t.equal(get.paramsJson, '{"id":"t1","historyLength":2}');
  t.equal(get.service.a2aVersion, '1.0', 'version from the query');

  const list = ok(parse('GET', '/acme/tasks?status=TASK_STATE_COMPLETED&pageSize=10&includeArtifacts=true&tenant=ignored'));
  t.same(list.params, { tenant: 'acme', status: 'TASK_STATE_COMPLETED', pageSize: 10, includeArtifacts: true });
  t.equal(list.tenant, 'acme');
  t.equal(ok(parse('GET', '/tasks?tenant=q')).tenant, 'q', 'a tenant in the query without a tenant path');

  for (const verb of ['GET', 'POST']) {
    const sub = ok(parse(verb, '/tasks/t1:subscribe'));
    t.equal(sub.operation.name, 'SubscribeToTask', verb);
    t.same(sub.params, { id: 't1' });
  }
  t.same(ok(parse('GET', '/tasks/t1/pushNotificationConfigs/c1')).params, { taskId: 't1', id: 'c1' });
  t.same(ok(parse('DELETE', '/tasks/t1/pushNotificationConfigs/c1')).params, { taskId: 't1', id: 'c1' });
  t.same(ok(parse('GET', '/tasks/t1/pushNotificationConfigs?pageSize=5')).params, { taskId: 't1', pageSize: 5 });
  t.same(ok(parse('GET', '/extendedAgentCard')).params, {});
  t.same(ok(parse('GET', '/tasks/t1', { body: 'not json at all' })).params, { id: 't1' }, 'a GET body is not read (nor sent)');
});

t.test('routing failures: 404, 405 with Allow, unsafe paths', async (t) => {
  refused(t, parse('GET', '/nope'), 'UNKNOWN_OPERATION');
  const r = refused(t, parse('PUT', '/message:send', { body: MESSAGE }), 'HTTP_METHOD_NOT_ALLOWED', /SendMessage takes POST/);
  t.same(r?.error.headers, { allow: 'POST' });
  t.equal(r?.operation?.name, 'SendMessage');
  refused(t, parse('GET', '/tasks/a%2Fb'), 'INVALID_PATH');
  refused(t, parse('GET', '/tasks/%2e%2e'), 'INVALID_PATH');
});

t.test('A2A 0.3 REST is recognized and refused precisely', async (t) => {
  const r = refused(t, parse('POST', '/v1/message:send', { body: MESSAGE, headers: { 'content-type': 'application/json' } }), 'UNSUPPORTED_BINDING_VERSION');
  t.equal(r?.generation, '0.3');
  t.equal(r?.operation?.name, 'SendMessage');
  t.equal(r?.error.a2a?.reason, 'VERSION_NOT_SUPPORTED');
  refused(t, parse('GET', '/v1/tasks/t1', { headers: { 'a2a-version': '0.3' } }), 'UNSUPPORTED_BINDING_VERSION');
  t.equal(ok(parse('GET', '/v1/tasks/t1')).tenant, 'v1', 'with A2A-Version 1.0, v1 is a tenant');
});

t.test('service parameters are checked before anything else', async (t) => {
  refused(t, parse('GET', '/tasks/t1?A2A-Version=0.3'), 'INVALID_VERSION', /more than one/);
  refused(t, parse('GET', '/tasks/t1', { headers: { 'a2a-version': 'latest' } }), 'INVALID_VERSION');
  refused(t, parse('GET', '/tasks/t1', { headers: { 'a2a-version': '1.0', 'a2a-extensions': 'nope' } }), 'INVALID_EXTENSIONS');
  refused(t, parse('GET', `/tasks/t1?${'a=1&'.repeat(40)}`), 'INVALID_PARAMS', /query parameters/);
});

t.test('Content-Type is checked as the @a2a-js/sdk server checks it', async (t) => {
  for (const ct of ['application/json', 'application/a2a+json', 'Application/JSON; charset=utf-8', 'application/a2a+json;v=1']) {
    t.equal(parse('POST', '/message:send', { body: MESSAGE, headers: { 'content-type': ct } }).ok, true, ct);
  }
  t.equal(parse('POST', '/message:send', { body: MESSAGE, headers: {} }).ok, true, 'none: read as JSON');
  for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx', 'multipart/form-data']) {
    const r = refused(t, parse('POST', '/message:send', { body: MESSAGE, headers: { 'content-type': ct } }), 'UNSUPPORTED_CONTENT_TYPE');
    t.equal(r?.error.a2a?.reason, 'CONTENT_TYPE_NOT_SUPPORTED', ct);
  }
  t.equal(REASON_STATUS.UNSUPPORTED_CONTENT_TYPE.http, 415);
  t.equal(parse('POST', '/tasks/t1:cancel', { headers: { 'content-type': 'text/plain' } }).ok, true, 'no body: nothing to type');
});

t.test('the body is bounded: just under the limit passes, just over is REQUEST_TOO_LARGE', async (t) => {
  const pad = (n: number) => `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"${'x'.repeat(n)}"}]}}`;
  const base = pad(0).length;
  const limit = ctx.maxRequestBytes;
  t.equal(parse('POST', '/message:send', { body: pad(limit - base) }).ok, true);
  refused(t, parse('POST', '/message:send', { body: pad(limit - base + 1) }), 'REQUEST_TOO_LARGE');
});

t.test('bad bodies get typed errors and never reach a call', async (t) => {
  refused(t, parse('POST', '/message:send', { body: Buffer.from([0x7b, 0xff, 0x7d]) }), 'PARSE_ERROR', /UTF-8/);
  refused(t, parse('POST', '/message:send', { body: '{"message":' }), 'PARSE_ERROR');
  refused(t, parse('POST', '/message:send', { body: `{"message":{"messageId":"a","messageId":"b","role":"ROLE_USER","parts":[{"text":"x"}]}}` }), 'INVALID_PARAMS', /"messageId" appears twice in message/);
  refused(t, parse('POST', '/message:send', { body: `{"message":{"messageId":"a","role":"ROLE_USER","parts":[{"text":"x","text":"y"}]}}` }), 'INVALID_PARAMS', /"text" appears twice in message.parts\[0\]/);
  refused(t, parse('POST', '/message:send', { body: `{"__proto__":{"x":1},${MESSAGE.slice(1)}` }), 'INVALID_PARAMS', /__proto__/);
  refused(t, parse('POST', '/message:send', { body: `{"constructor":{"prototype":{}},${MESSAGE.slice(1)}` }), 'INVALID_PARAMS', /__proto__ or constructor/);
  refused(t, parse('POST', '/message:send', { body: `{"metadata":{"s":"\\ud800"},${MESSAGE.slice(1)}` }), 'INVALID_PARAMS', /lone surrogate/);
  refused(t, parse('POST', '/message:send', { body: '[]' }), 'INVALID_PARAMS', /an array, not a JSON object/);
  refused(t, parse('POST', '/message:send', { body: 'null' }), 'INVALID_PARAMS', /null/);
  refused(t, parse('POST', '/message:send', { body: '"x"' }), 'INVALID_PARAMS', /a string/);
  refused(t, parse('POST', '/message:send', { body: '{"\u00e9\u202e":1,"\u00e9\u202e":2}' }), 'INVALID_PARAMS', /"\*" appears twice in the body/);
  t.equal(parse('POST', '/message:send', { body: ' \n ' }).ok, false, 'whitespace is no body: message is required');
});

t.test('nesting depth is bounded: just under passes, just over is refused', async (t) => {
  const nested = (levels: number) => `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":${'['.repeat(levels)}${']'.repeat(levels)}}]}}`;
  // The body's own objects and arrays take 4 levels before `data`.
  t.equal(parse('POST', '/message:send', { body: nested(ctx.maxJsonDepth - 4) }).ok, true);
  refused(t, parse('POST', '/message:send', { body: nested(ctx.maxJsonDepth - 3) }), 'INVALID_PARAMS', /deeper than 16/);
});

t.test('ProtoJSON validation of the request message', async (t) => {
  const r = refused(t, parse('POST', '/message:send', { body: '{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}' }), 'INVALID_PARAMS', /message\.messageId is required/);
  t.equal(r?.error.metadata.field, 'message.messageId');
  refused(t, parse('POST', '/message:send', { body: '{}' }), 'INVALID_PARAMS', /message is required/);
  refused(t, parse('POST', '/message:send', { body: '{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}' }), 'INVALID_PARAMS', /parts must not be empty/);
  refused(t, parse('POST', '/message:send', { body: '{"message":{"messageId":"m","role":"ROLE_ROBOT","parts":[{"text":"x"}]}}' }), 'INVALID_PARAMS', /message\.role/);
  refused(t, parse('POST', '/message:send', { body: `{"configuration":{"historyLength":1.5},${MESSAGE.slice(1)}` }), 'INVALID_PARAMS', /historyLength/);
  refused(t, parse('POST', '/tasks/t1/pushNotificationConfigs', { body: '{"token":"x"}' }), 'INVALID_PARAMS', /url is required/);
  t.equal(parse('POST', '/message:send', { body: '{"message":{"message_id":"m","role":2,"parts":[{"text":"x"}]},"configuration":{"history_length":"3"}}' }).ok, true, 'proto names, enum numbers and int32 strings are ProtoJSON');
  refused(t, parse('POST', '/message:send', { body: '{"message":{"messageId":"m","message_id":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}' }), 'INVALID_PARAMS', /both in camelCase and in snake_case/);
  t.notMatch(r?.error.message ?? '', /ROLE_USER/, 'no caller value in the message');
});
