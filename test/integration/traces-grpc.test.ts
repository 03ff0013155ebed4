/**
 * Traces of gRPC callers through the running gateway: a server span per call
 * (continuing the caller's traceparent from its metadata) and a stream span
 * with its event count, exported to a real OTLP/HTTP receiver; the SDK's
 * gRPC client and server as the peers.
 */
import t from 'tap';
import type { Task } from '@a2a-js/sdk';
import { startSdkGrpcUpstream } from '../support/grpc-peers.js';
import { sendText, streamText } from '../support/sdk-client.js';
import { sdkGrpcClientOf, serveCard, startGrpcGateway } from '../support/grpc-gateway.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

t.test('gRPC callers: a server span per call in the caller’s trace, a stream span with its events', async (t) => {
  const receiver = await startOtlpReceiver();
  const upstream = await startSdkGrpcUpstream({ stepDelayMs: 5 });
  const cardHost = await serveCard(() => upstream.card);
  const gw = await startGrpcGateway(`
server: { host: 127.0.0.1, port: 0, grpc: { port: 0 } }
telemetry:
  traces: { endpoint: '${receiver.url}', scheduledDelayMs: 20 }
remotes:
  agent:
    url: ${cardHost.url}/
    allowPrivateNetwork: true
    grpc: { target: "${upstream.target}" }
`);
  t.teardown(async () => {
    await gw.close();
    await cardHost.close();
    await upstream.close();
    await receiver.close();
  });
  const sdk = await sdkGrpcClientOf(gw.grpc.shared!, upstream.card);
  const options = { serviceParameters: { 'a2a-egress-remote': 'agent', traceparent: TRACEPARENT } };
  const task = (await sendText(sdk, 'task build it', options)) as Task;
  t.ok(task.id);
  const [server] = await receiver.waitForSpans(1);
  t.equal(server?.kind, 'server');
  t.equal(server?.traceId, TRACE_ID, 'the caller’s trace continues');
  t.equal(server?.name, 'lf.a2a.v1.A2AService/SendMessage');
  t.match(server?.attributes, { 'a2a.binding': 'grpc', 'a2a.remote': 'agent', 'a2a.outcome': 'ok', 'a2a.task.state': 'TASK_STATE_COMPLETED' });

  const events = await streamText(sdk, 'task streamed', options);
  const spans = await receiver.waitForSpans(3);
  const stream = spans.find((s) => s.kind === 'internal');
  t.equal(stream?.attributes['a2a.stream.events'], events.length, 'every event counted');
  const streamServer = spans.find((s) => s.spanId === stream?.parentSpanId);
  t.match(streamServer?.attributes, { 'a2a.binding': 'grpc', 'a2a.outcome': 'ok' });
  t.equal(streamServer?.name, 'lf.a2a.v1.A2AService/SendStreamingMessage');
});
