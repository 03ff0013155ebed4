/**
 * /metrics after real calls through a real gateway: every series the
 * operator dashboards use is present with bounded labels, and the numbers
 * move with the traffic.
 */
import t from 'tap';
import { request } from 'undici';
import { startHostileUpstream, type HostileUpstream } from '../support/hostile-upstream.js';
import { reasonOf, rpc, rpcRequest } from '../support/gateway.js';
import { getText, sampleValue, startOpsGateway, type OpsGateway } from '../support/ops-gateway.js';

let upstream: HostileUpstream;
let gw: OpsGateway;

t.before(async () => {
  upstream = await startHostileUpstream();
  // A short drain: close() waits up to drainMs for a caller socket that connected but never sent a request.
  gw = await startOpsGateway(`
server: { drainMs: 300 }
remotes:
  hostile:
    url: ${upstream.url}/
    allowPrivateNetwork: true
    timeouts: { totalMs: 3000 }
    circuitBreaker: { failureThreshold: 10000 }
`);
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

const metrics = async (): Promise<string> => {
  const res = await getText(`${gw.url}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text;
};

async function streamCall(path: string, id: string): Promise<string> {
  const res = await request(`${gw.url}/remotes/hostile/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify(rpcRequest('SendStreamingMessage', id, { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } })),
  });
  return res.body.text();
}

/** The open-streams gauge is decremented just after the last event is written: give it a moment, boundedly. */
async function openStreamsSettle(): Promise<number | undefined> {
  let value: number | undefined;
  for (let i = 0; i < 50; i++) {
    value = sampleValue(await metrics(), 'a2a_egress_open_streams', { remote: 'hostile' });
    if (value === 0) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
  return value;
}

t.test('calls, normalizations, latency, bytes and the method label after mixed traffic', async (t) => {
  const ok1 = await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('GetTask', 1, { id: 't' }));
  const ok2 = await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest('GetTask', 2, { id: 't' }));
  t.ok(ok1.json.result && ok2.json.result, 'two successes');
  const html = await rpc(`${gw.url}/remotes/hostile/html-502`, rpcRequest('SendMessage', 3));
  t.equal(reasonOf(html), 'UPSTREAM_HTTP_ERROR');
  const longName = 'x'.repeat(100);
  const odd = await rpc(`${gw.url}/remotes/hostile/ok`, rpcRequest(longName, 4));
  t.equal(reasonOf(odd), 'METHOD_NOT_ALLOWED', 'a non-A2A method is refused');

  const text = await metrics();
  t.equal(sampleValue(text, 'a2a_egress_calls_total', { remote: 'hostile', method: 'GetTask', outcome: 'ok' }), 2);
  t.equal(sampleValue(text, 'a2a_egress_calls_total', { remote: 'hostile', method: 'SendMessage', outcome: 'UPSTREAM_HTTP_ERROR' }), 1);
  t.equal(sampleValue(text, 'a2a_egress_calls_total', { remote: 'hostile', method: 'other', outcome: 'METHOD_NOT_ALLOWED' }), 1, 'counted as "other"');
  t.notOk(text.includes(longName), 'the raw method name is never a label');
  t.notOk(text.includes('xxxxxxxx'), 'not even a prefix of it');

  t.equal(sampleValue(text, 'a2a_egress_normalizations_total', { remote: 'hostile', reason: 'UPSTREAM_HTTP_ERROR' }), 1);
  t.equal(sampleValue(text, 'a2a_egress_normalizations_total', { remote: 'hostile', reason: 'METHOD_NOT_ALLOWED' }), 1);
  t.equal(sampleValue(text, 'a2a_egress_normalizations_total', { remote: 'hostile', reason: 'ok' }), undefined, 'successes are not normalizations');

  t.match(text, /# TYPE a2a_egress_upstream_duration_seconds histogram/);
  // Three calls reached the upstream (the refused one did not).
  t.equal(sampleValue(text, 'a2a_egress_upstream_duration_seconds_count', { remote: 'hostile' }), 3);
  t.equal(sampleValue(text, 'a2a_egress_upstream_duration_seconds_bucket', { remote: 'hostile', le: '+Inf' }), 3);

  const bytesIn = sampleValue(text, 'a2a_egress_bytes_total', { remote: 'hostile', direction: 'caller_in' }) ?? 0;
  const bytesOut = sampleValue(text, 'a2a_egress_bytes_total', { remote: 'hostile', direction: 'caller_out' }) ?? 0;
  const sentIn = [1, 2].map((id) => JSON.stringify(rpcRequest('GetTask', id, { id: 't' })).length).reduce((a, b) => a + b, 0) +
    JSON.stringify(rpcRequest('SendMessage', 3)).length + JSON.stringify(rpcRequest(longName, 4)).length;
  t.equal(bytesIn, sentIn, 'caller_in counts exactly the request bodies');
  t.equal(bytesOut, [ok1, ok2, html, odd].reduce((n, r) => n + Buffer.byteLength(r.text), 0), 'caller_out counts exactly the reply bodies');

  t.match(text, /# TYPE a2a_egress_circuit_state gauge/);
  t.match(text, /# TYPE a2a_egress_config_reloads_total counter/);

  // The gateway-side duration: every answered call, by outcome class (the exact reason stays in calls_total).
  t.match(text, /# TYPE a2a_egress_call_duration_seconds histogram/);
  const durations = (method: string, outcomeClass: string) =>
    sampleValue(text, 'a2a_egress_call_duration_seconds_count', { remote: 'hostile', method, outcome_class: outcomeClass });
  t.equal(durations('GetTask', 'ok'), 2);
  t.equal(durations('SendMessage', 'invalid_response'), 1, 'UPSTREAM_HTTP_ERROR is an invalid response');
  t.equal(durations('other', 'caller_error'), 1, 'the refused call is timed too');
  t.equal(sampleValue(text, 'a2a_egress_call_duration_seconds_bucket', { remote: 'hostile', method: 'GetTask', outcome_class: 'ok', le: '+Inf' }), 2);
  t.ok((sampleValue(text, 'a2a_egress_call_duration_seconds_sum', { remote: 'hostile', method: 'GetTask', outcome_class: 'ok' }) ?? 0) > 0, 'a positive sum');
  t.notMatch(text, /outcome_class="(UPSTREAM_HTTP_ERROR|METHOD_NOT_ALLOWED)"/, 'classes, never raw reasons, label the histogram');
});

t.test('circuit_state: a series for every remote from the start, dropped when a reload removes the remote', async (t) => {
  const yaml = (names: string[]) =>
    `remotes:\n${names.map((n) => `  ${n}:\n    url: ${upstream.url}/\n    allowPrivateNetwork: true\n`).join('')}`;
  const fresh = await startOpsGateway(yaml(['alpha', 'beta']));
  t.teardown(() => fresh.close());
  const scrape = async () => (await getText(`${fresh.url}/metrics`)).text;
  let text = await scrape();
  t.equal(sampleValue(text, 'a2a_egress_circuit_state', { remote: 'alpha' }), 0, 'alpha closed before any call');
  t.equal(sampleValue(text, 'a2a_egress_circuit_state', { remote: 'beta' }), 0, 'beta closed before any call');
  const { parseConfig } = await import('../../src/loader/load.js');
  fresh.gateway.reload(parseConfig(yaml(['beta', 'gamma']), 'reload.yaml'));
  text = await scrape();
  t.equal(sampleValue(text, 'a2a_egress_circuit_state', { remote: 'alpha' }), undefined, 'a removed remote has no series');
  t.equal(sampleValue(text, 'a2a_egress_circuit_state', { remote: 'beta' }), 0);
  t.equal(sampleValue(text, 'a2a_egress_circuit_state', { remote: 'gamma' }), 0, 'an added remote has one at once');
});

t.test('process and Node.js metrics under their standard names, not prefixed', async (t) => {
  const withProcess = await startOpsGateway(`remotes:\n  a:\n    url: ${upstream.url}/\n    allowPrivateNetwork: true\n`, { processMetrics: true });
  t.teardown(() => withProcess.close());
  const text = (await getText(`${withProcess.url}/metrics`)).text;
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds']) {
    t.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
  }
  t.notMatch(text, /a2a_egress_(process|nodejs)_/, 'no prefixed copies');
});

t.test('streams: open-streams gauge back to 0 after the stream, events counted', async (t) => {
  const before = sampleValue(await metrics(), 'a2a_egress_stream_events_total', { remote: 'hostile' }) ?? 0;
  const body = await streamCall('sse-ok', 's1');
  const events = body.split('\n\n').filter((e) => e.startsWith('data: '));
  t.equal(events.length, 4, 'four events relayed');
  t.equal(await openStreamsSettle(), 0, 'no stream open once it ended');
  const text = await metrics();
  t.equal(sampleValue(text, 'a2a_egress_stream_events_total', { remote: 'hostile' }), before + 4);
  t.equal(sampleValue(text, 'a2a_egress_calls_total', { remote: 'hostile', method: 'SendStreamingMessage', outcome: 'ok' }), 1);
});

t.test('open-streams gauge counts a stream while it is open', async (t) => {
  const res = await request(`${gw.url}/remotes/hostile/sse-comments-only/ms=20`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rpcRequest('SendStreamingMessage', 'open-1')),
  });
  let during: number | undefined;
  for (let i = 0; i < 50 && during !== 1; i++) {
    during = sampleValue(await metrics(), 'a2a_egress_open_streams', { remote: 'hostile' });
    if (during !== 1) await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(during, 1, 'one stream open');
  res.body.destroy();
  t.equal(await openStreamsSettle(), 0, 'the caller hanging up closes it');
});
