/**
 * The HTTP+JSON codec against a real @a2a-js/sdk 1.3 REST server on
 * 127.0.0.1: calls parsed as a caller sends them, encoded for the remote,
 * sent, and the remote's real bytes normalized, for every operation and
 * every error the SDK server produces (including its HTML 404 and its
 * `event: error` in the middle of a stream).
 */
import t, { type Test } from 'tap';
import { request } from 'undici';
import { checkResult } from '../../src/a2a/result-validate.js';
import { parseRestCall } from '../../src/bindings/http-json/caller-request.js';
import { normalizeRestEvent, normalizeRestStreamBody, streamReplyKind } from '../../src/bindings/http-json/upstream-events.js';
import { normalizeRestReply, type RestNormalizePolicy } from '../../src/bindings/http-json/upstream-reply.js';
import { buildRestUpstreamRequest, type RestUpstreamRequest } from '../../src/bindings/http-json/upstream-request.js';
import type { A2ACall } from '../../src/core/call.js';
import type { ErrorOutcome, Outcome, StreamItem } from '../../src/core/outcome.js';
import { SseParser } from '../../src/stream/sse-parser.js';
import { outcomeViolations } from '../support/outcome-invariants.js';
import { startSdkRestUpstream, type SdkRestUpstream } from '../support/sdk-rest-upstream.js';

const policy: RestNormalizePolicy = {
  remote: 'sdk',
  maxErrorMessageBytes: 512,
  maxJsonDepth: 64,
  keepRemoteErrorData: true,
  checkResult: (op, result) => {
    const c = checkResult(op.name, result);
    return c.ok ? undefined : c.problem;
  },
};

interface RawReply {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: Buffer;
}

/** A call as a caller would send it to the gateway (what the SDK REST client sends). */
function callOf(method: string, target: string, body?: unknown): A2ACall {
  const q = target.indexOf('?');
  const parsed = parseRestCall(
    {
      method,
      path: q === -1 ? target : target.slice(0, q),
      query: q === -1 ? '' : target.slice(q + 1),
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    },
    { remote: 'sdk', requestId: 'r', forwarded: {}, maxRequestBytes: 1 << 20, maxJsonDepth: 64 },
  );
  if (!parsed.ok) throw new Error(`caller request refused: ${parsed.error.message}`);
  return parsed.call;
}

function upstreamOf(up: SdkRestUpstream, call: A2ACall): RestUpstreamRequest {
  const built = buildRestUpstreamRequest(call, new URL(up.url));
  if (!built.ok) throw new Error(`not encoded: ${built.error.message}`);
  return built.request;
}

async function send(up: SdkRestUpstream, req: { method: string; path: string; headers: Record<string, string>; body?: string | undefined }): Promise<RawReply> {
  const res = await request(`${up.origin}${req.path}`, { method: req.method as 'GET', headers: req.headers, body: req.body, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const body = Buffer.from(await res.body.arrayBuffer());
  const ct = res.headers['content-type'];
  return { status: res.statusCode, contentType: Array.isArray(ct) ? ct[0] : ct, body };
}

async function unary(up: SdkRestUpstream, call: A2ACall): Promise<{ raw: RawReply; outcome: Outcome }> {
  const raw = await send(up, upstreamOf(up, call));
  return { raw, outcome: normalizeRestReply(call.operation, raw, policy) };
}

/** A whole stream, read to its end and normalized event by event. */
async function stream(up: SdkRestUpstream, call: A2ACall, raw?: RawReply): Promise<{ raw: RawReply; items: StreamItem[]; data: string[] }> {
  const reply = raw ?? (await send(up, upstreamOf(up, call)));
  if (streamReplyKind(reply.status, reply.contentType) === 'body') {
    const outcome = normalizeRestStreamBody(call.operation, reply, policy);
    return { raw: reply, items: [outcome.kind === 'result' ? { outcome, final: false } : { outcome, final: true }], data: [] };
  }
  const items: StreamItem[] = [];
  const data: string[] = [];
  const parser = new SseParser(1 << 20);
  parser.push(reply.body, (item) => {
    if (item.kind !== 'event') return;
    data.push(item.data);
    items.push(normalizeRestEvent(call.operation, item, { policy, httpStatus: reply.status }, items.length + 1));
  });
  return { raw: reply, items, data };
}

function result(t: Test, o: Outcome, raw: RawReply) {
  t.equal(o.kind, 'result', o.kind === 'error' ? `${o.reason}: ${o.message}` : 'a result');
  t.same(outcomeViolations(o, { policy, status: raw.status }), []);
  return o;
}

function error(t: Test, o: Outcome): ErrorOutcome {
  if (o.kind !== 'error') throw new Error(`expected an error, got ${o.json}`);
  t.same(outcomeViolations(o, { policy }), [], 'a valid error outcome');
  return o;
}

const MESSAGE = (text: string, extra: Record<string, unknown> = {}) => ({ message: { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }], ...extra } });

t.test('every operation, through the encoder, the SDK REST server and the normalizer', async (t) => {
  const up = await startSdkRestUpstream({ extendedCard: true });
  t.teardown(() => up.close());

  const echo = await unary(up, callOf('POST', '/message:send', MESSAGE('hello')));
  result(t, echo.outcome, echo.raw);
  t.equal((echo.outcome as { json: string }).json, echo.raw.body.toString('utf8'), 'the remote bytes, spliced');
  t.match((echo.outcome as { value: unknown }).value, { message: { role: 'ROLE_AGENT', parts: [{ text: 'echo: hello' }] } });

  const done = await unary(up, callOf('POST', '/message:send', MESSAGE('task build it')));
  const task = (result(t, done.outcome, done.raw) as { value: { task: { id: string; status: { state: string } } } }).value.task;
  t.equal(task.status.state, 'TASK_STATE_COMPLETED');

  const got = await unary(up, callOf('GET', `/tasks/${encodeURIComponent(task.id)}?historyLength=1`));
  t.match((result(t, got.outcome, got.raw) as { value: unknown }).value, { id: task.id });
  t.equal(got.raw.status, 200);

  const list = await unary(up, callOf('GET', '/tasks?pageSize=5&includeArtifacts=true&status=TASK_STATE_COMPLETED'));
  t.match((result(t, list.outcome, list.raw) as { value: unknown }).value, { tasks: [{ id: task.id }] });

  const waiting = await unary(up, callOf('POST', '/message:send', { ...MESSAGE('wait for it'), configuration: { returnImmediately: true } }));
  const waitId = (result(t, waiting.outcome, waiting.raw) as { value: { task: { id: string } } }).value.task.id;
  const canceled = await unary(up, callOf('POST', `/tasks/${waitId}:cancel`));
  t.match((result(t, canceled.outcome, canceled.raw) as { value: unknown }).value, { id: waitId, status: { state: 'TASK_STATE_CANCELED' } });

  const created = await unary(up, callOf('POST', `/tasks/${task.id}/pushNotificationConfigs`, { id: 'c1', url: 'https://hooks.example/a2a', token: 'tok' }));
  t.equal(created.raw.status, 201);
  t.match((result(t, created.outcome, created.raw) as { value: unknown }).value, { id: 'c1', taskId: task.id, url: 'https://hooks.example/a2a' });
  const one = await unary(up, callOf('GET', `/tasks/${task.id}/pushNotificationConfigs/c1`));
  t.match((result(t, one.outcome, one.raw) as { value: unknown }).value, { id: 'c1' });
  const all = await unary(up, callOf('GET', `/tasks/${task.id}/pushNotificationConfigs`));
  t.match((result(t, all.outcome, all.raw) as { value: unknown }).value, { configs: [{ id: 'c1' }] });
  const deleted = await unary(up, callOf('DELETE', `/tasks/${task.id}/pushNotificationConfigs/c1`));
  t.equal(deleted.raw.status, 204);
  t.same(deleted.outcome, { kind: 'result', json: '{}', value: {} });

  const card = await unary(up, callOf('GET', '/extendedAgentCard'));
  t.match((result(t, card.outcome, card.raw) as { value: unknown }).value, { name: 'SDK test agent (extended)' });

  const tenanted = await unary(up, callOf('POST', '/acme/message:send', MESSAGE('hi tenant')));
  result(t, tenanted.outcome, tenanted.raw);
});

t.test('streams: every event of message:stream and tasks:subscribe is a StreamResponse result', async (t) => {
  const up = await startSdkRestUpstream();
  t.teardown(() => up.close());

  const run = await stream(up, callOf('POST', '/message:stream', MESSAGE('task stream it')));
  t.equal(run.raw.contentType?.startsWith('text/event-stream'), true);
  t.ok(run.items.length >= 4, `${run.items.length} events`);
  run.items.forEach((item, i) => {
    t.equal(item.final, false);
    t.equal(item.outcome.kind === 'result' && item.outcome.json, run.data[i], 'each event the remote bytes');
  });
  const kinds = run.items.map((i) => Object.keys((i.outcome as { value: object }).value)[0]);
  t.same([kinds[0], kinds.at(-1)], ['task', 'statusUpdate']);
  t.ok(kinds.includes('artifactUpdate'));

  // SubscribeToTask on a running task, by both verbs the callers may use (upstream always POST).
  const started = await unary(up, callOf('POST', '/message:send', { ...MESSAGE('wait here'), configuration: { returnImmediately: true } }));
  const id = (started.outcome as { value: { task: { id: string } } }).value.task.id;
  for (const verb of ['POST', 'GET']) {
    const call = callOf(verb, `/tasks/${id}:subscribe`);
    const req = upstreamOf(up, call);
    t.equal(req.method, 'POST');
    const res = await request(`${up.origin}${req.path}`, { method: 'POST', headers: req.headers, headersTimeout: 10_000 });
    t.equal(streamReplyKind(res.statusCode, String(res.headers['content-type'])), 'events');
    const parser = new SseParser(1 << 20);
    const items: StreamItem[] = [];
    for await (const chunk of res.body) {
      parser.push(chunk as Buffer, (item) => void (item.kind === 'event' && items.push(normalizeRestEvent(call.operation, item, { policy, httpStatus: 200 }, items.length + 1))));
      if (items.length > 0) break;
    }
    res.body.destroy();
    t.equal(items[0]?.final, false, `${verb}: the first event is a result`);
    t.match((items[0]?.outcome as { value: unknown }).value, { task: { id } });
  }
  await unary(up, callOf('POST', `/tasks/${id}:cancel`));
});

t.test('every SDK error, as the SDK server sends it, becomes the typed error', async (t) => {
  const up = await startSdkRestUpstream();
  const noPush = await startSdkRestUpstream({ pushNotifications: false });
  t.teardown(async () => {
    await up.close();
    await noPush.close();
  });
  const done = await unary(up, callOf('POST', '/message:send', MESSAGE('task finish')));
  const doneId = (done.outcome as { value: { task: { id: string } } }).value.task.id;

  const expectError = (o: Outcome, code: number, a2aReason: string | undefined, http: number, label: string) => {
    const e = error(t, o);
    t.equal(e.reason, 'REMOTE_ERROR', label);
    t.equal(e.code, code, `${label}: code`);
    t.equal(e.a2a?.reason, a2aReason, `${label}: A2A reason`);
    t.same(e.remoteStatus, { http }, `${label}: the remote's status kept`);
    t.notOk(e.message === '', `${label}: a message`);
    return e;
  };

  expectError((await unary(up, callOf('GET', '/tasks/nope'))).outcome, -32001, 'TASK_NOT_FOUND', 404, 'GetTask unknown');
  expectError((await unary(up, callOf('POST', '/tasks/nope:cancel'))).outcome, -32001, 'TASK_NOT_FOUND', 404, 'CancelTask unknown');
  expectError((await unary(up, callOf('POST', '/message:send', MESSAGE('hi', { taskId: 'nope' })))).outcome, -32001, 'TASK_NOT_FOUND', 404, 'SendMessage to an unknown task');
  expectError((await unary(up, callOf('POST', `/tasks/${doneId}:cancel`))).outcome, -32002, 'TASK_NOT_CANCELABLE', 400, 'CancelTask terminal');
  expectError((await unary(up, callOf('GET', '/extendedAgentCard'))).outcome, -32004, 'UNSUPPORTED_OPERATION', 400, 'no extended card');
  expectError((await unary(noPush, callOf('POST', '/tasks/t1/pushNotificationConfigs', { url: 'https://h.example' }))).outcome, -32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED', 400, 'push not supported');
  expectError((await unary(up, callOf('GET', '/tasks?pageSize=1000'))).outcome, -32602, 'INVALID_PARAMS', 400, 'pageSize out of range');
  expectError((await unary(up, callOf('GET', '/tasks/x?historyLength=-1'))).outcome, -32602, 'INVALID_PARAMS', 400, 'negative historyLength');

  // Streams refused before their first event: a JSON Status, as the SDK answers them.
  const missing = await stream(up, callOf('POST', '/tasks/nope:subscribe'));
  t.equal(missing.items.length, 1);
  expectError(missing.items[0]!.outcome, -32001, 'TASK_NOT_FOUND', 404, 'subscribe unknown');
  const terminal = await stream(up, callOf('POST', `/tasks/${doneId}:subscribe`));
  expectError(terminal.items[0]!.outcome, -32004, 'UNSUPPORTED_OPERATION', 400, 'subscribe terminal');

  // The SDK's own `event: error` after a first event.
  const exploded = await stream(up, callOf('POST', '/message:stream', MESSAGE('explode now')));
  t.equal(exploded.items.length, 2);
  t.equal(exploded.items[0]!.final, false);
  t.equal(exploded.items[1]!.final, true);
  const mid = expectError(exploded.items[1]!.outcome, -32001, 'TASK_NOT_FOUND', 404, 'event: error');
  t.same(mid.a2a?.metadata, { taskId: 'gone' }, 'the A2A ErrorInfo metadata carried');
  t.equal(mid.message, 'the task vanished mid-stream');

  // Requests the gateway itself would refuse, sent raw, to see what the SDK says of them.
  const raw = (method: string, path: string, body: string | undefined, headers: Record<string, string>) =>
    send(up, { method, path: `${new URL(up.url).pathname}${path}`, headers, body });
  const op = callOf('POST', '/message:send', MESSAGE('x')).operation;
  const bad: [string, RawReply, number, string | undefined, number][] = [
    ['invalid JSON', await raw('POST', '/message:send', 'not json', { 'content-type': 'application/json', 'a2a-version': '1.0' }), -32602, 'INVALID_PARAMS', 400],
    ['no message', await raw('POST', '/message:send', '{}', { 'content-type': 'application/json', 'a2a-version': '1.0' }), -32602, 'INVALID_PARAMS', 400],
    ['text/plain', await raw('POST', '/message:send', '{}', { 'content-type': 'text/plain', 'a2a-version': '1.0' }), -32005, 'CONTENT_TYPE_NOT_SUPPORTED', 400],
    ['version 0.3', await raw('POST', '/message:send', '{}', { 'content-type': 'application/json', 'a2a-version': '0.3' }), -32009, 'VERSION_NOT_SUPPORTED', 400],
    ['no version', await raw('GET', '/tasks/x', undefined, {}), -32009, 'VERSION_NOT_SUPPORTED', 400],
  ];
  for (const [label, reply, code, reason, http] of bad) expectError(normalizeRestReply(op, reply, policy), code, reason, http, label);

  // express's own 404 page: HTML, and nothing of it passes.
  const page = await raw('GET', '/no/such/route', undefined, { 'a2a-version': '1.0' });
  t.match(page.body.toString(), /<!DOCTYPE html>/);
  const html = error(t, normalizeRestReply(op, page, policy));
  t.equal(html.reason, 'UPSTREAM_HTTP_ERROR');
  t.equal(html.message, 'remote answered with an HTTP error and no A2A error: HTTP 404');
  t.notMatch(JSON.stringify(html), /Cannot|DOCTYPE|route/);
});
