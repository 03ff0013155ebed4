/**
 * A real @a2a-js/sdk 1.3 client with its REST transport against the
 * HTTP+JSON caller codec: a small node:http server on 127.0.0.1 parses each
 * request with parseRestCall (so every request the SDK client sends must be
 * accepted, as the operation and params it means) and answers with
 * encodeRestReply / encodeRestStreamItem bytes (so the client must read each
 * into the right result, or the right typed error).
 */
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import { ClientFactory, ClientFactoryOptions, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { encodeRestError, encodeRestReply, encodeRestStreamItem, SSE_HEADERS, type RestReply } from '../../src/bindings/http-json/caller-reply.js';
import { parseRestCall, type RestCallerParse } from '../../src/bindings/http-json/caller-request.js';
import { gatewayErrorOutcome } from '../../src/bindings/error-outcome.js';
import type { A2ACall } from '../../src/core/call.js';
import type { ErrorOutcome, Outcome, ResultOutcome, StreamItem } from '../../src/core/outcome.js';
import { loopbackOnlyFetch, userMessage, collect } from '../support/sdk-client.js';
import { sdkAgentCard } from '../support/sdk-upstream.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';

const TASK = (id: string, state = 'TASK_STATE_WORKING') => `{"id":"${id}","contextId":"c1","status":{"state":"${state}","timestamp":"2026-01-01T00:00:00.000Z"}}`;
const result = (json: string): ResultOutcome => ({ kind: 'result', json, value: JSON.parse(json) as unknown });

type Script = (call: A2ACall) => Outcome | StreamItem[];

interface Harness {
  readonly client: Client;
  readonly parsed: RestCallerParse[];
  script: Script;
}

const BASE = '/remotes/weather';

async function start(t: Test): Promise<Harness> {
  const parsed: RestCallerParse[] = [];
  const h = { parsed, script: (() => result('{}')) as Script } as { client: Client; parsed: RestCallerParse[]; script: Script };
  const write = (res: import('node:http').ServerResponse, reply: RestReply) => {
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://gateway');
    const p = parseRestCall(
      { method: req.method ?? '', path: url.pathname.slice(BASE.length), query: url.search.slice(1), headers: req.headers, body },
      { remote: 'weather', requestId: 'r', forwarded: {}, maxRequestBytes: 1 << 20, maxJsonDepth: 32 },
    );
    parsed.push(p);
    if (!p.ok) return write(res, encodeRestError(p.error));
    const out = h.script(p.call);
    if (!Array.isArray(out)) return write(res, encodeRestReply(p.call.operation, out));
    if (out[0]?.final) return write(res, encodeRestError(out[0].outcome));
    res.writeHead(200, SSE_HEADERS);
    for (const item of out) res.write(encodeRestStreamItem(item));
    res.end();
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  t.teardown(() => closeServer(server, tracker));
  const url = `http://127.0.0.1:${port}${BASE}`;
  const card = sdkAgentCard(url, true, true);
  card.supportedInterfaces = [{ url, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' }];
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new RestTransportFactory({ fetchImpl: loopbackOnlyFetch })] }));
  h.client = await factory.createFromAgentCard(card);
  return h;
}

function lastCall(h: Harness): A2ACall {
  const p = h.parsed.at(-1);
  if (!p?.ok) throw new Error(`the SDK client's request was refused: ${p?.ok === false ? p.error.message : 'none'}`);
  return p.call;
}

async function rejects(fn: () => Promise<unknown>): Promise<Error & { statusCode?: number; metadata?: Record<string, string> }> {
  try {
    await fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

t.test('every request the SDK REST client sends is accepted as the call it means, and every result read back', async (t) => {
  const h = await start(t);

  h.script = () => result(`{"task":${TASK('t1')}}`);
  const sent = await h.client.sendMessage(userMessage('hello'));
  t.match(sent, { id: 't1', contextId: 'c1' });
  t.equal(lastCall(h).operation.name, 'SendMessage');
  t.match(lastCall(h).params, { message: { role: 'ROLE_USER', parts: [{ text: 'hello' }] } });

  h.script = () => result('{"message":{"messageId":"a1","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}');
  t.match(await h.client.sendMessage(userMessage('hello')), { messageId: 'a1' });

  h.script = () => result(TASK('t1'));
  t.match(await h.client.getTask({ tenant: '', id: 't:1 é?#', historyLength: 2 }), { id: 't1' });
  t.same(lastCall(h).params, { id: 't:1 é?#', historyLength: 2 }, 'an id the client percent-encodes, decoded');
  t.equal(lastCall(h).service.a2aVersion, '1.0', 'the client sends A2A-Version');

  h.script = () => result(`{"tasks":[${TASK('t1')}],"nextPageToken":"n","pageSize":1,"totalSize":3}`);
  const page = await h.client.listTasks({ tenant: '', contextId: 'c1', status: 2, pageSize: 1, pageToken: 'p', historyLength: 0, statusTimestampAfter: '2026-01-01T00:00:00.000Z', includeArtifacts: true });
  t.match(page, { nextPageToken: 'n', totalSize: 3 });
  t.same(lastCall(h).params, { contextId: 'c1', status: 'TASK_STATE_WORKING', pageSize: 1, pageToken: 'p', historyLength: 0, statusTimestampAfter: '2026-01-01T00:00:00.000Z', includeArtifacts: true });

  h.script = () => result(TASK('t1', 'TASK_STATE_CANCELED'));
  t.match(await h.client.cancelTask({ tenant: '', id: 't1', metadata: undefined }), { id: 't1' });
  t.same(lastCall(h).params, { id: 't1' });

  h.script = () => result('{"id":"c1","taskId":"t1","url":"https://h.example/x"}');
  t.match(await h.client.createTaskPushNotificationConfig({ tenant: '', id: 'c1', taskId: 't1', url: 'https://h.example/x', token: '', authentication: undefined }), { id: 'c1', url: 'https://h.example/x' });
  t.equal(lastCall(h).operation.name, 'CreateTaskPushNotificationConfig');
  t.match(lastCall(h).params, { taskId: 't1', url: 'https://h.example/x', id: 'c1' });
  t.match(await h.client.getTaskPushNotificationConfig({ tenant: '', taskId: 't1', id: 'c1' }), { id: 'c1' });
  t.same(lastCall(h).params, { taskId: 't1', id: 'c1' });

  h.script = () => result('{"configs":[{"id":"c1","taskId":"t1","url":"https://h.example/x"}],"nextPageToken":""}');
  t.match(await h.client.listTaskPushNotificationConfig({ tenant: '', taskId: 't1', pageSize: 0, pageToken: '' }), { configs: [{ id: 'c1' }] });

  h.script = () => result('{}');
  t.equal(await h.client.deleteTaskPushNotificationConfig({ tenant: '', taskId: 't1', id: 'c1' }), undefined, 'delete: 204 read as done');
  t.equal(lastCall(h).operation, OPERATIONS.DeleteTaskPushNotificationConfig);

  h.script = () => result(JSON.stringify({ ...sdkAgentCard('http://x', true, true), name: 'extended' }));
  (h.client as unknown as { agentCard: { capabilities: { extendedAgentCard: boolean } } }).agentCard.capabilities.extendedAgentCard = true;
  t.match(await h.client.getAgentCard(), { name: 'extended' });
  t.equal(lastCall(h).operation.name, 'GetExtendedAgentCard');

  t.ok(h.parsed.every((p) => p.ok), 'no SDK client request refused');
});

t.test('streams: data events read as StreamResponses; a final event: error as the typed error', async (t) => {
  const h = await start(t);
  h.script = () => [
    { outcome: result(`{"task":${TASK('t1', 'TASK_STATE_SUBMITTED')}}`), final: false },
    { outcome: result('{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}'), final: false },
  ];
  const events = await collect(h.client.sendMessageStream(userMessage('go')));
  t.same(events.map((e) => e.payload?.$case), ['task', 'statusUpdate']);
  t.equal(lastCall(h).operation.name, 'SendStreamingMessage');

  const resubscribed = await collect(h.client.resubscribeTask({ tenant: '', id: 't1' }));
  t.equal(resubscribed.length, 2);
  t.equal(lastCall(h).operation.name, 'SubscribeToTask');
  t.same(lastCall(h).params, { id: 't1' });

  const failure: ErrorOutcome = { ...gatewayErrorOutcome('STREAM_IDLE', { remote: 'weather', httpStatus: 200 }) };
  h.script = () => [{ outcome: result(`{"task":${TASK('t1')}}`), final: false }, { outcome: failure, final: true }];
  const seen: unknown[] = [];
  const err = await rejects(async () => {
    for await (const e of h.client.sendMessageStream(userMessage('go'))) seen.push(e);
  });
  t.equal(seen.length, 1, 'the event before the error arrives');
  t.equal(err.name, 'A2AError', 'a -32603 gateway error: the generic typed error');
  t.match(err.message, /remote stream sent nothing for too long/);

  const invalid = gatewayErrorOutcome('INVALID_EVENT', { remote: 'weather', httpStatus: 200, metadata: { cause: 'INVALID_JSON', event: 2 } });
  h.script = () => [{ outcome: result(`{"task":${TASK('t1')}}`), final: false }, { outcome: invalid, final: true }];
  const bad = await rejects(() => collect(h.client.sendMessageStream(userMessage('go'))));
  t.equal(bad.name, 'InvalidAgentResponseError', 'the A2A ErrorInfo comes first');

  h.script = () => [{ outcome: gatewayErrorOutcome('UPSTREAM_TIMEOUT', { remote: 'weather' }), final: true }];
  const before = await rejects(() => collect(h.client.sendMessageStream(userMessage('go'))));
  t.equal(before.statusCode, 504, 'an error before the stream: a plain error reply');
});

t.test('errors: the SDK client throws the typed error for each, with our status', async (t) => {
  const h = await start(t);
  const remote = (code: number, reason: string, http: number): ErrorOutcome => ({
    kind: 'error',
    code,
    message: `remote says ${reason}`,
    reason: 'REMOTE_ERROR',
    metadata: { remote: 'weather', httpStatus: String(http) },
    a2a: { reason, metadata: { taskId: 't9' } },
    details: [],
    remoteStatus: { http },
  });
  const cases: [ErrorOutcome, string, number][] = [
    [remote(-32001, 'TASK_NOT_FOUND', 404), 'TaskNotFoundError', 404],
    [remote(-32002, 'TASK_NOT_CANCELABLE', 409), 'TaskNotCancelableError', 409],
    [remote(-32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED', 400), 'PushNotificationNotSupportedError', 400],
    [remote(-32004, 'UNSUPPORTED_OPERATION', 400), 'UnsupportedOperationError', 400],
    [remote(-32007, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED', 400), 'ExtendedAgentCardNotConfiguredError', 400],
    [remote(-32008, 'EXTENSION_SUPPORT_REQUIRED', 400), 'ExtensionSupportRequiredError', 400],
    [remote(-32009, 'VERSION_NOT_SUPPORTED', 400), 'VersionNotSupportedError', 400],
    [gatewayErrorOutcome('NON_JSON_RESPONSE', { remote: 'weather', httpStatus: 200 }), 'InvalidAgentResponseError', 502],
    [gatewayErrorOutcome('UPSTREAM_HTTP_ERROR', { remote: 'weather', httpStatus: 500 }, 'HTTP 500'), 'InvalidAgentResponseError', 502],
    [gatewayErrorOutcome('UPSTREAM_TIMEOUT', { remote: 'weather' }), 'A2AError', 504],
    [gatewayErrorOutcome('RATE_LIMITED', { remote: 'weather', headers: { 'retry-after': '1' } }), 'A2AError', 429],
    [gatewayErrorOutcome('CIRCUIT_OPEN', { remote: 'weather' }), 'A2AError', 503],
  ];
  for (const [outcome, name, status] of cases) {
    h.script = () => outcome;
    const err = await rejects(() => h.client.getTask({ tenant: '', id: 't9' }));
    t.equal(err.name, name, `${outcome.reason} ${outcome.code}`);
    t.equal(err.statusCode, status);
    t.equal(err.message, outcome.message, 'the message, not the body');
    if (outcome.reason === 'REMOTE_ERROR') t.same(err.metadata, { taskId: 't9' }, 'A2A metadata read from the A2A ErrorInfo');
  }
});

t.test("the codec's own refusals reach the SDK client typed", async (t) => {
  const h = await start(t);
  // A task id the SDK client encodes into a segment the codec refuses: %2F is an encoded slash.
  const slash = await rejects(() => h.client.getTask({ tenant: '', id: '../x' }));
  t.equal(h.parsed.at(-1)?.ok, false);
  t.equal(slash.statusCode, 400);
  const p = h.parsed.at(-1);
  t.equal(p?.ok === false && p.error.reason, 'INVALID_PATH');

  // A message the schema refuses: the gateway's INVALID_PARAMS is what the SDK calls RequestMalformedError.
  const message = userMessage('x');
  message.message!.messageId = '';
  const malformed = await rejects(() => h.client.sendMessage(message));
  t.equal(malformed.name, 'RequestMalformedError');
  t.equal(malformed.statusCode, 400);
  t.match(malformed.message, /messageId/);
});
