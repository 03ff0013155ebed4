/**
 * Trace export end to end: the telemetry API driven in the call path's order
 * (test/support/trace-harness.ts) against a real upstream, spans exported
 * over OTLP/HTTP protobuf to a real receiver on 127.0.0.1, decoded with the
 * official opentelemetry-proto schema, then checked: names, kinds, parents,
 * attributes, endings, and the trace headers the upstream received.
 */
import t from 'tap';
import { Telemetry, createTelemetry } from '../../src/telemetry/tracing.js';
import { resolveTraces, type TracesFile } from '../../src/config/traces.js';
import { startOtlpReceiver, type ExportedSpan, type OtlpReceiver } from '../support/otlp-receiver.js';
import { a2aCall, gatewayError, remoteError, runStreamCall, runUnaryCall, startPlannedUpstream } from '../support/trace-harness.js';
import { VERSION } from '../../src/version.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const SAMPLED_PARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const UNSAMPLED_PARENT = `00-${TRACE_ID}-${CALLER_SPAN}-00`;
const OTLP_KEY = 'otlp-key-0123456789abcdef';

async function telemetryFor(receiver: OtlpReceiver, overrides: Partial<TracesFile> = {}): Promise<Telemetry> {
  const traces = resolveTraces(
    { endpoint: receiver.url, scheduledDelayMs: 20, headers: { 'x-api-key': { valueEnv: 'TEST_OTLP_KEY' } }, ...overrides },
    { TEST_OTLP_KEY: OTLP_KEY },
  );
  return createTelemetry(traces, { serviceVersion: VERSION });
}

const byKind = (spans: readonly ExportedSpan[], kind: ExportedSpan['kind']) => spans.filter((s) => s.kind === kind);
const jsonRpc = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, result });
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

t.test('a unary call with a retry: a server span continuing the caller’s trace, one client span per attempt, each the remote’s parent', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startPlannedUpstream([
    { status: 503, body: 'busy' },
    { status: 200, body: jsonRpc({ id: 'task-7', contextId: 'ctx-1', status: { state: 'TASK_STATE_COMPLETED' } }) },
  ]);
  const telemetry = await telemetryFor(receiver);
  t.teardown(async () => {
    await telemetry.shutdown();
    await upstream.close();
    await receiver.close();
  });
  t.equal(telemetry.active, true);

  const run = await runUnaryCall(telemetry, { traceparent: SAMPLED_PARENT, tracestate: 'vendor=abc', requestId: 'req-42' }, a2aCall('GetTask'), upstream, 2);
  t.equal(run.attempts, 2);
  await telemetry.forceFlush();
  const spans = await receiver.waitForSpans(3);
  t.equal(spans.length, 3);

  const [server] = byKind(spans, 'server');
  t.ok(server);
  if (!server) return;
  t.equal(server.traceId, TRACE_ID, 'the caller’s trace continues');
  t.equal(server.parentSpanId, CALLER_SPAN, 'the caller’s span is the parent');
  t.equal(server.traceState, 'vendor=abc');
  t.equal(server.name, 'lf.a2a.v1.A2AService/GetTask');
  t.match(server.attributes, {
    'a2a.remote': 'weather',
    'a2a.operation': 'GetTask',
    'a2a.binding': 'jsonrpc',
    'rpc.system.name': 'jsonrpc',
    'rpc.method': 'lf.a2a.v1.A2AService/GetTask',
    'a2a.protocol.version': '1.0',
    'a2a.request_id': 'req-42',
    'a2a.outcome': 'ok',
    'a2a.task.id': 'task-7',
    'a2a.task.state': 'TASK_STATE_COMPLETED',
  });
  t.notOk('error.type' in server.attributes);
  t.notOk('gen_ai.operation.name' in server.attributes, 'GetTask is not an agent invocation');
  t.equal(server.status.code, 'unset');
  t.match(server.resource, { 'service.name': 'a2a-egress', 'service.version': VERSION });
  t.equal(server.scope, 'a2a-egress');

  const clients = byKind(spans, 'client').sort((a, b) => a.startNs - b.startNs);
  t.equal(clients.length, 2, 'the retry is a second client span');
  for (const client of clients) {
    t.equal(client.parentSpanId, server.spanId, 'siblings under the call');
    t.equal(client.traceId, TRACE_ID);
    t.equal(client.name, 'lf.a2a.v1.A2AService/GetTask');
    t.match(client.attributes, {
      'rpc.system.name': 'jsonrpc',
      'a2a.remote': 'weather',
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': Number(upstream.url.port),
      'url.full': upstream.url.href,
    });
  }
  const [first, second] = clients;
  t.match(first?.attributes, { 'http.response.status_code': 503, 'error.type': '503' });
  t.notOk(first && 'http.request.resend_count' in first.attributes);
  t.equal(first?.status.code, 'error');
  t.match(second?.attributes, { 'http.response.status_code': 200, 'http.request.resend_count': 1 });
  t.notOk(second && 'error.type' in second.attributes);

  // What the remote saw: the gateway's client span of that attempt as its parent, the caller's tracestate.
  t.equal(upstream.received.length, 2);
  upstream.received.forEach((headers, i) => {
    const match = TRACEPARENT.exec(String(headers.traceparent));
    t.ok(match, `attempt ${i + 1} sent a W3C traceparent`);
    t.equal(match?.[1], TRACE_ID);
    t.equal(match?.[2], clients[i]?.spanId, `attempt ${i + 1}: the remote’s parent is that attempt’s client span`);
    t.equal(match?.[3], '01');
    t.equal(headers.tracestate, 'vendor=abc');
  });

  t.equal(receiver.exports[0]?.headers['x-api-key'], OTLP_KEY, 'the header from the environment goes with every export');
  t.equal(receiver.exports[0]?.headers['content-type'], 'application/x-protobuf');
});

t.test('streams: a stream span with its event count, first event and ending; the call takes the last task state', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startPlannedUpstream([{ status: 200, body: '' }]);
  const telemetry = await telemetryFor(receiver);
  t.teardown(async () => {
    await telemetry.shutdown();
    await upstream.close();
    await receiver.close();
  });

  // A 0.3 stream that completes.
  await runStreamCall(telemetry, { traceparent: SAMPLED_PARENT }, a2aCall('SendStreamingMessage', '0.3'), upstream, {
    events: [
      { kind: 'status-update', taskId: 't-1', contextId: 'c', status: { state: 'working' }, final: false },
      { kind: 'artifact-update', taskId: 't-1', contextId: 'c', artifact: { artifactId: 'a', parts: [] } },
      { kind: 'status-update', taskId: 't-1', contextId: 'c', status: { state: 'completed' }, final: true },
    ],
    ending: 'ok',
    bytes: 1234,
  });
  // A 1.0 stream the gateway ends with STREAM_IDLE after one event.
  await runStreamCall(telemetry, {}, a2aCall('SubscribeToTask'), upstream, {
    events: [{ statusUpdate: { taskId: 't-2', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } }],
    ending: 'STREAM_IDLE',
    finalError: gatewayError('STREAM_IDLE'),
  });
  await telemetry.forceFlush();
  const spans = await receiver.waitForSpans(6);

  const servers = byKind(spans, 'server');
  const completed = servers.find((s) => s.attributes['a2a.operation'] === 'SendStreamingMessage');
  const idle = servers.find((s) => s.attributes['a2a.operation'] === 'SubscribeToTask');
  t.match(completed?.attributes, {
    'a2a.outcome': 'ok',
    'a2a.task.id': 't-1',
    'a2a.task.state': 'TASK_STATE_COMPLETED',
    'a2a.protocol.version': '0.3',
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'weather',
  });
  t.match(idle?.attributes, { 'a2a.outcome': 'STREAM_IDLE', 'error.type': 'STREAM_IDLE', 'rpc.status_code': '-32603', 'a2a.task.state': 'TASK_STATE_WORKING' });
  t.equal(idle?.status.code, 'error');
  t.equal(idle?.status.message, 'remote stream sent nothing for too long');

  const streams = byKind(spans, 'internal');
  t.equal(streams.length, 2);
  const completedStream = streams.find((s) => s.parentSpanId === completed?.spanId);
  t.equal(completedStream?.name, 'lf.a2a.v1.A2AService/SendStreamingMessage stream');
  t.match(completedStream?.attributes, { 'a2a.stream.events': 3, 'a2a.stream.bytes': 1234, 'a2a.outcome': 'ok' });
  t.same(completedStream?.events, ['a2a.stream.first_event']);
  t.equal(completedStream?.status.code, 'unset');
  const idleStream = streams.find((s) => s.parentSpanId === idle?.spanId);
  t.match(idleStream?.attributes, { 'a2a.stream.events': 1, 'a2a.outcome': 'STREAM_IDLE', 'error.type': 'STREAM_IDLE' });
  t.equal(idleStream?.status.code, 'error');
  t.ok(idle && idle.traceId !== TRACE_ID, 'a call without a caller trace starts its own');
});

t.test('errors: a remote’s error, a refusal before the call is understood, every attempt failing', async (t) => {
  const receiver = await startOtlpReceiver();
  const notFound = await startPlannedUpstream([{ status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Task not found' } }) }]);
  const resetting = await startPlannedUpstream(['reset']);
  const telemetry = await telemetryFor(receiver);
  t.teardown(async () => {
    await telemetry.shutdown();
    await notFound.close();
    await resetting.close();
    await receiver.close();
  });

  await runUnaryCall(telemetry, {}, a2aCall('GetTask'), notFound);
  // A request refused before any A2ACall exists (unparseable body): the handle only sees its start and end.
  telemetry.startCall({ remote: 'weather', binding: 'http+json', requestId: 'req-bad' }).end(gatewayError('PARSE_ERROR'));
  await runUnaryCall(telemetry, {}, a2aCall('GetTask'), resetting, 2);
  await telemetry.forceFlush();
  const spans = await receiver.waitForSpans(6);

  const servers = byKind(spans, 'server');
  const remote = servers.find((s) => s.attributes['a2a.outcome'] === 'REMOTE_ERROR');
  t.match(remote?.attributes, { 'error.type': 'REMOTE_ERROR', 'rpc.status_code': '-32001' });
  t.same(remote?.status, { code: 'error', message: 'Task not found' });

  const refused = servers.find((s) => s.attributes['a2a.outcome'] === 'PARSE_ERROR');
  t.equal(refused?.name, 'http+json', 'a call not understood is named by its binding');
  t.match(refused?.attributes, { 'rpc.method': '_OTHER', 'rpc.system.name': 'http+json', 'error.type': 'PARSE_ERROR', 'rpc.status_code': '-32700' });
  t.notOk(refused && 'a2a.operation' in refused.attributes);

  const reset = servers.find((s) => s.attributes['a2a.outcome'] === 'UPSTREAM_RESET');
  const resetAttempts = byKind(spans, 'client').filter((c) => c.parentSpanId === reset?.spanId);
  t.equal(resetAttempts.length, 2);
  for (const attempt of resetAttempts) {
    t.match(attempt.attributes, { 'error.type': 'UPSTREAM_RESET' });
    t.notOk('http.response.status_code' in attempt.attributes);
    t.same(attempt.status, { code: 'error', message: 'connection to the remote was reset' });
  }
});

t.test('card fetches: a client span under the call that needed the card, or continuing the caller who asked', async (t) => {
  const receiver = await startOtlpReceiver();
  const telemetry = await telemetryFor(receiver);
  t.teardown(async () => {
    await telemetry.shutdown();
    await receiver.close();
  });
  const cardUrl = new URL('https://agent.example:8443/.well-known/agent-card.json?sig=SECRETSIG');

  const call = telemetry.startCall({ remote: 'weather', binding: 'grpc', requestId: 'r', traceparent: SAMPLED_PARENT });
  const underCall = telemetry.startCardFetch({ remote: 'weather', url: cardUrl, parent: call });
  t.match(underCall.traceparent, TRACEPARENT);
  underCall.end({ status: 200 });
  call.end(gatewayError('NO_USABLE_INTERFACE'));

  const forCaller = telemetry.startCardFetch({ remote: 'weather', url: cardUrl, traceparent: SAMPLED_PARENT });
  forCaller.end({ status: 500, reason: 'UPSTREAM_HTTP_ERROR' });
  await telemetry.forceFlush();
  const spans = await receiver.waitForSpans(3);

  const server = byKind(spans, 'server')[0];
  const cards = byKind(spans, 'client');
  t.equal(cards.length, 2);
  const child = cards.find((c) => c.parentSpanId === server?.spanId);
  t.equal(child?.name, 'GET /.well-known/agent-card.json');
  t.match(child?.attributes, {
    'http.request.method': 'GET',
    'url.full': 'https://agent.example:8443/.well-known/agent-card.json',
    'server.address': 'agent.example',
    'server.port': 8443,
    'http.response.status_code': 200,
    'a2a.outcome': 'ok',
  });
  t.equal(child?.traceId, TRACE_ID);
  const continued = cards.find((c) => c.parentSpanId === CALLER_SPAN);
  t.equal(continued?.traceId, TRACE_ID);
  t.match(continued?.attributes, { 'http.response.status_code': 500, 'error.type': 'UPSTREAM_HTTP_ERROR', 'a2a.outcome': 'UPSTREAM_HTTP_ERROR' });
  t.equal(continued?.status.code, 'error');
  t.notOk(receiver.exports.some((e) => e.raw.includes('SECRETSIG')), 'the query string is never exported');
});

t.test('bounded and credential-free: ids and messages are cut, no query strings, no header values', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startPlannedUpstream([{ status: 200, body: jsonRpc({ task: { id: `task-${'x'.repeat(500)}`, status: { state: 'TASK_STATE_WORKING' } } }) }], '/a2a?api_key=SECRETQUERY');
  const telemetry = await telemetryFor(receiver, { compression: 'gzip' });
  t.teardown(async () => {
    await telemetry.shutdown();
    await upstream.close();
    await receiver.close();
  });

  await runUnaryCall(telemetry, { requestId: 'r'.repeat(1000) }, a2aCall('SendMessage'), upstream);
  const long = telemetry.startCall({ remote: 'weather', binding: 'jsonrpc', requestId: 'r2' });
  long.end(remoteError(-32603, `é${'m'.repeat(2000)}`));
  await telemetry.forceFlush();
  const spans = await receiver.waitForSpans(3);
  t.equal(receiver.exports[0]?.headers['content-encoding'], 'gzip', 'compression: gzip is honoured');

  const sent = byKind(spans, 'server').find((s) => s.attributes['a2a.operation'] === 'SendMessage');
  const taskId = String(sent?.attributes['a2a.task.id']);
  t.ok(taskId.startsWith('task-xxx'));
  t.equal(Buffer.byteLength(taskId), 128, 'a task id is cut to 128 bytes');
  t.equal(String(sent?.attributes['a2a.request_id']).length, 256, 'every text attribute is cut to 256 characters');
  const client = byKind(spans, 'client')[0];
  t.equal(client?.attributes['url.full'], `${upstream.url.origin}/a2a`);

  const failed = byKind(spans, 'server').find((s) => s.attributes['a2a.request_id'] === 'r2');
  t.ok(failed && Buffer.byteLength(failed.status.message) <= 256 && failed.status.message.startsWith('émmm'), 'a status message is cut to 256 bytes');

  for (const { raw } of receiver.exports) {
    const body = raw.toString('latin1');
    t.notOk(body.includes('SECRETQUERY'), 'no query string');
    t.notOk(body.includes(OTLP_KEY), 'no exporter header value');
  }
  t.notOk(upstream.received.some((h) => JSON.stringify(h).includes(OTLP_KEY)), 'the exporter header never goes to a remote');
});

t.test('sampling: sampleRatio 1 and 0, a caller’s sampled flag, and the trace propagated either way', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startPlannedUpstream([{ status: 200, body: jsonRpc({}) }]);
  t.teardown(async () => {
    await upstream.close();
    await receiver.close();
  });
  const call = a2aCall('ListTasks');
  const cases: { name: string; overrides: Partial<TracesFile>; traceparent?: string; exported: boolean; traceId?: string; flags: string }[] = [
    { name: 'ratio 1, new trace', overrides: { sampleRatio: 1 }, exported: true, flags: '01' },
    { name: 'ratio 0, new trace', overrides: { sampleRatio: 0 }, exported: false, flags: '00' },
    { name: 'ratio 0, caller sampled, parentBased', overrides: { sampleRatio: 0 }, traceparent: SAMPLED_PARENT, exported: true, traceId: TRACE_ID, flags: '01' },
    { name: 'ratio 0, caller sampled, parentBased off', overrides: { sampleRatio: 0, parentBased: false }, traceparent: SAMPLED_PARENT, exported: false, traceId: TRACE_ID, flags: '00' },
    { name: 'ratio 1, caller not sampled, parentBased', overrides: { sampleRatio: 1 }, traceparent: UNSAMPLED_PARENT, exported: false, traceId: TRACE_ID, flags: '00' },
    { name: 'ratio 1, caller not sampled, parentBased off', overrides: { sampleRatio: 1, parentBased: false }, traceparent: UNSAMPLED_PARENT, exported: true, traceId: TRACE_ID, flags: '01' },
  ];
  for (const c of cases) {
    const before = receiver.spans().length;
    const received = upstream.received.length;
    const telemetry = await telemetryFor(receiver, c.overrides);
    await runUnaryCall(telemetry, c.traceparent ? { traceparent: c.traceparent } : {}, call, upstream);
    await telemetry.shutdown();
    const exported = receiver.spans().slice(before);
    t.equal(exported.length, c.exported ? 2 : 0, `${c.name}: ${c.exported ? 'server and client span exported' : 'nothing exported'}`);
    const match = TRACEPARENT.exec(String(upstream.received[received]?.traceparent));
    t.ok(match, `${c.name}: a traceparent still goes upstream`);
    if (c.traceId) t.equal(match?.[1], c.traceId, `${c.name}: the caller's trace id goes on`);
    t.not(match?.[2], CALLER_SPAN, `${c.name}: the gateway's own span is the remote's parent`);
    t.equal(match?.[3], c.flags, `${c.name}: sampled flag ${c.flags}`);
    if (c.exported) t.equal(exported.find((s) => s.kind === 'client')?.spanId, match?.[2]);
  }
});

t.test('traces off: no handle, no span, the caller’s trace headers go upstream unchanged', async (t) => {
  const upstream = await startPlannedUpstream([{ status: 200, body: jsonRpc({}) }]);
  t.teardown(() => upstream.close());
  const telemetry = await createTelemetry(undefined);
  t.equal(telemetry, Telemetry.off);
  t.equal(telemetry.tracing, false);
  t.equal(telemetry.active, false, 'nothing subscribed, nothing exported: the call path skips it all');
  const run = await runUnaryCall(telemetry, { traceparent: SAMPLED_PARENT, tracestate: 'vendor=abc' }, a2aCall('GetTask'), upstream);
  t.equal(run.trace, undefined);
  t.equal(upstream.received[0]?.traceparent, SAMPLED_PARENT);
  t.equal(upstream.received[0]?.tracestate, 'vendor=abc');
  await telemetry.shutdown();
});
