/**
 * Properties of the pieces that turn a remote's bytes into Outcomes for the
 * binding-neutral call runner (src/core/):
 * - outcomeOfEnvelope: whatever envelope the JSON-RPC normalizer writes, the
 *   Outcome it reads back means the same in JSON-RPC, and is a bounded,
 *   sanitized google.rpc.Status with its mapped HTTP status in HTTP+JSON;
 * - the HTTP+JSON upstream codec on arbitrary status, Content-Type and bytes:
 *   never throws, always a typed Outcome within the message bound, and no
 *   byte of a non-JSON body reaches any caller.
 * Each property is a function of the implementation, so a deliberately broken
 * one is shown to fail (the "can fail" tests at the end).
 */
import t from 'tap';
import fc from 'fast-check';
import { OPERATION_LIST, type Operation } from '../../src/a2a/operations.js';
import { encodeRestError, encodeRestReply } from '../../src/bindings/http-json/caller-reply.js';
import { httpJsonUpstreamCodec } from '../../src/bindings/http-json/upstream-codec.js';
import { encodeJsonRpcOutcome } from '../../src/bindings/jsonrpc/caller-codec.js';
import { jsonRpcUpstreamCodec, outcomeOfEnvelope } from '../../src/bindings/jsonrpc/upstream-codec.js';
import { A2A_ERRORS, REASON_STATUS, statusOfCode } from '../../src/bindings/status-map.js';
import type { A2ACall } from '../../src/core/call.js';
import type { Outcome } from '../../src/core/outcome.js';
import type { UpstreamCodec } from '../../src/core/upstream-codec.js';
import { gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import { normalizeReply, type NormalizePolicy } from '../../src/envelope/normalize.js';
import { errorMemberArb, hostileTextArb, jsonRpcObjectArb, nearValidBodyArb, nonJsonBodyArb, policyArb, rawBodyArb, statusArb } from '../support/envelope-invariants.js';
import { outcomeViolations } from '../support/outcome-invariants.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

// FUZZ_RUNS=100000 npx tap test/unit/outcome-codecs.property.test.ts for a long run; FUZZ_SEED replays a failure.
const params = fuzzParams(1000);

const holds = holdsWith(params);

/** JSON with sorted keys: equal meaning whatever the member order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** The HTTP status §5.4 maps an error to: a gateway reason's fixed one, a remote error's by its code. */
function mappedHttpStatus(reason: string, code: number): number {
  return reason === 'REMOTE_ERROR' ? statusOfCode(code).http : REASON_STATUS[reason as Reason].http;
}

/** The longest message a gateway reason may carry: its catalogue text and a gateway-written detail. */
const GATEWAY_DETAIL_BYTES = 256;
function messageBound(reason: string, policy: NormalizePolicy): number {
  if (reason === 'REMOTE_ERROR') return policy.maxErrorMessageBytes;
  return Buffer.byteLength(gatewayErrors[reason as Reason].message) + 2 + GATEWAY_DETAIL_BYTES;
}

function callOf(operation: Operation): A2ACall {
  return {
    remote: 'weather',
    operation,
    generation: '1.0',
    paramsJson: '{}',
    params: {},
    service: { a2aVersion: '1.0', forwarded: {} },
    caller: { binding: 'http+json', requestId: 'r' },
  };
}

// ---------------------------------------------------------------- outcomeOfEnvelope

/** The id the JSON-RPC upstream codec puts on every request it makes (its replies must echo it). */
const UPSTREAM_ID = 1;

/** A remote's typed A2A error with its own ErrorInfo (whose metadata is carried) and other details. */
const typedA2aErrorArb = fc
  .tuple(
    fc.constantFrom(...A2A_ERRORS.entries()),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.string({ maxLength: 20 }), hostileTextArb), { minKeys: 1, maxKeys: 4 }),
    fc.oneof(fc.string({ maxLength: 30 }), hostileTextArb),
    fc.array(fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((d) => ({ ...d, '@type': 'type.example/Debug' })), { maxLength: 3 }),
  )
  .map(([[code, { reason }], metadata, message, extra]) => ({
    code,
    message,
    data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org', metadata }, ...extra],
  }));

/** JSON-RPC replies to the codec's own requests: mostly id 1, success or error, members mixed or wrong. */
const jsonRpcReplyArb: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 2, arbitrary: typedA2aErrorArb.map((error) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: UPSTREAM_ID, error }))) },
  { weight: 3, arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.boolean()).map(([result, pretty]) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: UPSTREAM_ID, result }, null, pretty ? 1 : undefined))) },
  { weight: 3, arbitrary: errorMemberArb.map((error) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: UPSTREAM_ID, error }))) },
  { weight: 2, arbitrary: jsonRpcObjectArb.map((o) => Buffer.from(JSON.stringify({ ...o, id: UPSTREAM_ID }))) },
  { weight: 1, arbitrary: nearValidBodyArb },
  { weight: 1, arbitrary: rawBodyArb },
);

type ReadBack = typeof outcomeOfEnvelope;

/** Any envelope the normalizer writes → an Outcome that re-encodes to the same meaning, and a valid Status. */
function envelopeProperty(readBack: ReadBack) {
  return fc.property(statusArb, jsonRpcReplyArb, policyArb, (status, body, policy) => {
    const normalized = normalizeReply({ status, body }, UPSTREAM_ID, policy);
    const out = readBack(normalized);
    const problems: string[] = [];
    if ((out.kind === 'result') !== (normalized.outcome === 'ok')) problems.push(`kind ${out.kind} for ${normalized.outcome}`);
    // JSON-RPC: the caller codec writes the envelope the normalizer wrote (same meaning; same bytes for a result).
    const generation = policy.caller ?? '1.0';
    const again = encodeJsonRpcOutcome(UPSTREAM_ID, out, generation);
    if (canonical(JSON.parse(again)) !== canonical(JSON.parse(normalized.json))) problems.push(`JSON-RPC re-encoding differs:\n  ${again}`);
    if (out.kind === 'result' && again !== normalized.json) problems.push('result bytes changed');
    if (out.kind === 'error') {
      if (out.reason !== normalized.outcome) problems.push(`reason ${out.reason} for ${normalized.outcome}`);
      if (Buffer.byteLength(out.message) > messageBound(out.reason, policy)) problems.push('message over the bound');
      // HTTP+JSON (the call runner always normalizes as a 1.0 caller, whose envelopes carry the A2A ErrorInfo).
      if (generation === '1.0') {
        problems.push(...outcomeViolations(out, { policy, status }));
        const rest = encodeRestError(out);
        const expected = mappedHttpStatus(out.reason, out.code);
        if (rest.status !== expected) problems.push(`HTTP ${rest.status}, mapped ${expected}`);
      }
    }
    if (problems.length > 0) throw new Error(`${problems.join('; ')}\nenvelope ${normalized.json.slice(0, 600)}`);
  });
}

t.test('property: any envelope the JSON-RPC normalizer writes reads back into an Outcome of the same meaning', async (t) => {
  holds(t, envelopeProperty(outcomeOfEnvelope));
});

t.test('property: the JSON-RPC upstream codec on any reply gives a typed Outcome that re-encodes as the normalizer wrote it', async (t) => {
  const op = OPERATION_LIST.find((o) => o.name === 'GetTask')!;
  holds(
    t,
    fc.property(statusArb, jsonRpcReplyArb, policyArb, (status, body, p) => {
      // As the call runner gives it (codecPolicyOf): plain successes kept as bytes.
      const policy = { ...p, caller: '1.0' as const, keepBytes: true };
      const out = jsonRpcUpstreamCodec.reply(callOf(op), { status, body }, policy);
      const normalized = normalizeReply({ status, body }, UPSTREAM_ID, policy);
      const result: unknown = normalized.result;
      // A result that is no message (`5`, `[]`) cannot be an HTTP+JSON body or a gRPC message: the codec refuses it.
      if (normalized.outcome === 'ok' && (typeof result !== 'object' || result === null || Array.isArray(result))) {
        if (out.kind !== 'error' || out.reason !== 'INVALID_RESPONSE_MESSAGE') throw new Error(`non-object result ${normalized.json.slice(0, 200)} gave ${JSON.stringify(out).slice(0, 200)}`);
        return;
      }
      if (encodeJsonRpcOutcome(UPSTREAM_ID, out, '1.0') !== normalized.json) throw new Error(`codec and normalizer disagree: ${normalized.json.slice(0, 400)}`);
      const problems = outcomeViolations(out, { policy, status });
      if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${normalized.json.slice(0, 400)}`);
    }),
  );
});

// ---------------------------------------------------------------- the HTTP+JSON upstream codec

const contentTypeArb: fc.Arbitrary<string | undefined> = fc.oneof(
  fc.constantFrom(
    undefined, '', 'text/event-stream', 'TEXT/Event-Stream; charset=utf-8', ' text/event-stream ', 'text/event-streams', 'text/event-stream-x',
    'application/json', 'application/a2a+json', 'application/problem+json', 'text/html; charset=utf-8', 'text/plain',
  ),
  hostileTextArb,
);

const restBodyArb: fc.Arbitrary<Buffer> = fc.oneof(
  rawBodyArb,
  nearValidBodyArb,
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? '')),
  fc.record({ error: fc.record({ code: fc.integer(), status: hostileTextArb, message: hostileTextArb, details: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }) }).map((v) => Buffer.from(JSON.stringify(v))),
);

/** What the runner asks of a codec for one reply: a unary reply, or a streaming call's (status, type) → stream or one error. */
function codecOutcome(codec: UpstreamCodec, op: Operation, status: number, contentType: string | undefined, body: Buffer, policy: NormalizePolicy): Outcome | 'stream' {
  const call = callOf(op);
  if (!op.streaming) return codec.reply(call, { status, body }, policy);
  if (codec.isEventStream(status, contentType)) return 'stream';
  return codec.streamBody(call, { status, body }, policy);
}

function codecProperty(codec: UpstreamCodec, bodies: fc.Arbitrary<{ body: Buffer; marker?: string }>) {
  return fc.property(fc.constantFrom(...OPERATION_LIST), statusArb, contentTypeArb, bodies, policyArb, (op, status, contentType, { body, marker }, p) => {
    const policy = { ...p, caller: '1.0' as const, keepBytes: true };
    const out = codecOutcome(codec, op, status, contentType, body, policy);
    if (out === 'stream') {
      const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
      if (status < 200 || status > 299 || media !== 'text/event-stream') throw new Error(`HTTP ${status} ${JSON.stringify(contentType)} taken for an event stream`);
      return;
    }
    const forbidden = marker === undefined ? [] : [marker];
    const problems = outcomeViolations(out, { policy, status, forbidden });
    // A streaming call answered with a whole body: a result only for one valid StreamResponse on a 2xx (the remote's
    // single answer, README "HTTP+JSON and transcoding"); outcomeViolations checks it is a JSON object and 2xx.
    if (op.streaming && out.kind === 'result' && !(body.toString('utf8').includes(out.json) && out.json.trim().startsWith('{'))) problems.push('a single result that is not the remote\'s object');
    if (out.kind === 'error') {
      if (Buffer.byteLength(out.message) > messageBound(out.reason, policy)) problems.push(`message over the bound (${Buffer.byteLength(out.message)} bytes)`);
      if (marker !== undefined && out.reason === 'REMOTE_ERROR') problems.push('a non-JSON body read as a remote error');
    } else if (marker !== undefined) problems.push('a non-JSON body read as a result');
    // Not one byte of it in what any caller receives.
    const sent = encodeRestReply(op, out).body ?? '';
    for (const m of forbidden) if (sent.includes(m) || encodeJsonRpcOutcome(1, out, '1.0').includes(m)) problems.push('marker in an encoded reply');
    if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${op.name} HTTP ${status} ${JSON.stringify(contentType)}\n${JSON.stringify(out).slice(0, 600)}`);
  });
}

t.test('property: the HTTP+JSON upstream codec, any status, Content-Type and bytes: a typed, bounded Outcome', async (t) => {
  holds(t, codecProperty(httpJsonUpstreamCodec, restBodyArb.map((body) => ({ body }))));
});

t.test('property: the HTTP+JSON upstream codec passes no byte of a non-JSON body, whatever its status and type', async (t) => {
  holds(t, codecProperty(httpJsonUpstreamCodec, nonJsonBodyArb));
});

// ---------------------------------------------------------------- the properties can fail

t.test('the properties can fail: broken implementations are caught', async (t) => {
  const check = <Ts extends [unknown, ...unknown[]]>(property: fc.IProperty<Ts>) => fc.check(property, { numRuns: 300, seed: 7 });
  // A read-back that drops the remote's kept details (their meaning is lost for the caller).
  const dropsDetails: ReadBack = (n) => {
    const out = outcomeOfEnvelope(n);
    return out.kind === 'error' ? { ...out, details: [] } : out;
  };
  t.ok(check(envelopeProperty(dropsDetails)).failed, 'outcomeOfEnvelope without details');
  // A read-back that forgets which reason the gateway gave.
  const loseReason: ReadBack = (n) => {
    const out = outcomeOfEnvelope(n);
    return out.kind === 'error' ? { ...out, reason: 'REMOTE_ERROR' } : out;
  };
  t.ok(check(envelopeProperty(loseReason)).failed, 'outcomeOfEnvelope with the wrong reason');
  // A read-back that keeps the A2A reason but not the remote's A2A metadata.
  const dropsA2aMetadata: ReadBack = (n) => {
    const out = outcomeOfEnvelope(n);
    return out.kind === 'error' && out.a2a ? { ...out, a2a: { reason: out.a2a.reason, metadata: {} } } : out;
  };
  t.ok(check(envelopeProperty(dropsA2aMetadata)).failed, 'outcomeOfEnvelope without the A2A metadata');
  // A codec that lets a stream refusal's text through as the message.
  const leaky: UpstreamCodec = {
    ...httpJsonUpstreamCodec,
    reply: (call, reply, policy) => {
      const out = httpJsonUpstreamCodec.reply(call, reply, policy);
      return out.kind === 'error' ? { ...out, message: reply.body.toString('latin1') } : out;
    },
  };
  t.ok(check(codecProperty(leaky, nonJsonBodyArb)).failed, 'a codec that shows the body');
  // A codec that takes any 2xx for an event stream.
  const eager: UpstreamCodec = { ...httpJsonUpstreamCodec, isEventStream: (status) => status >= 200 && status <= 299 };
  t.ok(check(codecProperty(eager, restBodyArb.map((body) => ({ body })))).failed, 'a codec that reads any 2xx as a stream');
});
