import t, { type Test } from 'tap';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { gatewayErrors } from '../../src/envelope/codes.js';
import { normalizeRestReply, type RestNormalizePolicy } from '../../src/bindings/http-json/upstream-reply.js';
import { normalizeRestEvent, normalizeRestStreamBody, streamReplyKind } from '../../src/bindings/http-json/upstream-events.js';
import type { ErrorOutcome, Outcome } from '../../src/core/outcome.js';
import type { SseEvent } from '../../src/stream/sse-parser.js';
import { sseEvent } from '../support/sse-events.js';

const policy: RestNormalizePolicy = { remote: 'weather', maxErrorMessageBytes: 64, maxJsonDepth: 8, keepRemoteErrorData: false };
const keep: RestNormalizePolicy = { ...policy, keepRemoteErrorData: true };
const TASK = '{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}';

const reply = (status: number, body: string | Buffer, op = OPERATIONS.GetTask, p = policy): Outcome =>
  normalizeRestReply(op, { status, body: Buffer.isBuffer(body) ? body : Buffer.from(body) }, p);

function err(o: Outcome): ErrorOutcome {
  if (o.kind !== 'error') throw new Error(`expected an error, got ${o.json}`);
  return o;
}

function gateway(t: Test, o: Outcome, reason: keyof typeof gatewayErrors, status?: number): ErrorOutcome {
  const e = err(o);
  t.equal(e.reason, reason);
  t.equal(e.code, gatewayErrors[reason].code);
  t.ok(e.message.startsWith(gatewayErrors[reason].message), 'catalogue text');
  t.equal(e.metadata.remote, 'weather');
  if (status !== undefined) t.equal(e.metadata.httpStatus, String(status));
  t.equal(e.remoteStatus, undefined, 'a gateway failure has no remote status');
  return e;
}

t.test('2xx: one JSON object is the result, its bytes as they are', async (t) => {
  const o = reply(200, `\ufeff \n${TASK}\n`);
  t.same(o, { kind: 'result', json: TASK, value: JSON.parse(TASK) });
  t.equal((reply(201, '{"url":"u","id":"c"}', OPERATIONS.CreateTaskPushNotificationConfig) as { json: string }).json, '{"url":"u","id":"c"}');
  t.same(reply(200, '{"task":{"id":"t"},"extra":{"x":[1]}}', OPERATIONS.SendMessage).kind, 'result', 'unknown members pass');
});

t.test('delete: 204 / empty / {} is the Empty result', async (t) => {
  for (const [status, body] of [[204, ''], [200, ''], [200, '{}'], [200, ' { } ']] as const) {
    t.same(reply(status, body, OPERATIONS.DeleteTaskPushNotificationConfig), { kind: 'result', json: '{}', value: {} }, `${status} ${JSON.stringify(body)}`);
  }
  gateway(t, reply(200, 'OK', OPERATIONS.DeleteTaskPushNotificationConfig), 'NON_JSON_RESPONSE');
});

t.test('2xx that is not one JSON object: typed gateway errors, nothing of the body', async (t) => {
  gateway(t, reply(200, ''), 'EMPTY_RESPONSE', 200);
  t.match(err(reply(204, '')).message, /HTTP 204/);
  gateway(t, reply(200, '<html>secret-marker</html>'), 'NON_JSON_RESPONSE');
  gateway(t, reply(200, 'Traceback (most recent call last): secret-marker'), 'NON_JSON_RESPONSE');
  gateway(t, reply(200, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])), 'INVALID_UTF8');
  gateway(t, reply(200, '{"id":'), 'INVALID_JSON');
  gateway(t, reply(200, '{"id":"\\udc00"}'), 'INVALID_JSON');
  gateway(t, reply(200, '{"__proto__":{"admin":true}}'), 'UNSAFE_JSON');
  gateway(t, reply(200, `${'['.repeat(9)}${']'.repeat(9)}`), 'JSON_TOO_DEEP');
  t.equal(reply(200, `{"a":${'['.repeat(7)}${']'.repeat(7)}}`).kind, 'result', 'depth 8: just under the bound');
  gateway(t, reply(200, `{"a":${'['.repeat(8)}${']'.repeat(8)}}`), 'JSON_TOO_DEEP');
  t.match(err(reply(200, '[{"id":"t"}]')).message, /body is an array/);
  t.match(err(reply(200, '"secret-marker"')).message, /body is a string/);
  t.notMatch(err(reply(200, '"secret-marker"')).message, /secret-marker/);
  gateway(t, reply(200, 'null'), 'INVALID_RESPONSE_MESSAGE');
  t.match(err(reply(200, '{"task":{"id":"a"},"task":{"id":"b"}}', OPERATIONS.SendMessage)).message, /duplicate "task" member/);
  t.equal(reply(200, '{"task":{"id":"a","id":"b"}}', OPERATIONS.SendMessage).kind, 'result', 'repeats below the top level are the result validator\'s business');
  t.match(err(reply(200, '{"error":{"code":404,"message":"x"}}')).message, /success status with an error body/);
});

t.test('validateResults runs through checkResult', async (t) => {
  const strict: RestNormalizePolicy = { ...policy, checkResult: (op, r) => (op.name === 'GetTask' && !(r as { id?: unknown }).id ? 'result.id is required' : undefined) };
  gateway(t, reply(200, '{"status":{}}', OPERATIONS.GetTask, strict), 'INVALID_RESULT');
  t.equal(reply(200, TASK, OPERATIONS.GetTask, strict).kind, 'result');
});

t.test('§11.6 Status bodies: the remote typed error, sanitized and bounded', async (t) => {
  const body = JSON.stringify({
    error: {
      code: 404,
      status: 'NOT_FOUND',
      message: 'Task \u202enot\u0007 found: t1',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't1\u200b', n: 3, obj: {}, 'k\u0000': 'v' } }],
      stack: 'at secret (file.js:1)',
    },
    extra: 'secret-marker',
  });
  const e = err(reply(404, body));
  t.same(e, {
    kind: 'error',
    code: -32001,
    message: 'Task not found: t1',
    reason: 'REMOTE_ERROR',
    metadata: { remote: 'weather', httpStatus: '404' },
    a2a: { reason: 'TASK_NOT_FOUND', metadata: { taskId: 't1', n: '3', k: 'v' } },
    details: [],
    remoteStatus: { http: 404 },
  });
  t.notMatch(JSON.stringify(e), /secret/);
});

t.test('Status bodies: code from the A2A ErrorInfo, else from the status; message missing, long or odd', async (t) => {
  const status = (http: number, error: unknown) => err(reply(http, JSON.stringify({ error })));
  t.equal(status(400, { code: 400, status: 'FAILED_PRECONDITION', message: 'm', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_CANCELABLE', domain: 'a2a-protocol.org' }] }).code, -32002);
  t.equal(status(400, { code: 400, details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_CANCELABLE', domain: 'evil.example' }] }).code, -32602, 'an ErrorInfo of another domain names no A2A error');
  t.equal(status(400, { status: 'INVALID_ARGUMENT', message: 'x', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_PARAMS', domain: 'a2a-protocol.org' }] }).a2a?.reason, 'INVALID_PARAMS', "the SDK's RequestMalformed kept");
  t.equal(status(503, { message: 'busy' }).code, -32603);
  t.equal(status(501, {}).code, -32601);
  const noMessage = status(404, { code: 404, details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }] });
  t.equal(noMessage.message, 'Task not found', 'the standard message');
  t.equal(status(500, { message: 42 }).message, 'Internal error');
  const long = status(500, { message: `${'é'.repeat(100)}` });
  t.ok(Buffer.byteLength(long.message) <= 64);
  t.equal(long.metadata.messageTruncated, 'true');
  t.equal(status(500, 'plain string error').message, 'plain string error', '{"error":"text"} reads like a JSON-RPC string error');
  gateway(t, reply(500, '{"error":[1,2]}'), 'UPSTREAM_HTTP_ERROR');
  gateway(t, reply(500, '{"error":{"code":1},"error":{"code":2}}'), 'UPSTREAM_HTTP_ERROR');
  gateway(t, reply(500, '{"error":{"message":"a","message":"b"}}'), 'UPSTREAM_HTTP_ERROR');
});

t.test('remote details: kept only with keepRemoteErrorData, reserved ErrorInfos never', async (t) => {
  const body = JSON.stringify({
    error: {
      message: 'x',
      details: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'FORGED', domain: 'a2a-egress', metadata: {} },
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' },
        { '@type': 'type.googleapis.com/google.rpc.DebugInfo', detail: 'd\u202e' },
        'not an object',
      ],
    },
  });
  t.same(err(reply(404, body, OPERATIONS.GetTask, keep)).details, [{ '@type': 'type.googleapis.com/google.rpc.DebugInfo', detail: 'd' }]);
  t.same(err(reply(404, body)).details, []);
});

t.test('problem+json (§6.4) and the A2A 0.3 REST error body are read too', async (t) => {
  const problem = err(reply(400, JSON.stringify({ type: 'https://a2a-protocol.org/errors/version-not-supported', title: 'Protocol Version Not Supported', status: 400, detail: 'version 0.5 is not supported', supportedVersions: ['0.3'] })));
  t.equal(problem.code, -32009);
  t.equal(problem.message, 'version 0.5 is not supported');
  t.equal(problem.a2a?.reason, 'VERSION_NOT_SUPPORTED');
  t.equal(err(reply(404, '{"type":"about:blank","title":"Not Found"}')).message, 'Not Found');
  t.equal(err(reply(500, '{"type":"error","message":"db down"}')).message, 'db down', 'a problem-like body with only a message');
  t.equal(err(reply(404, '{"type":"https://evil.example/errors/task-not-found","title":"x"}')).code, -32603);
  const legacy = err(reply(404, '{"code":-32001,"message":"Task not found","data":null}'));
  t.equal(legacy.code, -32001);
  t.equal(err(reply(500, '{"code":-32099,"message":"custom"}')).code, -32603, 'an unknown JSON-RPC code: from the status');
  t.equal(err(reply(500, '{"message":"m"}')).metadata.remoteCode, 'missing');
});

t.test('non-JSON and unusable error bodies: UPSTREAM_HTTP_ERROR naming the status only', async (t) => {
  for (const [status, body] of [
    [500, '<!DOCTYPE html><html><body><h1>secret-marker</h1></body></html>'],
    [404, '<pre>Cannot GET /rest/tasks/x</pre>\n    at Layer.handle (secret-marker/express/lib/router/layer.js:95:5)'],
    [502, 'Bad Gateway secret-marker'],
    [500, ''],
    [500, '["secret-marker"]'],
    [500, '"secret-marker"'],
    [500, '42'],
    [500, '{"unrelated":"secret-marker"}'],
    [503, Buffer.from([0x7b, 0xff])],
    [500, '{"error":'],
    [302, ''],
    [500, `{"error":${'['.repeat(20)}${']'.repeat(20)}}`],
  ] as const) {
    const e = gateway(t, reply(status, body), 'UPSTREAM_HTTP_ERROR', status);
    t.equal(e.message, `${gatewayErrors.UPSTREAM_HTTP_ERROR.message}: HTTP ${status}`);
    t.notMatch(JSON.stringify(e), /secret-marker|Layer|DOCTYPE/);
  }
});

t.test('streams: only a 2xx text/event-stream is a stream; anything else is one Outcome (a single valid result stays one)', async (t) => {
  t.equal(streamReplyKind(200, 'text/event-stream'), 'events');
  t.equal(streamReplyKind(200, 'Text/Event-Stream; charset=utf-8'), 'events');
  t.equal(streamReplyKind(200, 'application/json'), 'body');
  t.equal(streamReplyKind(200, undefined), 'body');
  t.equal(streamReplyKind(404, 'text/event-stream'), 'body');
  const body = (status: number, text: string) => normalizeRestStreamBody(OPERATIONS.SendStreamingMessage, { status, body: Buffer.from(text) }, policy);
  const refusal = (status: number, text: string) => {
    const out = body(status, text);
    if (out.kind !== 'error') throw new Error(`a result for HTTP ${status} ${text}`);
    return out;
  };
  const single = body(200, `{"task":${TASK}}`);
  t.same(single.kind === 'result' && single.json, `{"task":${TASK}}`, 'a single StreamResponse where a stream was asked: the result, its bytes as sent');
  t.equal(refusal(200, `[{"task":${TASK}}]`).reason, 'NOT_AN_EVENT_STREAM', 'a 2xx JSON body that is no StreamResponse');
  t.equal(refusal(200, '{"error":{"code":404,"message":"x"}}').metadata.cause, 'INVALID_RESPONSE_MESSAGE', 'nor is an error body with a success status');
  t.equal(refusal(200, '<html>ok</html>').metadata.cause, 'NON_JSON_RESPONSE', 'its cause says why');
  const typed = refusal(400, '{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"terminal","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]}}');
  t.equal(typed.code, -32004, 'a JSON error before the stream is the remote typed error');
  t.equal(refusal(500, '<html>x</html>').reason, 'UPSTREAM_HTTP_ERROR');
});

const event = sseEvent;
const ev = (e: SseEvent, p = policy) => normalizeRestEvent(OPERATIONS.SendStreamingMessage, e, { policy: p, httpStatus: 200 }, 3);

t.test('events: each StreamResponse object is a result; anything else ends the stream with INVALID_EVENT', async (t) => {
  t.same(ev(event('{"statusUpdate":{"taskId":"t"}}')), { outcome: { kind: 'result', json: '{"statusUpdate":{"taskId":"t"}}', value: { statusUpdate: { taskId: 't' } } }, final: false });
  for (const [data, cause, invalidUtf8] of [
    ['not json secret-marker', 'INVALID_JSON', false],
    ['[1]', 'INVALID_RESPONSE_MESSAGE', false],
    ['"s"', 'INVALID_RESPONSE_MESSAGE', false],
    ['{"error":{"code":1}}', 'INVALID_RESPONSE_MESSAGE', false],
    ['{"task":{},"task":{}}', 'INVALID_RESPONSE_MESSAGE', false],
    ['{"__proto__":{}}', 'UNSAFE_JSON', false],
    [`${'['.repeat(9)}${']'.repeat(9)}`, 'JSON_TOO_DEEP', false],
    ['   ', 'EMPTY_RESPONSE', false],
    ['{"task":{}}', 'INVALID_UTF8', true],
  ] as const) {
    const item = ev(event(data, 'message', invalidUtf8));
    t.equal(item.final, true, data);
    const e = err(item.outcome);
    t.equal(e.reason, 'INVALID_EVENT');
    t.same(e.metadata, { remote: 'weather', httpStatus: '200', cause, event: '3' }, data);
    t.notMatch(e.message, /secret-marker/);
  }
  const checked = normalizeRestEvent(OPERATIONS.SendStreamingMessage, event('{}'), { policy: { ...policy, checkResult: () => 'no payload' }, httpStatus: 200 }, 1);
  t.equal(err(checked.outcome).metadata.cause, 'INVALID_RESULT');
});

t.test('event: error carries the remote Status and ends the stream', async (t) => {
  const sdk = ev(event('{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found: t9","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}', 'error'));
  t.equal(sdk.final, true);
  const e = err(sdk.outcome);
  t.equal(e.reason, 'REMOTE_ERROR');
  t.equal(e.code, -32001);
  t.same(e.remoteStatus, { http: 404 });
  t.equal(err(ev(event('{"code":500,"status":"INTERNAL","message":"boom"}', 'error')).outcome).message, 'boom', 'a bare Status');
  t.equal(err(ev(event('{"code":-32002,"message":"nope"}', 'error')).outcome).code, -32002, 'the 0.3 shape');
  const text = err(ev(event('upstream exploded \u202e', 'error')).outcome);
  t.equal(text.message, 'upstream exploded', 'plain text is the message, sanitized (as on the JSON-RPC stream path)');
  t.equal(text.code, -32603);
  t.equal(err(ev(event('[1]', 'error')).outcome).metadata.cause, 'INVALID_RESPONSE_MESSAGE');
  t.equal(err(ev(event('{"foo":1}', 'error')).outcome).reason, 'REMOTE_ERROR', 'an object with nothing readable: the standard message');
  t.equal(err(ev(event('{"foo":1}', 'error')).outcome).message, 'Internal error');
  t.equal(err(ev(event('{"error":', 'error')).outcome).metadata.cause, 'INVALID_JSON');
});
