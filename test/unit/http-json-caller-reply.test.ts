import t from 'tap';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { encodeRestError, encodeRestReply, encodeRestStreamItem, SSE_HEADERS } from '../../src/bindings/http-json/caller-reply.js';
import { gatewayErrorOutcome } from '../../src/bindings/error-outcome.js';
import type { ErrorOutcome } from '../../src/core/outcome.js';

const TASK = '{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}';
const result = (json: string) => ({ kind: 'result' as const, json, value: JSON.parse(json) as unknown });

const remoteNotFound: ErrorOutcome = {
  kind: 'error',
  code: -32001,
  message: 'Task not found: t1',
  reason: 'REMOTE_ERROR',
  metadata: { remote: 'weather', httpStatus: '404' },
  a2a: { reason: 'TASK_NOT_FOUND', metadata: { taskId: 't1' } },
  details: [{ '@type': 'type.googleapis.com/google.rpc.DebugInfo', detail: 'kept' }],
  remoteStatus: { http: 404 },
};

t.test('results: the operation success status, application/a2a+json, the result bytes as they are', async (t) => {
  t.same(encodeRestReply(OPERATIONS.GetTask, result(TASK)), { status: 200, headers: { 'content-type': 'application/a2a+json' }, body: TASK });
  t.same(encodeRestReply(OPERATIONS.CreateTaskPushNotificationConfig, result('{"url":"u"}')).status, 201);
  t.same(encodeRestReply(OPERATIONS.DeleteTaskPushNotificationConfig, result('{}')), { status: 204, headers: {} }, 'delete: no body');
  t.same(encodeRestReply(OPERATIONS.DeleteTaskPushNotificationConfig, result('null')), { status: 204, headers: {} }, 'a JSON-RPC remote null too');
  const spaced = '{ "task" :\n {"id":"t1"} }';
  t.equal(encodeRestReply(OPERATIONS.SendMessage, result(spaced)).body, spaced, 'never re-serialized');
});

t.test('errors: google.rpc.Status JSON, A2A ErrorInfo first, then the gateway ErrorInfo, then kept details', async (t) => {
  const r = encodeRestReply(OPERATIONS.GetTask, remoteNotFound);
  t.equal(r.status, 404);
  t.same(r.headers, { 'content-type': 'application/json' });
  t.same(JSON.parse(r.body!), {
    error: {
      code: 404,
      status: 'NOT_FOUND',
      message: 'Task not found: t1',
      details: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't1' } },
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'REMOTE_ERROR', domain: 'a2a-egress', metadata: { remote: 'weather', httpStatus: '404' } },
        { '@type': 'type.googleapis.com/google.rpc.DebugInfo', detail: 'kept' },
      ],
    },
  });
});

t.test('a gateway error: its reason status, the ErrorInfo pair, headers of the error kept', async (t) => {
  const limited = encodeRestError(gatewayErrorOutcome('RATE_LIMITED', { remote: 'w', headers: { 'retry-after': '3' }, metadata: { retryAfterMs: 2500 } }));
  t.equal(limited.status, 429);
  t.same(limited.headers, { 'retry-after': '3', 'content-type': 'application/json' });
  const body = JSON.parse(limited.body!);
  t.equal(body.error.status, 'RESOURCE_EXHAUSTED');
  t.equal(body.error.code, 429);
  t.same(body.error.details, [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMITED', domain: 'a2a-egress', metadata: { remote: 'w', retryAfterMs: '2500' } }], '-32603: no A2A ErrorInfo');

  const bad = JSON.parse(encodeRestError(gatewayErrorOutcome('INVALID_JSON', { remote: 'w', httpStatus: 200 })).body!);
  t.equal(bad.error.code, 502);
  t.same(bad.error.details.map((d: { reason: string; domain: string }) => `${d.domain}/${d.reason}`), ['a2a-protocol.org/INVALID_AGENT_RESPONSE', 'a2a-egress/INVALID_JSON']);
  t.notOk('metadata' in bad.error.details[0], 'an empty A2A metadata is left out');
});

t.test('an A2A 0.3 caller gets the 0.3 REST error body', async (t) => {
  const r = encodeRestError(gatewayErrorOutcome('UNSUPPORTED_BINDING_VERSION', { remote: 'w' }), '0.3');
  t.equal(r.status, 400);
  const body = JSON.parse(r.body!);
  t.equal(body.code, -32009);
  t.equal(typeof body.message, 'string');
  t.same(body.data.map((d: { reason: string }) => d.reason), ['UNSUPPORTED_BINDING_VERSION'], 'no A2A ErrorInfo for 0.3');
});

t.test('stream items: data lines for results, event: error with the Status for the end', async (t) => {
  t.same(SSE_HEADERS['content-type'], 'text/event-stream');
  t.equal(encodeRestStreamItem({ outcome: result('{"task":\n{"id":"t1"}}'), final: false }), 'data: {"task": {"id":"t1"}}\n\n', 'one line');
  const end = encodeRestStreamItem({ outcome: remoteNotFound, final: true });
  t.match(end, /^event: error\ndata: \{"error":\{"code":404,"status":"NOT_FOUND",/);
  t.ok(end.endsWith('\n\n'));
  t.equal(end.split('\n').length, 4, 'two lines and the blank line');
});
