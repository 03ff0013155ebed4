/**
 * The diagnostics_channel events: nothing is active (and no handle needed)
 * while nobody subscribes and traces are off; with a subscriber, one call's
 * messages arrive in the call path's order, share one `call` object and have
 * the documented shape; with traces off the upstream trace headers are left
 * to the caller's (no traceparent from the gateway).
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import t from 'tap';
import { CHANNEL_NAMES } from '../../src/telemetry/channels.js';
import { Telemetry } from '../../src/telemetry/tracing.js';
import { a2aCall, gatewayError, result } from '../support/trace-harness.js';

type Seen = { channel: string; message: Record<string, unknown> };

function record(names: readonly string[]): { seen: Seen[]; stop(): void } {
  const seen: Seen[] = [];
  const handlers = names.map((name) => {
    const handler = (message: unknown) => seen.push({ channel: name, message: message as Record<string, unknown> });
    diagnosticsChannel.subscribe(name, handler);
    return [name, handler] as const;
  });
  return { seen, stop: () => handlers.forEach(([name, handler]) => diagnosticsChannel.unsubscribe(name, handler)) };
}

const ALL = Object.values(CHANNEL_NAMES);

t.test('inactive until someone subscribes; active again only while they do', async (t) => {
  const telemetry = Telemetry.off;
  t.equal(telemetry.active, false);
  t.equal(telemetry.cardsActive, false);
  for (const name of ALL) {
    const handler = () => {};
    diagnosticsChannel.subscribe(name, handler);
    const isCard = name.startsWith('a2a-egress:card:');
    t.equal(telemetry.active, !isCard, `${name} subscribed: calls ${isCard ? 'stay inactive' : 'active'}`);
    t.equal(telemetry.cardsActive, isCard, `${name} subscribed: cards ${isCard ? 'active' : 'stay inactive'}`);
    diagnosticsChannel.unsubscribe(name, handler);
    t.equal(telemetry.active, false);
    t.equal(telemetry.cardsActive, false);
  }
});

t.test('a unary call with a retry: start, two attempts, end — one call object throughout', async (t) => {
  const { seen, stop } = record(ALL);
  t.teardown(stop);
  const telemetry = Telemetry.off;
  t.equal(telemetry.active, true);
  const trace = telemetry.startCall({ remote: 'weather', binding: 'http+json', requestId: 'req-9', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
  trace.setCall(a2aCall('GetTask', '1.0', 'http+json'));
  const url = new URL('https://weather.example/a2a?key=SECRET');
  const first = trace.upstreamStart({ attempt: 1, binding: 'jsonrpc', url });
  t.equal(first.traceparent, undefined, 'traces off: the caller’s traceparent goes upstream as it came');
  t.equal(first.tracestate, undefined);
  first.end({ reason: 'UPSTREAM_RESET' });
  first.end({ status: 200 });
  const second = trace.upstreamStart({ attempt: 2, binding: 'jsonrpc', url });
  second.end({ status: 200 });
  const outcome = result({ id: 'task-1', status: { state: 'TASK_STATE_WORKING' } });
  trace.end(outcome);
  trace.end(gatewayError('GATEWAY_ERROR'));

  t.same(seen.map((s) => s.channel), [
    CHANNEL_NAMES.callStart,
    CHANNEL_NAMES.upstreamStart,
    CHANNEL_NAMES.upstreamEnd,
    CHANNEL_NAMES.upstreamStart,
    CHANNEL_NAMES.upstreamEnd,
    CHANNEL_NAMES.callEnd,
  ], 'each step once, in order; second ends ignored');
  const call = seen[0]?.message.call;
  t.ok(seen.every((s) => s.message.call === call), 'every message carries the same call object');
  t.match(call, { remote: 'weather', binding: 'http+json', requestId: 'req-9', operation: 'GetTask', generation: '1.0', traceId: undefined });
  t.match(seen[1]?.message, { attempt: 1, binding: 'jsonrpc', url: 'https://weather.example/a2a' });
  t.match(seen[2]?.message, { attempt: 1, status: undefined, reason: 'UPSTREAM_RESET', durationMs: Number });
  t.match(seen[4]?.message, { attempt: 2, status: 200, reason: undefined });
  t.match(seen[5]?.message, { ending: 'ok', code: undefined, taskId: 'task-1', taskState: 'TASK_STATE_WORKING', durationMs: Number });
  t.equal(seen[5]?.message.outcome, outcome, 'the Outcome itself, not a copy');
  t.notOk(JSON.stringify(seen.map((s) => s.message)).includes('SECRET'), 'no query string');
});

t.test('a stream: start, each event, end; an error outcome; a card fetch', async (t) => {
  const { seen, stop } = record(ALL);
  t.teardown(stop);
  const telemetry = Telemetry.off;
  const trace = telemetry.startCall({ remote: 'weather', binding: 'jsonrpc', requestId: 'r' });
  trace.setCall(a2aCall('SendStreamingMessage', '0.3'));
  trace.upstreamStart({ attempt: 1, binding: 'jsonrpc', url: new URL('http://127.0.0.1:9/a2a') }).end({ status: 200 });
  const stream = trace.streamStart();
  const events = [
    result({ kind: 'status-update', taskId: 't', status: { state: 'working' } }),
    result({ kind: 'status-update', taskId: 't', status: { state: 'failed' } }),
  ];
  for (const e of events) stream.event(e);
  stream.end({ ending: 'CALLER_CLOSED', bytes: 99 });
  stream.event(events[0]!);
  trace.end();

  const names = seen.map((s) => s.channel);
  t.same(names, [
    CHANNEL_NAMES.callStart,
    CHANNEL_NAMES.upstreamStart,
    CHANNEL_NAMES.upstreamEnd,
    CHANNEL_NAMES.streamStart,
    CHANNEL_NAMES.streamEvent,
    CHANNEL_NAMES.streamEvent,
    CHANNEL_NAMES.streamEnd,
    CHANNEL_NAMES.callEnd,
  ]);
  t.match(seen[4]?.message, { index: 1 });
  t.equal(seen[5]?.message.outcome, events[1]);
  t.match(seen[6]?.message, { ending: 'CALLER_CLOSED', events: 2, bytes: 99 });
  t.match(seen[7]?.message, { ending: 'CALLER_CLOSED', taskId: 't', taskState: 'TASK_STATE_FAILED', outcome: undefined });

  seen.length = 0;
  const refused = telemetry.startCall({ remote: 'unknown', binding: 'grpc', requestId: 'r2' });
  const error = gatewayError('UNKNOWN_REMOTE');
  refused.end(error);
  t.match(seen[1]?.message, { ending: 'UNKNOWN_REMOTE', code: -32600, outcome: error, taskId: undefined });
  t.match(seen[1]?.message.call, { operation: undefined });

  seen.length = 0;
  t.equal(telemetry.cardsActive, true);
  const fetch = telemetry.startCardFetch({ remote: 'weather', url: new URL('https://w.example/.well-known/agent-card.json'), parent: trace });
  t.equal(fetch.traceparent, undefined);
  fetch.end({ status: 404, reason: 'UPSTREAM_HTTP_ERROR' });
  t.same(seen.map((s) => s.channel), [CHANNEL_NAMES.cardStart, CHANNEL_NAMES.cardEnd]);
  t.match(seen[0]?.message.fetch, { remote: 'weather', url: 'https://w.example/.well-known/agent-card.json', call: trace.info });
  t.match(seen[1]?.message, { ending: 'UPSTREAM_HTTP_ERROR', status: 404, durationMs: Number });
});

t.test('a call the path forgot to close a step of: the step ends with the call', async (t) => {
  const { seen, stop } = record(ALL);
  t.teardown(stop);
  const trace = Telemetry.off.startCall({ remote: 'weather', binding: 'jsonrpc', requestId: 'r' });
  trace.setCall(a2aCall('SendStreamingMessage'));
  trace.upstreamStart({ attempt: 1, binding: 'jsonrpc', url: new URL('http://127.0.0.1:9/') });
  trace.end(gatewayError('GATEWAY_SHUTDOWN'));
  t.same(seen.map((s) => s.channel), [CHANNEL_NAMES.callStart, CHANNEL_NAMES.upstreamStart, CHANNEL_NAMES.upstreamEnd, CHANNEL_NAMES.callEnd]);
  t.match(seen[2]?.message, { reason: 'GATEWAY_SHUTDOWN' });
});
