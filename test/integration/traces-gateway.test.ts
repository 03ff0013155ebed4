/**
 * Traces through the running gateway: a gateway started from YAML with
 * `telemetry.traces` pointing at a real OTLP/HTTP receiver on 127.0.0.1
 * (protobuf bodies decoded with the official opentelemetry-proto schema), a
 * real @a2a-js/sdk server as the remote, JSON-RPC callers with a W3C
 * traceparent. Checked: the caller's trace continued, one client span per
 * upstream attempt whose id the remote received as its parent, the stream
 * span with its event count, the card fetch span, and no secret or message
 * text in any attribute. Then diagnostics_channel with traces off.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { CHANNEL_NAMES } from '../../src/telemetry/channels.js';
import { rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { startOtlpReceiver, type ExportedSpan, type OtlpReceiver } from '../support/otlp-receiver.js';
import { startSdkUpstream, type SdkUpstream } from '../support/sdk-upstream.js';
import { streamRpc } from '../support/sse-client.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const REMOTE_TOKEN = 'remote-secret-token-5f2c9a';
const CALLER_AUTH = 'caller-bearer-9d1e7b';
const BODY_MARKER = 'private-message-text-7c41';
const TRACEPARENT_SHAPE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

async function tracedGateway(t: Test, upstream: SdkUpstream, receiver: OtlpReceiver | undefined): Promise<RunningGateway> {
  const traces = receiver ? `telemetry:\n  traces: { endpoint: '${receiver.url}', scheduledDelayMs: 20 }\n` : '';
  const gw = await startGateway(
    `server: { logLevel: warn }
${traces}remotes:
  sdk:
    url: ${upstream.url}
    allowPrivateNetwork: true
    auth: { type: bearer, tokenEnv: SDK_TOKEN }
    forwardHeaders: [x-caller-note]
`,
    { env: { SDK_TOKEN: REMOTE_TOKEN } },
  );
  t.teardown(() => gw.close());
  return gw;
}

const send = (text: string) => ({ message: { messageId: `m-${text.length}-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }] } });
const headers = { 'a2a-version': '1.0', traceparent: TRACEPARENT, tracestate: 'caller=abc', authorization: `Bearer ${CALLER_AUTH}` };

/** Every attribute value of every span, resource included, as one text. */
const allAttributeText = (spans: readonly ExportedSpan[]): string =>
  JSON.stringify(spans.map((s) => [s.name, s.attributes, s.status.message, s.resource, s.events]));

t.test('a unary call: the caller’s trace continues, the client span is the remote’s parent, nothing secret in the spans', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startSdkUpstream();
  t.teardown(async () => {
    await upstream.close();
    await receiver.close();
  });
  const gw = await tracedGateway(t, upstream, receiver);

  const reply = await rpc(`${gw.url}/remotes/sdk`, rpcRequest('SendMessage', 1, send(`hello ${BODY_MARKER}`)), headers);
  t.equal(reply.status, 200);
  t.ok(reply.json.result, 'the call succeeded');
  const spans = await receiver.waitForSpans(2);
  const server = spans.find((s) => s.kind === 'server');
  const client = spans.find((s) => s.kind === 'client');
  t.ok(server && client, 'a server span and a client span');
  if (!server || !client) return;
  t.equal(server.traceId, TRACE_ID, 'the caller’s trace continues');
  t.equal(server.parentSpanId, CALLER_SPAN, 'under the caller’s span');
  t.equal(server.traceState, 'caller=abc');
  t.equal(server.name, 'lf.a2a.v1.A2AService/SendMessage');
  t.match(server.attributes, { 'a2a.remote': 'sdk', 'a2a.binding': 'jsonrpc', 'a2a.operation': 'SendMessage', 'a2a.outcome': 'ok', 'rpc.method': 'lf.a2a.v1.A2AService/SendMessage' });
  t.equal(client.traceId, TRACE_ID);
  t.equal(client.parentSpanId, server.spanId, 'the attempt is a child of the call');
  t.match(client.attributes, { 'http.request.method': 'POST', 'http.response.status_code': 200, 'server.address': '127.0.0.1' });

  const sent = upstream.requests.at(-1)!;
  const match = TRACEPARENT_SHAPE.exec(String(sent.headers.traceparent));
  t.ok(match, 'the remote received a traceparent');
  t.equal(match?.[1], TRACE_ID, 'in the caller’s trace');
  t.equal(match?.[2], client.spanId, 'with the gateway’s client span as parent, not the caller’s span');
  t.equal(sent.headers.tracestate, 'caller=abc', 'tracestate carried on');

  const text = allAttributeText(spans);
  for (const secret of [REMOTE_TOKEN, CALLER_AUTH, BODY_MARKER]) t.notOk(text.includes(secret), `no ${secret.split('-')[0]} value in any span`);
  t.notOk(text.includes('hello'), 'no message text');
});

t.test('a call refused by the gateway has a failed server span with the reason and code', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startSdkUpstream();
  t.teardown(async () => {
    await upstream.close();
    await receiver.close();
  });
  const gw = await tracedGateway(t, upstream, receiver);
  const reply = await rpc(`${gw.url}/remotes/sdk`, rpcRequest('NoSuchMethod', 7, {}), headers);
  t.equal(reply.json.error?.code, -32601);
  const [server] = await receiver.waitForSpans(1);
  t.equal(server?.kind, 'server');
  t.equal(server?.traceId, TRACE_ID);
  t.match(server?.attributes, { 'a2a.outcome': 'METHOD_NOT_ALLOWED', 'error.type': 'METHOD_NOT_ALLOWED', 'rpc.status_code': '-32601' });
  t.equal(server?.status.code, 'error');
  t.equal(upstream.requests.length, 0, 'nothing reached the remote');
});

t.test('a caller refused before its request is read (no token) still has its server span', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const gw = await startGateway(
    `server: { logLevel: warn, auth: { type: bearer, tokensEnv: CALLER_TOKENS } }\ntelemetry:\n  traces: { endpoint: '${receiver.url}', scheduledDelayMs: 20 }\nremotes:\n  sdk: { url: 'http://127.0.0.1:9/', allowPrivateNetwork: true }\n`,
    { env: { CALLER_TOKENS: 'the-right-token-1234' } },
  );
  t.teardown(() => gw.close());
  const reply = await rpc(`${gw.url}/remotes/sdk`, rpcRequest('GetTask', 1, { id: 't' }), { traceparent: TRACEPARENT, authorization: `Bearer ${CALLER_AUTH}` });
  t.equal(reply.status, 401);
  const [server] = await receiver.waitForSpans(1);
  t.equal(server?.kind, 'server');
  t.equal(server?.traceId, TRACE_ID);
  t.match(server?.attributes, { 'a2a.outcome': 'UNAUTHENTICATED', 'rpc.method': '_OTHER' });
  t.notOk(allAttributeText([server!]).includes(CALLER_AUTH), 'the refused token is in no attribute');
});

t.test('a streaming call: a stream span with the event count, the task’s id and last state on the call', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startSdkUpstream();
  t.teardown(async () => {
    await upstream.close();
    await receiver.close();
  });
  const gw = await tracedGateway(t, upstream, receiver);
  const reply = await streamRpc(`${gw.url}/remotes/sdk`, rpcRequest('SendStreamingMessage', 's1', send(`task build ${BODY_MARKER}`)), headers);
  t.equal(reply.status, 200);
  t.ok(reply.events.length >= 3, `${reply.events.length} events relayed`);
  const spans = await receiver.waitForSpans(3);
  const server = spans.find((s) => s.kind === 'server');
  const stream = spans.find((s) => s.kind === 'internal');
  const client = spans.find((s) => s.kind === 'client');
  t.ok(server && stream && client);
  if (!server || !stream || !client) return;
  t.equal(stream.parentSpanId, server.spanId);
  t.equal(stream.attributes['a2a.stream.events'], reply.events.length, 'every event counted');
  t.match(stream.attributes, { 'a2a.outcome': 'ok' });
  t.ok(stream.events.length >= 1, 'the first event is marked');
  t.equal(server.name, 'lf.a2a.v1.A2AService/SendStreamingMessage');
  t.match(server.attributes, { 'a2a.outcome': 'ok', 'a2a.task.state': 'TASK_STATE_COMPLETED' });
  t.type(server.attributes['a2a.task.id'], 'string');
  t.notOk(allAttributeText(spans).includes(BODY_MARKER), 'no message text');
});

t.test('a card fetch the caller caused is a client span in the caller’s trace', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startSdkUpstream();
  t.teardown(async () => {
    await upstream.close();
    await receiver.close();
  });
  const gw = await tracedGateway(t, upstream, receiver);
  const res = await request(`${gw.url}/remotes/sdk/.well-known/agent-card.json`, { headers: { traceparent: TRACEPARENT, 'a2a-version': '1.0' } });
  t.equal(res.statusCode, 200);
  await res.body.dump();
  const [card] = await receiver.waitForSpans(1);
  t.equal(card?.kind, 'client');
  t.equal(card?.traceId, TRACE_ID);
  t.equal(card?.parentSpanId, CALLER_SPAN);
  t.match(card?.attributes, { 'http.request.method': 'GET', 'http.response.status_code': 200, 'a2a.outcome': 'ok' });
  const fetched = upstream.requests.find((r) => r.url.includes('agent-card'));
  t.equal(TRACEPARENT_SHAPE.exec(String(fetched?.headers.traceparent))?.[2], card?.spanId, 'the card request carries the fetch span as parent');
});

t.test('traces off: diagnostics_channel subscribers see the call, its attempt and its stream; the caller’s traceparent goes on unchanged', async (t) => {
  const upstream = await startSdkUpstream();
  t.teardown(() => upstream.close());
  const gw = await tracedGateway(t, upstream, undefined);
  const seen: { channel: string; message: Record<string, unknown> }[] = [];
  const subscribers = Object.values(CHANNEL_NAMES).map((name) => {
    const fn = (message: unknown) => seen.push({ channel: name, message: message as Record<string, unknown> });
    diagnosticsChannel.subscribe(name, fn);
    return () => diagnosticsChannel.unsubscribe(name, fn);
  });
  t.teardown(() => subscribers.forEach((off) => off()));

  const reply = await streamRpc(`${gw.url}/remotes/sdk`, rpcRequest('SendStreamingMessage', 'd1', send('task build it')), headers);
  t.equal(reply.status, 200);
  const names = seen.map((s) => s.channel);
  t.same(
    [...new Set(names)],
    [CHANNEL_NAMES.callStart, CHANNEL_NAMES.upstreamStart, CHANNEL_NAMES.upstreamEnd, CHANNEL_NAMES.streamStart, CHANNEL_NAMES.streamEvent, CHANNEL_NAMES.streamEnd, CHANNEL_NAMES.callEnd],
    'each point, in order',
  );
  t.equal(names.filter((n) => n === CHANNEL_NAMES.streamEvent).length, reply.events.length, 'one message per relayed event');
  const start = seen[0]!.message.call as Record<string, unknown>;
  const end = seen.find((s) => s.channel === CHANNEL_NAMES.callEnd)!.message;
  t.equal(end.call, start, 'one call object shared by all messages');
  t.match(start, { remote: 'sdk', binding: 'jsonrpc', operation: 'SendStreamingMessage', generation: '1.0', traceId: undefined });
  t.match(end, { ending: 'ok', taskState: 'TASK_STATE_COMPLETED' });
  t.match(seen.find((s) => s.channel === CHANNEL_NAMES.upstreamEnd)!.message, { attempt: 1, status: 200 });
  t.equal(upstream.requests.at(-1)!.headers.traceparent, TRACEPARENT, 'no span: the caller’s traceparent is forwarded as it came');

  // Unsubscribed: the next call leaves no trace.
  subscribers.forEach((off) => off());
  const before = seen.length;
  await rpc(`${gw.url}/remotes/sdk`, rpcRequest('SendMessage', 2, send('hello')), headers);
  t.equal(seen.length, before, 'nothing published once nobody listens');
});

t.test('HTTP+JSON callers (transcoded to a JSON-RPC remote): the same server, client and stream spans, the binding named', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startSdkUpstream();
  t.teardown(async () => {
    await upstream.close();
    await receiver.close();
  });
  const gw = await tracedGateway(t, upstream, receiver);
  const res = await request(`${gw.url}/remotes/sdk/message:send`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(send(`task build ${BODY_MARKER}`)),
  });
  t.equal(res.statusCode, 200);
  await res.body.dump();
  // The server span, the attempt, and the card fetch `binding: auto` made to learn the remote's bindings.
  const spans = await receiver.waitForSpans(3);
  const server = spans.find((s) => s.kind === 'server');
  const client = spans.find((s) => s.kind === 'client' && s.attributes['http.request.method'] === 'POST');
  t.ok(spans.some((s) => s.kind === 'client' && s.name.startsWith('GET ') && s.attributes['a2a.remote'] === 'sdk'), 'the card fetch has its span');
  t.equal(server?.traceId, TRACE_ID);
  t.equal(server?.name, 'lf.a2a.v1.A2AService/SendMessage');
  t.match(server?.attributes, { 'a2a.binding': 'http+json', 'rpc.system.name': 'http+json', 'a2a.outcome': 'ok', 'a2a.task.state': 'TASK_STATE_COMPLETED' });
  t.equal(client?.parentSpanId, server?.spanId);
  t.match(client?.attributes, { 'a2a.binding': 'jsonrpc', 'http.request.method': 'POST', 'http.response.status_code': 200 });
  const posted = upstream.requests.filter((r) => r.method === 'POST').at(-1);
  t.equal(TRACEPARENT_SHAPE.exec(String(posted?.headers.traceparent))?.[2], client?.spanId, 'the remote’s parent is the attempt');

  const streamed = await request(`${gw.url}/remotes/sdk/message:stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify(send('task build it')),
  });
  const text = await streamed.body.text();
  const events = text.split('\n\n').filter((e) => e.startsWith('data:')).length;
  // Export batches arrive in their own time (and binding: auto may add card fetch spans): wait for the stream span.
  const streamAndCall = (spans: readonly ExportedSpan[]) => spans.some((s) => s.kind === 'internal' && spans.some((p) => p.spanId === s.parentSpanId));
  let all = receiver.spans();
  for (let waited = 0; !streamAndCall(all) && waited < 5000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    all = receiver.spans();
  }
  const stream = all.find((s) => s.kind === 'internal');
  t.equal(stream?.attributes['a2a.stream.events'], events, 'every relayed event counted');
  const streamServer = all.find((s) => s.kind === 'server' && s.spanId === stream?.parentSpanId);
  t.match(streamServer?.attributes, { 'a2a.binding': 'http+json', 'a2a.outcome': 'ok', 'a2a.task.state': 'TASK_STATE_COMPLETED' }, 'the task state read from the events');
  t.notOk(allAttributeText(all).includes(BODY_MARKER), 'no message text');

});
