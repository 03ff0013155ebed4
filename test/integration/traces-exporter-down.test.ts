/**
 * A tracing backend that is down or hangs never reaches the calls: every
 * telemetry step returns at once, failures are reported (not thrown, no
 * unhandled rejection), shutdown is bounded, and while the collector hangs
 * the spans waiting for export are bounded by maxQueueSize (the next ones are
 * dropped, never waited for).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { resolveTraces, type TracesFile } from '../../src/config/traces.js';
import { createTelemetry, type Telemetry } from '../../src/telemetry/tracing.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { a2aCall, runUnaryCall, startPlannedUpstream } from '../support/trace-harness.js';

const OTLP_KEY = 'otlp-key-0123456789abcdef';

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1/traces`;
}

function telemetryFor(file: TracesFile, onExportFailure?: (error: Error, spans: number) => void): Promise<Telemetry> {
  return createTelemetry(resolveTraces(file, { TEST_OTLP_KEY: OTLP_KEY }), { onExportFailure });
}

/** One call span, started and ended as a refused call would: returns whatever the API returned. */
function oneSpan(telemetry: Telemetry, i: number): unknown {
  return telemetry.startCall({ remote: 'weather', binding: 'jsonrpc', requestId: `r-${i}` }).end();
}

t.test('collector down: calls complete, failures are reported, nothing throws or rejects, shutdown returns', async (t) => {
  const problems: unknown[] = [];
  const onProblem = (err: unknown) => problems.push(err);
  process.on('unhandledRejection', onProblem);
  process.on('uncaughtException', onProblem);
  t.teardown(() => {
    process.off('unhandledRejection', onProblem);
    process.off('uncaughtException', onProblem);
  });
  const failures: { error: Error; spans: number }[] = [];
  const telemetry = await telemetryFor(
    { endpoint: await closedPortUrl(), timeoutMs: 300, scheduledDelayMs: 10, headers: { 'x-api-key': { valueEnv: 'TEST_OTLP_KEY' } } },
    (error, spans) => failures.push({ error, spans }),
  );
  const upstream = await startPlannedUpstream([{ status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }) }]);
  t.teardown(() => upstream.close());

  for (let i = 0; i < 20; i++) {
    const run = await runUnaryCall(telemetry, {}, a2aCall('GetTask'), upstream);
    t.equal(run.outcome.kind, 'result', `call ${i + 1} answered`);
  }
  t.equal(oneSpan(telemetry, 0), undefined, 'ending a call returns nothing to wait for');
  t.equal(upstream.received.length, 20);

  await telemetry.forceFlush().catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 400));
  t.ok(failures.length >= 1, 'the lost export is reported');
  t.ok(failures.every((f) => f.spans >= 1 && f.error instanceof Error));
  t.notOk(failures.some((f) => `${f.error.message} ${f.error.stack ?? ''}`.includes(OTLP_KEY)), 'the report never carries the header value');
  await telemetry.shutdown();
  t.same(problems, [], 'no unhandled rejection, no uncaught exception');
});

t.test('a collector that hangs: spans waiting for export are bounded by maxQueueSize, the rest dropped', async (t) => {
  const QUEUE = 5;
  for (const [label, queued, arrive] of [
    ['just under the bound: every span queued is exported', QUEUE, QUEUE],
    ['just over the bound: the span past the queue is dropped', QUEUE + 1, QUEUE],
  ] as const) {
    const receiver = await startOtlpReceiver();
    const telemetry = await telemetryFor({ endpoint: receiver.url, maxQueueSize: QUEUE, maxExportBatchSize: QUEUE, scheduledDelayMs: 10, timeoutMs: 10_000 });
    receiver.hold();
    oneSpan(telemetry, 0);
    // The first export is in flight and unanswered: the processor exports one batch at a time.
    await receiver.waitForExports(1);
    for (let i = 1; i <= queued; i++) t.equal(oneSpan(telemetry, i), undefined);
    receiver.release();
    await receiver.waitForSpans(1 + arrive);
    await telemetry.forceFlush();
    t.equal(receiver.spans().length, 1 + arrive, label);
    t.same(
      receiver.spans().map((s) => s.attributes['a2a.request_id']),
      Array.from({ length: 1 + arrive }, (_, i) => `r-${i}`),
      `${label} (the oldest are kept)`,
    );
    await telemetry.shutdown();
    await receiver.close();
  }
});
