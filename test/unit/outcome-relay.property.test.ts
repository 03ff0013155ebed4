/**
 * Properties of what the binding-neutral call runner does after a codec:
 * - redactOutcome: a remote's credential, in any form the redactor covers and
 *   anywhere in a result or an error, reaches no caller of any binding
 *   (JSON-RPC 1.0 and 0.3, HTTP+JSON, both stream shapes, gRPC);
 * - the item relay (ItemRelayCore) for every pair of upstream and caller
 *   binding, on arbitrary SSE bytes split at arbitrary points: each event it
 *   writes is a valid one of the caller's binding or the one final typed
 *   error, and the output is the same however the bytes were chunked.
 * Each property is a function of the implementation; the "can fail" tests
 * run it against a broken one.
 */
import t from 'tap';
import fc from 'fast-check';
import sjson from 'secure-json-parse';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { encodeRestReply, encodeRestStreamItem } from '../../src/bindings/http-json/caller-reply.js';
import { httpJsonUpstreamCodec } from '../../src/bindings/http-json/upstream-codec.js';
import { encodeJsonRpcOutcome, encodeJsonRpcStreamItem } from '../../src/bindings/jsonrpc/caller-codec.js';
import { jsonRpcUpstreamCodec } from '../../src/bindings/jsonrpc/upstream-codec.js';
import { gatewayErrorOutcome } from '../../src/bindings/error-outcome.js';
import { encodeError as encodeGrpcError, encodeResult as encodeGrpcResult } from '../../src/bindings/grpc/caller-codec.js';
import { binaryToJson } from '../../src/bindings/grpc/proto-json.js';
import { builtinLimits } from '../../src/config/defaults.js';
import type { A2ACall } from '../../src/core/call.js';
import { ItemRelayCore } from '../../src/core/item-relay-core.js';
import type { ErrorOutcome, Outcome, StreamItem } from '../../src/core/outcome.js';
import { redactOutcome } from '../../src/core/redact-outcome.js';
import type { UpstreamCodec } from '../../src/core/upstream-codec.js';
import { Redactor } from '../../src/envelope/redact.js';
import type { NormalizePolicy } from '../../src/envelope/normalize.js';
import type { OutputEvent } from '../../src/stream/event-core.js';
import { cutAt, envelopeViolations, errorMemberArb, hostileTextArb, nearValidBodyArb } from '../support/envelope-invariants.js';
import { outcomeViolations } from '../support/outcome-invariants.js';
import { leaksIn, reveals, stringsOf } from '../support/secret-oracle.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

const params = fuzzParams(500);

const holds = holdsWith(params);

const REMOTE = 'weather';

// ---------------------------------------------------------------- redaction, every binding

/** Credentials as real ones look ('x' stays free for padding). */
const secretArb = fc.stringMatching(/^[A-Za-wyz0-9._~+/=-]{8,40}$/);
/** What a reader does not see, sprinkled into the credential. */
const IGNORABLES = ['\u200b', '\u0000', '\n', '\t', ' ', '\u00ad', '\ufeff', '\u202e', '\u001b[31m'];
const formArb = fc.record({
  kind: fc.constantFrom('raw', 'raw', 'percent', 'base64', 'base64url'),
  prefix: fc.constantFrom('', 'user:'),
  inserts: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...IGNORABLES)), { maxLength: 3 }),
});
type Form = typeof formArb extends fc.Arbitrary<infer F> ? F : never;

function render(secret: string, form: Form): string {
  let text = secret;
  if (form.kind === 'percent') text = encodeURIComponent(secret);
  if (form.kind === 'base64') text = Buffer.from(form.prefix + secret).toString('base64');
  if (form.kind === 'base64url') text = Buffer.from(form.prefix + secret).toString('base64url');
  const units = [...text];
  for (const [at, what] of [...form.inserts].sort((a, b) => b[0] - a[0])) units.splice(at % (units.length + 1), 0, what);
  return units.join('');
}

/** Where in an Outcome the credential is planted. */
const PLACES = ['result-string', 'result-member-name', 'message', 'metadata', 'a2a-metadata', 'detail'] as const;
type Place = (typeof PLACES)[number];

function planted(place: Place, text: string, filler: string): Outcome {
  if (place === 'result-string' || place === 'result-member-name') {
    const metadata = place === 'result-string' ? { note: `${filler}${text}`, n: 1 } : { [`${filler}${text}`]: 1 };
    const value = { task: { id: 't1', contextId: 'c1', status: { state: 'TASK_STATE_WORKING' }, metadata } };
    return { kind: 'result', json: JSON.stringify(value), value };
  }
  return {
    kind: 'error',
    code: -32001,
    message: place === 'message' ? `${filler}${text}` : 'task not found',
    reason: 'REMOTE_ERROR',
    metadata: { remote: REMOTE, httpStatus: '404', ...(place === 'metadata' ? { echo: text } : {}) },
    a2a: { reason: 'TASK_NOT_FOUND', metadata: place === 'a2a-metadata' ? { taskId: text } : {} },
    details: place === 'detail' ? [{ '@type': 'type.example/Debug', detail: `${filler}${text}`, list: [text] }] : [],
  };
}

/** Every printable run of a binary message (protobuf strings are UTF-8 runs between framing bytes). */
function runsOf(bin: Uint8Array): string[] {
  return Buffer.from(bin).toString('utf8').split(/[\p{Cc}\ufffd]+/u);
}

/** Everything each binding's caller would receive for `out`, as texts to look into. */
function encodedEverywhere(out: Outcome): { where: string; leaks: (secret: string) => boolean }[] {
  const json = (text: string, headers: Record<string, string> = {}) => (secret: string) => leaksIn(secret, { text, headers }).length > 0;
  const item: StreamItem = out.kind === 'result' ? { outcome: out, final: false } : { outcome: out, final: true };
  const rest = encodeRestReply(OPERATIONS.SendMessage, out);
  const encodings = [
    { where: 'JSON-RPC 1.0', leaks: json(encodeJsonRpcOutcome(7, out, '1.0')) },
    { where: 'JSON-RPC 0.3', leaks: json(encodeJsonRpcOutcome(7, out, '0.3')) },
    { where: 'JSON-RPC stream', leaks: json(encodeJsonRpcStreamItem(7, item, '1.0')) },
    { where: 'HTTP+JSON', leaks: json(rest.body ?? '', { ...rest.headers }) },
    { where: 'HTTP+JSON stream', leaks: json(encodeRestStreamItem(item)) },
  ];
  const grpc = out.kind === 'result' ? encodeGrpcResult(OPERATIONS.SendMessage, out, REMOTE) : out;
  if (Buffer.isBuffer(grpc)) {
    const message = binaryToJson(OPERATIONS.SendMessage.responseType, grpc).value;
    encodings.push({ where: 'gRPC message', leaks: (secret) => stringsOf(message).some((s) => reveals(s, secret)) || runsOf(grpc).some((s) => reveals(s, secret)) });
  } else {
    const status = encodeGrpcError(grpc as ErrorOutcome);
    const bin = status.metadata?.get('grpc-status-details-bin')[0];
    encodings.push({
      where: 'gRPC status',
      leaks: (secret) => reveals(status.details, secret) || (bin instanceof Uint8Array && runsOf(bin).some((s) => reveals(s, secret))),
    });
  }
  return encodings;
}

type Redact = typeof redactOutcome;

function redactionProperty(redact: Redact) {
  return fc.property(secretArb, formArb, fc.constantFrom(...PLACES), fc.constantFrom('', 'x', 'see: '), (secret, form, place, filler) => {
    const text = render(secret, form);
    fc.pre(reveals(text, secret));
    const outcome = planted(place, text, filler);
    const refused = (where: string) => gatewayErrorOutcome('CREDENTIAL_ECHOED', { remote: REMOTE }, where);
    const { outcome: out, redactions } = redact(outcome, new Redactor([secret]), refused);
    if (redactions === 0) throw new Error(`nothing redacted (${place})`);
    if (place === 'result-member-name' && (out.kind !== 'error' || out.reason !== 'CREDENTIAL_ECHOED')) throw new Error('a credential in a member name was not refused');
    for (const { where, leaks } of encodedEverywhere(out)) if (leaks(secret)) throw new Error(`${place}: leaked to a ${where} caller`);
  });
}

t.test('property: a credential anywhere in an Outcome reaches no caller of any binding once redacted', async (t) => {
  holds(t, redactionProperty(redactOutcome));
});

// ---------------------------------------------------------------- the item relay, every pair

const EOLS = ['\n', '\r\n', '\r'] as const;
const streamResponseArb = fc.oneof(
  fc.record({ task: fc.record({ id: fc.string({ maxLength: 8 }), contextId: fc.string({ maxLength: 8 }), status: fc.record({ state: fc.constant('TASK_STATE_WORKING') }) }) }),
  fc.record({ statusUpdate: fc.record({ taskId: fc.string({ maxLength: 8 }), status: fc.jsonValue({ maxDepth: 2 }) }) }),
  fc.record({ message: fc.record({ messageId: fc.string({ maxLength: 8 }), role: fc.constant('ROLE_AGENT'), parts: fc.array(fc.record({ text: hostileTextArb }), { maxLength: 2 }) }) }),
);
/** `data` payloads a remote of each binding streams: mostly valid, some near-valid, some garbage. */
const payloadArbs: Record<'rest' | 'jsonrpc', fc.Arbitrary<string>> = {
  rest: fc.oneof(
    { weight: 8, arbitrary: fc.tuple(streamResponseArb, fc.boolean()).map(([v, pretty]) => JSON.stringify(v, null, pretty ? 2 : undefined)) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? '') },
    { weight: 1, arbitrary: nearValidBodyArb.map((b) => b.toString('utf8')) },
    { weight: 1, arbitrary: hostileTextArb },
  ),
  jsonrpc: fc.oneof(
    { weight: 8, arbitrary: fc.tuple(streamResponseArb, fc.boolean()).map(([result, pretty]) => JSON.stringify({ jsonrpc: '2.0', id: 1, result }, null, pretty ? 2 : undefined)) },
    { weight: 2, arbitrary: errorMemberArb.map((error) => JSON.stringify({ jsonrpc: '2.0', id: 1, error })) },
    { weight: 1, arbitrary: nearValidBodyArb.map((b) => b.toString('utf8')) },
    { weight: 1, arbitrary: hostileTextArb },
  ),
};
const statusEventArb = fc.record({ error: fc.record({ code: fc.constantFrom(404, 500, 7), status: hostileTextArb, message: hostileTextArb }, { requiredKeys: [] }) }).map((v) => JSON.stringify(v));

function streamArb(payloads: fc.Arbitrary<string>): fc.Arbitrary<Buffer> {
  const block: fc.Arbitrary<string[]> = fc.oneof(
    { weight: 6, arbitrary: payloads.map((p) => p.split(/\r\n|\r|\n/).map((l) => `data: ${l}`)) },
    { weight: 1, arbitrary: fc.oneof(statusEventArb, payloads).map((p) => ['event: error', ...p.split(/\r\n|\r|\n/).map((l) => `data:${l}`)]) },
    { weight: 1, arbitrary: fc.constantFrom<string[]>([': keep-alive'], [':'], ['id: 7', 'retry: 100'], ['event: status']) },
  );
  return fc
    .record({ blocks: fc.array(fc.tuple(block, fc.constantFrom(...EOLS)), { maxLength: 6 }), bom: fc.boolean(), tail: fc.constantFrom('', 'data: {"task"', 'data: x\n') })
    .map(({ blocks, bom, tail }) => Buffer.from((bom ? '\ufeff' : '') + blocks.map(([lines, eol]) => lines.map((l) => l + eol).join('') + eol).join('') + tail, 'utf8'));
}

const loose = <T>(tight: fc.Arbitrary<T>, free: T) => fc.oneof(tight, fc.constant(free));
const limitsArb = fc.record({
  maxEventBytes: loose(fc.integer({ min: 64, max: 4096 }), 1 << 20),
  maxStreamBytes: loose(fc.integer({ min: 64, max: 20_000 }), 1 << 24),
  maxStreamEvents: loose(fc.integer({ min: 1, max: 8 }), 1000),
  maxErrorMessageBytes: fc.integer({ min: 16, max: 300 }),
  maxJsonDepth: fc.integer({ min: 2, max: 32 }),
});

const CALLER_ID = 'c-1';
type Writer = 'rest' | 'jsonrpc';
const writers: Record<Writer, (item: StreamItem) => string> = {
  rest: encodeRestStreamItem,
  jsonrpc: (item) => encodeJsonRpcStreamItem(CALLER_ID, item, '1.0'),
};

function drive(core: () => ItemRelayCore, chunks: Buffer[]): OutputEvent[] {
  const c = core();
  const out = chunks.flatMap((chunk) => c.push(chunk));
  out.push(...c.end());
  if (!c.finished) throw new Error('core not finished after end()');
  return out;
}

/** What a caller of `writer`'s binding must be able to read from one event. */
function eventViolations(writer: Writer, event: OutputEvent, item: StreamItem, policy: NormalizePolicy): string[] {
  const problems = outcomeViolations(item.outcome, { policy });
  if (writer === 'jsonrpc') {
    if (!/^data: [^\r\n]*\n\n$/.test(event.text)) return [...problems, `not one JSON-RPC SSE event: ${JSON.stringify(event.text)}`];
    return [...problems, ...envelopeViolations({ json: event.text.slice(6, -2), outcome: event.outcome }, { callerId: CALLER_ID, status: 200, policy })];
  }
  const match = item.final ? /^event: error\ndata: ([^\r\n]*)\n\n$/.exec(event.text) : /^data: ([^\r\n]*)\n\n$/.exec(event.text);
  if (!match) return [...problems, `not one HTTP+JSON SSE event: ${JSON.stringify(event.text)}`];
  let data: unknown;
  try {
    data = sjson.parse(match[1]!, null, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return [...problems, 'event data is not safe JSON'];
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) problems.push('event data is not a JSON object');
  else if (item.final && Object.keys(data).join() !== 'error') problems.push('final event is not a Status body');
  return problems;
}

function relayProperty(reader: 'rest' | 'jsonrpc', writer: Writer, core: typeof ItemRelayCore = ItemRelayCore) {
  const codec: UpstreamCodec = reader === 'rest' ? httpJsonUpstreamCodec : jsonRpcUpstreamCodec;
  const call: A2ACall = {
    remote: REMOTE,
    operation: OPERATIONS.SendStreamingMessage,
    generation: '1.0',
    paramsJson: '{}',
    params: {},
    service: { a2aVersion: '1.0', forwarded: {} },
    caller: { binding: writer === 'rest' ? 'http+json' : 'jsonrpc', requestId: 'r' },
  };
  return fc.property(streamArb(payloadArbs[reader]), fc.array(fc.nat(), { maxLength: 30 }), limitsArb, fc.boolean(), (stream, cuts, limits, keep) => {
    const remote = { name: REMOTE, keepRemoteErrorData: keep, limits: { ...builtinLimits, ...limits } };
    const policy: NormalizePolicy = { remote: REMOTE, maxErrorMessageBytes: limits.maxErrorMessageBytes, maxJsonDepth: limits.maxJsonDepth, keepRemoteErrorData: keep, caller: '1.0' };
    const items: StreamItem[] = [];
    const make = () =>
      new core(
        { callerId: null, remote, httpStatus: 200 },
        {
          read: (event, index) => codec.event(call, event, policy, 200, index),
          write: (item) => {
            items.push(item);
            return writers[writer](item);
          },
          stopError: (reason, detail) => gatewayErrorOutcome(reason, { remote: REMOTE, httpStatus: 200 }, detail),
        },
      );
    const whole = drive(make, [stream]);
    const wholeItems = items.splice(0);
    const texts = (events: OutputEvent[]) => JSON.stringify(events.map((e) => e.text));
    if (texts(drive(make, cutAt(stream, cuts))) !== texts(whole)) throw new Error('chunking changed the output');
    if (stream.length < 3000 && texts(drive(make, [...stream].map((b) => Buffer.from([b])))) !== texts(whole)) throw new Error('byte-wise chunking changed the output');
    whole.forEach((event, i) => {
      const item = wholeItems[i]!;
      const last = i === whole.length - 1;
      if (event.final !== item.final || item.final !== (item.outcome.kind === 'error')) throw new Error('final is not "is the error"');
      if (event.final && !last) throw new Error('an error event before the end');
      const problems = eventViolations(writer, event, item, policy);
      if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${event.text.slice(0, 500)}`);
    });
  });
}

for (const reader of ['rest', 'jsonrpc'] as const) {
  for (const writer of ['rest', 'jsonrpc'] as const) {
    t.test(`property: ${reader} remote → ${writer} caller stream, any bytes, any chunking: valid events, at most one final typed error`, async (t) => {
      holds(t, relayProperty(reader, writer));
    });
  }
}

// ---------------------------------------------------------------- the properties can fail

t.test('the properties can fail: broken implementations are caught', async (t) => {
  const check = <Ts extends [unknown, ...unknown[]]>(property: fc.IProperty<Ts>) => fc.check(property, { numRuns: 200, seed: 3 });
  // Redaction that leaves the error's metadata as the remote sent it.
  const skipsMetadata: Redact = (outcome, redactor, refused) => {
    const r = redactOutcome(outcome, redactor, refused);
    return outcome.kind === 'error' && r.outcome.kind === 'error' ? { ...r, outcome: { ...r.outcome, metadata: outcome.metadata } } : r;
  };
  t.ok(check(redactionProperty(skipsMetadata)).failed, 'redaction that skips metadata');
  // A relay whose events are written with the line breaks of a pretty-printed payload.
  class Unflattened extends ItemRelayCore {
    constructor(...args: ConstructorParameters<typeof ItemRelayCore>) {
      const [opts, items] = args;
      super(opts, { ...items, write: (item) => (item.final ? items.write(item) : `data: ${item.outcome.json}\n\n`) });
    }
  }
  t.ok(check(relayProperty('rest', 'rest', Unflattened)).failed, 'a relay that writes multi-line data');
  // A relay that emits more after its final error (stops are ignored; the end is not).
  class KeepsGoing extends ItemRelayCore {
    override end(): OutputEvent[] {
      const out = super.end();
      return out.length > 0 ? [...out, { text: 'data: {}\n\n', json: '{}', outcome: 'ok', final: false }] : out;
    }
  }
  t.ok(check(relayProperty('jsonrpc', 'rest', KeepsGoing)).failed, 'a relay that writes after its final error');
});
