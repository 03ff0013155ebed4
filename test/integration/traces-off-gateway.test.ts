/**
 * Traces off through a running gateway: calls and card fetches load none of
 * the OpenTelemetry SDK or exporter modules (prom-client loads
 * @opentelemetry/api for exemplars whatever the gateway does, so only the
 * SDK and exporter count here), and the caller's trace context goes to the
 * remote as it came.
 */
import { createRequire } from 'node:module';
import t from 'tap';
import { request } from 'undici';
import { rpc, rpcRequest, startGateway } from '../support/gateway.js';
import { startSdkUpstream } from '../support/sdk-upstream.js';

const cache = createRequire(import.meta.url).cache;
const exporterModules = () => Object.keys(cache).filter((path) => /@opentelemetry\/(sdk-trace|exporter-trace|otlp|resources|core)\//.test(path)).length;

t.test('off: no OpenTelemetry SDK or exporter module loaded by calls or card fetches; traceparent forwarded unchanged', async (t) => {
  const upstream = await startSdkUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGateway(`server: { logLevel: warn }\nremotes:\n  sdk: { url: '${upstream.url}', allowPrivateNetwork: true }\n`);
  t.teardown(() => gw.close());
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const reply = await rpc(`${gw.url}/remotes/sdk`, rpcRequest('SendMessage', 1, { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } }), { 'a2a-version': '1.0', traceparent });
  t.ok(reply.json.result);
  t.equal(upstream.requests.at(-1)?.headers.traceparent, traceparent, 'the caller’s trace context is forwarded as before');
  const card = await request(`${gw.url}/remotes/sdk/.well-known/agent-card.json`, { headers: { traceparent } });
  t.equal(card.statusCode, 200);
  await card.body.dump();
  t.equal(exporterModules(), 0, 'no OpenTelemetry SDK or exporter module in the process');

  // The check can fail: a gateway with traces on loads them.
  const on = await startGateway(`server: { logLevel: warn }\ntelemetry:\n  traces: { endpoint: 'http://127.0.0.1:9/v1/traces' }\nremotes:\n  sdk: { url: '${upstream.url}', allowPrivateNetwork: true }\n`);
  await on.close();
  t.ok(exporterModules() > 0, 'traces on loads them');
});
