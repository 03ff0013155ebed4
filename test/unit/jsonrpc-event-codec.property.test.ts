/**
 * The JSON-RPC upstream codec's stream events (what an HTTP+JSON or gRPC
 * caller of a JSON-RPC remote gets, one item per event): its result's value
 * is parsed only when a stage reads it, and that must change nothing. Each
 * item equals the one read the eager way (parse the result, refuse a
 * non-object): same kind, same text, same value, same error.
 */
import fc from 'fast-check';
import t from 'tap';
import { OPERATION_LIST } from '../../src/a2a/operations.js';
import { jsonRpcUpstreamCodec, outcomeOfEnvelope } from '../../src/bindings/jsonrpc/upstream-codec.js';
import { gatewayErrorOutcome } from '../../src/bindings/error-outcome.js';
import type { A2ACall } from '../../src/core/call.js';
import type { ErrorOutcome, StreamItem } from '../../src/core/outcome.js';
import { normalizeEvent } from '../../src/stream/event-normalize.js';
import type { SseEvent } from '../../src/stream/sse-parser.js';
import { hostileTextArb, jsonRpcObjectArb, nearValidBodyArb, policyArb } from '../support/envelope-invariants.js';
import { sseEvent } from '../support/sse-events.js';

const numRuns = Number.parseInt(process.env.FUZZ_RUNS ?? '', 10) || 2000;
const UPSTREAM_ID = 1;
const RESULT_PREFIX = `{"jsonrpc":"2.0","id":${UPSTREAM_ID},"result":`;

const operation = OPERATION_LIST.find((op) => op.streaming)!;
const call: A2ACall = {
  remote: 'weather',
  operation,
  generation: '1.0',
  paramsJson: '{}',
  params: {},
  service: { a2aVersion: '1.0', forwarded: {} },
  caller: { binding: 'http+json', requestId: 'r' },
};

const dataArb = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), fc.jsonValue({ maxDepth: 4 })), fc.boolean()).map(([result, pretty]) => JSON.stringify({ jsonrpc: '2.0', id: UPSTREAM_ID, result }, null, pretty ? 2 : undefined)) },
  { weight: 2, arbitrary: jsonRpcObjectArb.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: nearValidBodyArb.map((b) => b.toString('utf8')) },
  { weight: 1, arbitrary: hostileTextArb },
);

/** The codec's event as it read it before values were parsed lazily. */
function eager(data: string, policy: Parameters<typeof jsonRpcUpstreamCodec.event>[2], index: number): StreamItem {
  const n = normalizeEvent(sseEvent(data), { callerId: UPSTREAM_ID, policy, httpStatus: 200 }, index);
  if (n.outcome !== 'ok') return { outcome: outcomeOfEnvelope(n) as ErrorOutcome, final: true };
  const json = n.json.startsWith(RESULT_PREFIX) ? n.json.slice(RESULT_PREFIX.length, -1) : n.json;
  const value = JSON.parse(json) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { outcome: gatewayErrorOutcome('INVALID_EVENT', { remote: policy.remote, httpStatus: 200, metadata: { cause: 'INVALID_RESPONSE_MESSAGE', event: index } }), final: true };
  }
  return { outcome: { kind: 'result', json, value }, final: false };
}

t.test('property: every event item equals the eagerly parsed one', async (t) => {
  let results = 0;
  fc.assert(
    fc.property(dataArb, policyArb, fc.boolean(), (data, policy, readValue) => {
      const event: SseEvent = sseEvent(data);
      const got = jsonRpcUpstreamCodec.event(call, event, policy, 200, 2);
      const want = eager(data, policy, 2);
      if (got.final !== want.final || got.outcome.kind !== want.outcome.kind) throw new Error(`differs for ${JSON.stringify(data)}`);
      if (got.outcome.kind === 'result' && want.outcome.kind === 'result') {
        results++;
        if (got.outcome.json !== want.outcome.json) throw new Error(`json differs for ${JSON.stringify(data)}`);
        // Read it or not, then compare the whole item: the lazy value reads the same the first time and after.
        if (readValue) void got.outcome.value;
        t.same(got, want);
        if (got.outcome.value !== got.outcome.value) throw new Error('the value is parsed again on each read');
      } else {
        t.same(got, want);
      }
    }),
    { numRuns },
  );
  t.ok(results > numRuns / 4, `${results} of ${numRuns} events were results`);
});
