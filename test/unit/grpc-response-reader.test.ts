import t from 'tap';
import fc from 'fast-check';
import { OPERATIONS, type Operation } from '../../src/a2a/operations.js';
import type { ErrorOutcome, Outcome } from '../../src/core/outcome.js';
import { gatewayErrors, standardMessages } from '../../src/envelope/codes.js';
import { encodeMessage, GrpcMessageDecoder } from '../../src/bindings/grpc/framing.js';
import { jsonToBinary } from '../../src/bindings/grpc/proto-json.js';
import { GrpcResponseReader, type Headers, type ReaderContext, type StreamClose } from '../../src/bindings/grpc/response-reader.js';
import { encodeStatusDetails } from '../../src/bindings/grpc/status-details.js';
import { create, toBinary } from '@bufbuild/protobuf';
import { anyPack } from '@bufbuild/protobuf/wkt';
import { ErrorInfoSchema } from '../../src/bindings/grpc/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../../src/bindings/grpc/gen/google/rpc/status_pb.js';
import { fuzzParams } from '../support/fuzz.js';

const params = fuzzParams(1000);

const LIMITS = { maxResponseBytes: 1000, maxEventBytes: 200, maxStreamBytes: 1000, maxStreamEvents: 5, maxErrorMessageBytes: 64 };
const ctx = (operation: Operation, extra: Partial<ReaderContext> = {}): ReaderContext => ({ remote: 'r', operation, limits: LIMITS, keepRemoteErrorData: false, ...extra });
const OK_HEADERS: Headers = { ':status': 200, 'content-type': 'application/grpc' };
const OK_TRAILERS: Headers = { 'grpc-status': '0' };
const task = (id: string) => encodeMessage(jsonToBinary('Task', { id, status: { state: 'TASK_STATE_WORKING' } }));
const event = (id: string) => encodeMessage(jsonToBinary('StreamResponse', { task: { id } }));

interface Script {
  headers?: Headers;
  chunks?: Buffer[];
  trailers?: Headers;
  close?: StreamClose;
}

/** Plays one response through a reader the way client.ts does; returns every event and the end. */
function play(operation: Operation, script: Script, extra: Partial<ReaderContext> = {}): { events: string[]; end: Outcome | undefined } {
  const reader = new GrpcResponseReader(ctx(operation, extra));
  const events: string[] = [];
  if (script.headers) {
    const early = reader.onHeaders(script.headers);
    if (early) return { events, end: early };
  }
  for (const chunk of script.chunks ?? []) {
    const step = reader.onData(chunk);
    events.push(...step.events.map((e) => e.json));
    if (step.error) return { events, end: step.error };
  }
  if (script.trailers) reader.onTrailers(script.trailers);
  return { events, end: reader.finish(script.close ?? {}) };
}

const reasonOf = (o: Outcome | undefined) => (o?.kind === 'error' ? o.reason : o?.kind);

t.test('unary: one message and status OK is the result, as canonical ProtoJSON', async (t) => {
  const { end } = play(OPERATIONS.GetTask, { headers: OK_HEADERS, chunks: [task('t1')], trailers: OK_TRAILERS });
  t.same(end, { kind: 'result', json: '{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}', value: { id: 't1', status: { state: 'TASK_STATE_WORKING' } } });
});

t.test('unary failures, each with its own reason and fixed message', async (t) => {
  const bytes = task('t1');
  const cases: [string, Script, string][] = [
    ['HTTP 503 without gRPC', { headers: { ':status': 503, 'content-type': 'text/html' } }, 'UPSTREAM_HTTP_ERROR'],
    ['HTML with 200', { headers: { ':status': 200, 'content-type': 'text/html' } }, 'WRONG_CONTENT_TYPE'],
    ['grpc+json content-type', { headers: { ':status': 200, 'content-type': 'application/grpc+json' } }, 'WRONG_CONTENT_TYPE'],
    ['no content-type', { headers: { ':status': 200 } }, 'WRONG_CONTENT_TYPE'],
    ['status OK, no message', { headers: OK_HEADERS, trailers: OK_TRAILERS }, 'EMPTY_RESPONSE'],
    ['two messages', { headers: OK_HEADERS, chunks: [bytes, bytes], trailers: OK_TRAILERS }, 'INVALID_RESPONSE_MESSAGE'],
    ['undecodable message', { headers: OK_HEADERS, chunks: [encodeMessage(Buffer.from([0x0a, 0x09, 0x61]))], trailers: OK_TRAILERS }, 'INVALID_RESPONSE_MESSAGE'],
    ['compressed flag', { headers: OK_HEADERS, chunks: [Buffer.concat([Buffer.from([1]), bytes.subarray(1)])] }, 'UNSUPPORTED_ENCODING'],
    ['flag 7', { headers: OK_HEADERS, chunks: [Buffer.concat([Buffer.from([7]), bytes.subarray(1)])] }, 'UPSTREAM_PROTOCOL_ERROR'],
    ['oversize length prefix', { headers: OK_HEADERS, chunks: [Buffer.from([0, 0xff, 0xff, 0xff, 0xff])] }, 'RESPONSE_TOO_LARGE'],
    ['no trailers', { headers: OK_HEADERS, chunks: [bytes] }, 'TRUNCATED_RESPONSE'],
    ['half a message, then status OK', { headers: OK_HEADERS, chunks: [bytes.subarray(0, 7)], trailers: OK_TRAILERS }, 'TRUNCATED_RESPONSE'],
    ['grpc-status not a number', { headers: OK_HEADERS, chunks: [bytes], trailers: { 'grpc-status': 'zero' } }, 'INVALID_STATUS'],
    ['trailers without grpc-status', { headers: OK_HEADERS, chunks: [bytes], trailers: { 'x-other': '1' } }, 'INVALID_STATUS'],
    ['RST_STREAM mid-call', { headers: OK_HEADERS, chunks: [bytes.subarray(0, 3)], close: { rstCode: 2 } }, 'UPSTREAM_STREAM_RESET'],
    ['GOAWAY mid-call', { headers: OK_HEADERS, close: { goaway: true, rstCode: 2 } }, 'UPSTREAM_GOAWAY'],
    ['connection refused before headers', { close: { transport: 'UPSTREAM_REFUSED' } }, 'UPSTREAM_REFUSED'],
    ['data after the status', { headers: { ...OK_HEADERS, 'grpc-status': '0' }, chunks: [bytes] }, 'UPSTREAM_PROTOCOL_ERROR'],
  ];
  for (const [name, script, reason] of cases) {
    const { end } = play(OPERATIONS.GetTask, script);
    t.equal(reasonOf(end), reason, name);
    const error = end as ErrorOutcome;
    t.ok(error.message.startsWith(gatewayErrors[reason as keyof typeof gatewayErrors].message), `${name}: catalogue text`);
    t.equal(error.code, gatewayErrors[reason as keyof typeof gatewayErrors].code);
    t.equal(error.metadata.remote, 'r');
  }
});

t.test('the unary size cap: a message of exactly maxResponseBytes passes, one byte more does not', async (t) => {
  const body = (n: number) => encodeMessage(jsonToBinary('Task', { id: 'x'.repeat(n) }));
  // Task{id: string} = tag + length varint (2 bytes for n >= 128) + n
  const just = body(LIMITS.maxResponseBytes - 3);
  t.equal(just.length - 5, LIMITS.maxResponseBytes);
  t.equal(reasonOf(play(OPERATIONS.GetTask, { headers: OK_HEADERS, chunks: [just], trailers: OK_TRAILERS }).end), 'result');
  t.equal(reasonOf(play(OPERATIONS.GetTask, { headers: OK_HEADERS, chunks: [body(LIMITS.maxResponseBytes - 2)], trailers: OK_TRAILERS }).end), 'RESPONSE_TOO_LARGE');
});

t.test('remote statuses: code kept, message sanitized and bounded, details reduced to the A2A ErrorInfo', async (t) => {
  const details = (code: number, infos: { reason: string; domain: string; metadata?: Record<string, string> }[]) =>
    Buffer.from(
      toBinary(StatusSchema, create(StatusSchema, { code, message: 'x', details: infos.map((i) => anyPack(ErrorInfoSchema, create(ErrorInfoSchema, i))) })),
    ).toString('base64');
  const trailersOnly = (extra: Headers): Headers => ({ ...OK_HEADERS, ...extra });

  const notFound = play(OPERATIONS.GetTask, {
    headers: trailersOnly({
      'grpc-status': '5',
      'grpc-message': 'Task%20t9%20not%20found%0A%E2%80%AEevil',
      'grpc-status-details-bin': details(5, [
        { reason: 'SPOOFED', domain: 'a2a-egress' },
        { reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't9', 'bad key!': 'dropped', note: `a\u0000b${'z'.repeat(200)}` } },
      ]),
    }),
  }).end as ErrorOutcome;
  t.equal(notFound.reason, 'REMOTE_ERROR');
  t.equal(notFound.code, -32001);
  t.same(notFound.remoteStatus, { grpc: 5 });
  t.equal(notFound.message, 'Task t9 not found evil', 'percent-decoded, controls and bidi overrides removed');
  t.equal(notFound.a2a?.reason, 'TASK_NOT_FOUND');
  t.same(Object.keys(notFound.a2a?.metadata ?? {}), ['taskId', 'note']);
  t.ok(Buffer.byteLength(notFound.a2a!.metadata.note!) <= LIMITS.maxErrorMessageBytes);
  t.same(notFound.details, [], 'nothing else kept without keepRemoteErrorData');

  const plain = play(OPERATIONS.GetTask, { headers: OK_HEADERS, trailers: { 'grpc-status': '14', 'grpc-message': 'x'.repeat(500) } }).end as ErrorOutcome;
  t.equal(plain.code, -32603, 'UNAVAILABLE has no A2A meaning');
  t.same(plain.remoteStatus, { grpc: 14 });
  t.equal(Buffer.byteLength(plain.message), LIMITS.maxErrorMessageBytes, 'message bounded');
  t.equal(plain.a2a, undefined);

  const bare404 = play(OPERATIONS.GetTask, { headers: OK_HEADERS, trailers: { 'grpc-status': '5' } }).end as ErrorOutcome;
  t.equal(bare404.code, -32001);
  t.equal(bare404.message, standardMessages[-32001], 'empty message → the standard text');
  t.equal(bare404.a2a?.reason, 'TASK_NOT_FOUND', 'A2A ErrorInfo synthesized from the code');

  const mismatch = play(OPERATIONS.GetTask, {
    headers: trailersOnly({ 'grpc-status': '9', 'grpc-status-details-bin': details(5, [{ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }]) }),
  }).end as ErrorOutcome;
  t.equal(mismatch.code, -32603, 'details whose code disagrees with the status are ignored');

  const garbage = play(OPERATIONS.GetTask, { headers: trailersOnly({ 'grpc-status': '13', 'grpc-status-details-bin': '////' }) }).end as ErrorOutcome;
  t.equal(garbage.reason, 'REMOTE_ERROR', 'undecodable details do not fail the call');

  const high = play(OPERATIONS.GetTask, { headers: trailersOnly({ 'grpc-status': '99' }) }).end as ErrorOutcome;
  t.same(high.remoteStatus, { grpc: 2 }, 'codes past 16 are UNKNOWN');
});

t.test('keepRemoteErrorData keeps bounded google.rpc details, never ErrorInfo of other domains', async (t) => {
  const error = {
    kind: 'error' as const,
    code: -32602,
    message: 'bad',
    reason: 'REMOTE_ERROR' as const,
    metadata: {},
    details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.parts', description: 'At least one part\u202e is required' }] }],
  };
  const bin = encodeStatusDetails(error, 3).toString('base64');
  const kept = play(OPERATIONS.SendMessage, { headers: { ...OK_HEADERS, 'grpc-status': '3', 'grpc-status-details-bin': bin } }, { keepRemoteErrorData: true }).end as ErrorOutcome;
  t.same(kept.details, [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.parts', description: 'At least one part is required' }] }]);
  t.equal(kept.code, -32602);
});

t.test('streams: events in order, clean end, and every bound just under and just over', async (t) => {
  const ok = play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [Buffer.concat([event('a'), event('b')]), event('c')], trailers: OK_TRAILERS });
  t.same(ok.events, ['{"task":{"id":"a"}}', '{"task":{"id":"b"}}', '{"task":{"id":"c"}}']);
  t.equal(ok.end, undefined, 'clean end');

  const five = Array.from({ length: LIMITS.maxStreamEvents }, (_, i) => event(String(i)));
  t.equal(play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: five, trailers: OK_TRAILERS }).end, undefined, 'maxStreamEvents events pass');
  const six = play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [...five, event('x')], trailers: OK_TRAILERS });
  t.equal(reasonOf(six.end), 'STREAM_TOO_MANY_EVENTS');
  t.equal(six.events.length, 5);

  const sized = (n: number) => encodeMessage(jsonToBinary('StreamResponse', { task: { id: 'x'.repeat(n) } }));
  // StreamResponse{task: Task{id}} = 1 + len(varint) + 1 + len(varint) + n
  const exact = sized(LIMITS.maxEventBytes - 6);
  t.equal(exact.length - 5, LIMITS.maxEventBytes);
  t.equal(play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [exact], trailers: OK_TRAILERS }).end, undefined, 'an event of maxEventBytes passes');
  const over = play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [sized(LIMITS.maxEventBytes - 5)], trailers: OK_TRAILERS });
  t.equal(reasonOf(over.end), 'EVENT_TOO_LARGE');
  t.equal((over.end as ErrorOutcome).metadata.event, '0');

  // maxStreamBytes 1000: five events of 200 bytes (+5 prefix each) = 1025 > 1000; four = 820.
  const four = Array.from({ length: 4 }, () => exact);
  t.equal(play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: four, trailers: OK_TRAILERS }).end, undefined);
  t.equal(reasonOf(play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [...four, exact], trailers: OK_TRAILERS }).end), 'STREAM_TOO_LARGE');

  const broken = play(OPERATIONS.SubscribeToTask, { headers: OK_HEADERS, chunks: [event('a'), encodeMessage(Buffer.from([0x0a, 0x40, 1]))], trailers: OK_TRAILERS });
  t.same(broken.events, ['{"task":{"id":"a"}}'], 'events before the broken one pass');
  t.equal(reasonOf(broken.end), 'INVALID_EVENT');
  t.equal((broken.end as ErrorOutcome).metadata.event, '1');

  t.equal(reasonOf(play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [event('a').subarray(0, 4)], trailers: OK_TRAILERS }).end), 'STREAM_TRUNCATED');
  t.equal(reasonOf(play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [event('a')] }).end), 'STREAM_TRUNCATED', 'no status at all');
  const remote = play(OPERATIONS.SendStreamingMessage, { headers: OK_HEADERS, chunks: [event('a')], trailers: { 'grpc-status': '9', 'grpc-message': 'nope' } });
  t.equal(reasonOf(remote.end), 'REMOTE_ERROR', 'a status error after events is the final error');
});

t.test('framing decoder: any split of a valid body gives the same messages', async (t) => {
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 6 }), fc.array(fc.nat(60), { maxLength: 8 }), (messages, cuts) => {
        const body = Buffer.concat(messages.map((m) => encodeMessage(m)));
        const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
        const decoder = new GrpcMessageDecoder(40);
        const out: Buffer[] = [];
        let last = 0;
        for (const p of [...points, body.length]) {
          const step = decoder.push(body.subarray(last, p));
          if (step.problem) throw new Error(step.problem);
          out.push(...step.messages);
          last = p;
        }
        if (decoder.buffered !== 0) throw new Error('bytes left');
        if (out.length !== messages.length || out.some((m, i) => !m.equals(Buffer.from(messages[i]!)))) throw new Error('messages differ');
      }),
      params,
    ),
  );
});

/** What a caller may ever see: a result, or an error whose text is the catalogue's (or a sanitized bounded remote text). */
function checkOutcome(o: Outcome | undefined, streaming: boolean): void {
  if (o === undefined) {
    if (!streaming) throw new Error('unary call without an outcome');
    return;
  }
  if (o.kind === 'result') {
    if (JSON.stringify(JSON.parse(o.json)) !== o.json) throw new Error('result JSON is not canonical text');
    return;
  }
  if (o.reason === 'REMOTE_ERROR') {
    if (Buffer.byteLength(o.message) > LIMITS.maxErrorMessageBytes) throw new Error('remote message not bounded');
    if (/[\p{Cc}\p{Cf}]/u.test(o.message)) throw new Error('control characters in a message');
    if (o.remoteStatus?.grpc === undefined) throw new Error('remote error without its status');
  } else {
    const spec = gatewayErrors[o.reason];
    if (!o.message.startsWith(spec.message) || o.code !== spec.code) throw new Error(`not the catalogue entry for ${o.reason}`);
  }
}

const headerArb = fc.record(
  {
    ':status': fc.oneof(fc.constant(200), fc.integer({ min: 100, max: 599 })),
    'content-type': fc.oneof(fc.constant('application/grpc'), fc.constant('application/grpc+proto'), fc.string({ maxLength: 20 })),
    'grpc-status': fc.oneof(fc.constant('0'), fc.nat(20).map(String), fc.string({ maxLength: 4 })),
    'grpc-message': fc.string({ unit: 'binary', maxLength: 200 }),
    'grpc-status-details-bin': fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b).toString('base64')),
  },
  { requiredKeys: [':status'] },
);
const trailerArb = fc.record(
  { 'grpc-status': fc.oneof(fc.constant('0'), fc.nat(20).map(String), fc.string({ maxLength: 4 })), 'grpc-message': fc.string({ unit: 'binary', maxLength: 200 }) },
  { requiredKeys: [] },
);
const bodyArb = fc.oneof(
  fc.array(fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)), { maxLength: 6 }),
  fc.array(fc.uint8Array({ maxLength: 120 }).map((m) => encodeMessage(m)), { maxLength: 8 }),
);
const closeArb = fc.record(
  {
    rstCode: fc.nat(13),
    goaway: fc.boolean(),
    transport: fc.constantFrom('UPSTREAM_REFUSED' as const, 'UPSTREAM_RESET' as const, 'UPSTREAM_PROTOCOL_ERROR' as const, 'UPSTREAM_TLS_ERROR' as const),
  },
  { requiredKeys: [] },
);

t.test('property: whatever a remote sends, every call ends in one typed, bounded outcome', async (t) => {
  for (const op of [OPERATIONS.SendMessage, OPERATIONS.GetTask, OPERATIONS.SendStreamingMessage, OPERATIONS.ListTaskPushNotificationConfigs]) {
    t.doesNotThrow(
      () =>
        fc.assert(
          fc.property(fc.option(headerArb, { nil: undefined }), bodyArb, fc.option(trailerArb, { nil: undefined }), closeArb, (headers, chunks, trailers, close) => {
            const script: Script = { chunks, close, ...(headers ? { headers } : {}), ...(trailers ? { trailers } : {}) };
            const { events, end } = play(op, script);
            for (const e of events) if (JSON.stringify(JSON.parse(e)) !== e) throw new Error('event JSON not canonical');
            if (!op.streaming && events.length > 0) throw new Error('unary call produced events');
            checkOutcome(end, op.streaming);
          }),
          params,
        ),
      op.name,
    );
  }
});
