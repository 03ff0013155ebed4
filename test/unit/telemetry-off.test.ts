/**
 * Traces off costs no OpenTelemetry code: creating the gateway's telemetry
 * without `telemetry.traces` loads no @opentelemetry module (they are
 * CommonJS, so a loaded one shows in require.cache), and a handle is not
 * even needed. Configuring traces does load them, which shows the check can
 * fail.
 */
import { createRequire } from 'node:module';
import t from 'tap';
import { createTelemetry } from '../../src/telemetry/tracing.js';
import { resolveTraces } from '../../src/config/traces.js';

const cache = createRequire(import.meta.url).cache;
const otelModules = () => Object.keys(cache).filter((path) => path.includes('@opentelemetry')).length;

t.test('off: no OpenTelemetry module loaded, nothing active', async (t) => {
  const telemetry = await createTelemetry(undefined);
  t.equal(telemetry.active, false);
  t.equal(telemetry.tracing, false);
  t.equal(otelModules(), 0, 'no @opentelemetry module in the process');
});

t.test('on: the exporter is loaded only then', async (t) => {
  const telemetry = await createTelemetry(resolveTraces({ endpoint: 'http://127.0.0.1:9/v1/traces' }, {}));
  t.teardown(() => telemetry.shutdown());
  t.equal(telemetry.tracing, true);
  t.equal(telemetry.active, true);
  t.ok(otelModules() > 0, 'the SDK and exporter are loaded');
});
