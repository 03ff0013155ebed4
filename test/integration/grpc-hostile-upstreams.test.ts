/**
 * The gateway's gRPC client against hostile upstreams written at the frame
 * level (test/support/hostile-grpc.ts): each failure becomes one typed
 * ErrorOutcome with its own reason and the catalogue's fixed text, and a gRPC
 * caller of the gateway sees it as a status with the gateway's ErrorInfo.
 */
import t, { type Test } from 'tap';
import http2 from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { OPERATIONS, type OperationName } from '../../src/a2a/operations.js';
import type { A2ACall } from '../../src/core/call.js';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../../src/core/outcome.js';
import { gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import type { EventSink } from '../../src/bindings/grpc/contracts.js';
import { encodeMessage } from '../../src/bindings/grpc/framing.js';
import { ErrorInfoSchema } from '../../src/bindings/grpc/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../../src/bindings/grpc/gen/google/rpc/status_pb.js';
import type { GrpcClientOptions } from '../../src/bindings/grpc/client.js';
import { grpcClientFor, sdkGrpcClient, startHarness, TEST_TIMEOUTS } from '../support/grpc-peers.js';
import { answer, GRPC_HEADERS, startH2, startRaw, taskEvent, taskMessage, type H2Handler } from '../support/hostile-grpc.js';
import { sendText } from '../support/sdk-client.js';

function callOf(name: OperationName, params: Record<string, unknown> = {}, service: Partial<A2ACall['service']> = {}): A2ACall {
  return {
    remote: 'upstream',
    operation: OPERATIONS[name],
    generation: '1.0',
    paramsJson: JSON.stringify(params),
    params,
    service: { forwarded: {}, ...service },
    caller: { binding: 'grpc', requestId: 'req-1' },
  };
}

async function unaryAgainst(handler: H2Handler, overrides: Partial<GrpcClientOptions> = {}, name: OperationName = 'GetTask') {
  const server = await startH2(handler);
  const client = grpcClientFor(server.target, overrides);
  try {
    return { ...(await client.unary(callOf(name, { id: 't1' }), new AbortController().signal)), requests: server.requests };
  } finally {
    client.destroy();
    await server.close();
  }
}

interface Collected {
  events: ResultOutcome[];
  end: ErrorOutcome | undefined;
  metadata: Readonly<Record<string, string>> | undefined;
}

function collectingSink(delayMs = 0): EventSink & { done: Promise<Collected> } {
  const out: Collected = { events: [], end: undefined, metadata: undefined };
  let resolve!: (c: Collected) => void;
  const done = new Promise<Collected>((r) => (resolve = r));
  return {
    signal: new AbortController().signal,
    open: (m) => void (out.metadata = m),
    write: (e) => {
      out.events.push(e);
      return delayMs === 0 ? true : new Promise((r) => setTimeout(() => r(true), delayMs));
    },
    end: (error) => {
      out.end = error;
      resolve(out);
    },
    done,
  };
}

async function streamAgainst(handler: H2Handler, overrides: Partial<GrpcClientOptions> = {}, delayMs = 0): Promise<Collected> {
  const server = await startH2(handler);
  const client = grpcClientFor(server.target, overrides);
  try {
    const sink = collectingSink(delayMs);
    await client.stream(callOf('SendStreamingMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }), sink);
    return await sink.done;
  } finally {
    client.destroy();
    await server.close();
  }
}

function isFailure(t: Test, outcome: Outcome | undefined, reason: Reason): void {
  t.equal(outcome?.kind, 'error', `${reason}: an error`);
  const error = outcome as ErrorOutcome;
  t.equal(error.reason, reason);
  t.ok(error.message.startsWith(gatewayErrors[reason].message), `${reason}: the catalogue's text`);
  t.equal(error.code, gatewayErrors[reason].code);
  t.equal(error.metadata.remote, 'upstream');
}

t.test('wrong content-type: an HTML page with 200', async (t) => {
  const { outcome } = await unaryAgainst((s) => {
    s.respond({ ':status': 200, 'content-type': 'text/html' });
    s.end('<html><body>stack trace at /srv/app.js:12</body></html>');
  });
  isFailure(t, outcome, 'WRONG_CONTENT_TYPE');
  t.notMatch(JSON.stringify(outcome), /srv|html/i, 'nothing of the page leaks');
});

t.test('an HTTP 500 without gRPC', async (t) => {
  const { outcome } = await unaryAgainst((s) => {
    s.respond({ ':status': 500, 'content-type': 'text/plain' });
    s.end('boom');
  });
  isFailure(t, outcome, 'UPSTREAM_HTTP_ERROR');
  t.equal((outcome as ErrorOutcome).metadata.httpStatus, '500');
});

t.test('an oversize length prefix is refused before the message is read', async (t) => {
  let written = 0;
  const { outcome } = await unaryAgainst((s) => {
    s.respond(GRPC_HEADERS);
    s.write(Buffer.from([0, 0xff, 0xff, 0xff, 0xf0]));
    const chunk = Buffer.alloc(64 * 1024);
    const pump = () => {
      while (!s.destroyed && written < 8 * 1024 * 1024 && s.write(chunk)) written += chunk.length;
      if (!s.destroyed && written < 8 * 1024 * 1024) s.once('drain', pump);
    };
    pump();
  });
  isFailure(t, outcome, 'RESPONSE_TOO_LARGE');
  t.ok(written < 8 * 1024 * 1024, 'the gateway stopped the stream instead of reading it');
});

t.test('a message one byte over maxResponseBytes', async (t) => {
  const limits = { maxResponseBytes: taskMessage().length - 5 - 1, maxEventBytes: 1024, maxStreamBytes: 4096, maxStreamEvents: 10, maxErrorMessageBytes: 256 };
  const over = await unaryAgainst((s) => answer(s, taskMessage()), { limits });
  isFailure(t, over.outcome, 'RESPONSE_TOO_LARGE');
  const exact = await unaryAgainst((s) => answer(s, taskMessage()), { limits: { ...limits, maxResponseBytes: limits.maxResponseBytes + 1 } });
  t.equal(exact.outcome.kind, 'result', 'exactly maxResponseBytes passes');
});

t.test('a compressed message (the gateway offered identity only)', async (t) => {
  const { outcome, requests } = await unaryAgainst((s) => {
    const message = taskMessage();
    message[0] = 1;
    answer(s, message, { 'grpc-encoding': 'gzip' });
  });
  isFailure(t, outcome, 'UNSUPPORTED_ENCODING');
  t.equal(requests[0]?.['grpc-accept-encoding'], 'identity');
});

t.test('a message of another type that does not decode', async (t) => {
  // Field 1 of Task is a string; wire type 5 (fixed32) there cannot be read as one.
  const { outcome } = await unaryAgainst((s) => answer(s, encodeMessage(Buffer.from([0x0d, 1, 2, 3, 4]))));
  isFailure(t, outcome, 'INVALID_RESPONSE_MESSAGE');
});

t.test('trailers-only errors: a typed A2A error, and a status that is not a number', async (t) => {
  const typed = await unaryAgainst((s) => s.respond({ ...GRPC_HEADERS, 'grpc-status': '5', 'grpc-message': 'no task t1' }, { endStream: true }));
  t.match(typed.outcome, { kind: 'error', reason: 'REMOTE_ERROR', code: -32001, message: 'no task t1', remoteStatus: { grpc: 5 } });
  const bad = await unaryAgainst((s) => s.respond({ ...GRPC_HEADERS, 'grpc-status': 'OK' }, { endStream: true }));
  isFailure(t, bad.outcome, 'INVALID_STATUS');
});

t.test('RST_STREAM mid-call', async (t) => {
  const { outcome } = await unaryAgainst((s) => {
    s.respond(GRPC_HEADERS);
    // destroy() resets the stream (RST_STREAM INTERNAL_ERROR); close(code) would end it cleanly first.
    s.write(taskMessage().subarray(0, 6), () => setTimeout(() => s.destroy(new Error('reset')), 20));
  });
  isFailure(t, outcome, 'UPSTREAM_STREAM_RESET');
  t.equal((outcome as ErrorOutcome).metadata.http2Error, String(http2.constants.NGHTTP2_INTERNAL_ERROR));
});

t.test('GOAWAY mid-call', async (t) => {
  const { outcome } = await unaryAgainst((s, _h, session) => {
    s.respond(GRPC_HEADERS);
    s.write(taskMessage().subarray(0, 6), () =>
      setTimeout(() => {
        session.goaway(http2.constants.NGHTTP2_INTERNAL_ERROR, 0);
        setTimeout(() => session.destroy(), 20);
      }, 20),
    );
  });
  isFailure(t, outcome, 'UPSTREAM_GOAWAY');
});

t.test('a call that never answers ends at the deadline; the deadline travels as grpc-timeout', async (t) => {
  const { outcome, requests } = await unaryAgainst(() => {}, { timeouts: { ...TEST_TIMEOUTS, totalMs: 300 } });
  isFailure(t, outcome, 'UPSTREAM_TIMEOUT');
  t.equal(requests[0]?.['grpc-timeout'], '300m');
});

t.test('bytes that are not HTTP/2', async (t) => {
  for (const [name, bytes] of [
    ['an HTTP/1.1 reply', 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'],
    ['garbage frames after the preface', Buffer.from([0, 0, 4, 0xff, 0xff, 0, 0, 0, 0, 1, 2, 3, 4])],
  ] as const) {
    const server = await startRaw((socket) => socket.once('data', () => socket.write(bytes)));
    const client = grpcClientFor(server.target);
    const { outcome } = await client.unary(callOf('GetTask', { id: 't' }), new AbortController().signal);
    isFailure(t, outcome, 'UPSTREAM_PROTOCOL_ERROR');
    t.comment(name);
    client.destroy();
    await server.close();
  }
});

t.test('connection failures', async (t) => {
  const closed = await startRaw((s) => s.destroy());
  const port = closed.port;
  await closed.close();
  const refused = grpcClientFor(`127.0.0.1:${port}`);
  isFailure(t, (await refused.unary(callOf('GetTask', { id: 't' }), new AbortController().signal)).outcome, 'UPSTREAM_REFUSED');
  refused.destroy();

  const guarded = grpcClientFor('127.0.0.1:9', { allowPrivateNetwork: false });
  isFailure(t, (await guarded.unary(callOf('GetTask', { id: 't' }), new AbortController().signal)).outcome, 'EGRESS_DENIED');
  guarded.destroy();

  // A name that resolves to loopback (DNS rebinding) is refused at connect, with the name kept as authority.
  const rebinding = grpcClientFor('agent.example.com:443', {
    allowPrivateNetwork: false,
    resolver: (_host, _opts, cb) => (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]),
  });
  isFailure(t, (await rebinding.unary(callOf('GetTask', { id: 't' }), new AbortController().signal)).outcome, 'EGRESS_DENIED');
  rebinding.destroy();
});

t.test('the authority stays the configured name while the resolver picks the address', async (t) => {
  const server = await startH2((s) => answer(s, taskMessage()));
  const client = grpcClientFor(`agent.test:${server.port}`, {
    resolver: (_host, _opts, cb) => (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '127.0.0.1', family: 4 }]),
  });
  const { outcome } = await client.unary(callOf('GetTask', { id: 't' }), new AbortController().signal);
  t.equal(outcome.kind, 'result');
  t.equal(server.requests[0]?.[':authority'], `agent.test:${server.port}`);
  client.destroy();
  await server.close();
});

t.test('credentials travel as metadata; response metadata is cut to the §10.2 keys', async (t) => {
  const reply = await unaryAgainst((s) => answer(s, taskMessage(), { 'a2a-version': '1.0', 'a2a-extensions': 'https://x.example/e/v1', 'set-cookie': 'a=b', 'x-internal': 'secret' }), {
    credentials: () => ({ authorization: 'Bearer upstream-token', 'grpc-timeout': '1S' }),
  });
  t.same(reply.metadata, { 'a2a-version': '1.0', 'a2a-extensions': 'https://x.example/e/v1' });
  t.equal(reply.requests[0]?.authorization, 'Bearer upstream-token');
  t.not(reply.requests[0]?.['grpc-timeout'], '1S', 'a credential cannot set gRPC-reserved metadata');
});

t.test('streams: a broken message after good events', async (t) => {
  const got = await streamAgainst((s) => {
    s.respond(GRPC_HEADERS, { waitForTrailers: true });
    s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
    s.write(taskEvent('a'));
    s.end(encodeMessage(Buffer.from([0x0a, 0x7f, 0x01])));
  });
  t.same(got.events.map((e) => e.json), ['{"task":{"id":"a"}}']);
  isFailure(t, got.end, 'INVALID_EVENT');
});

t.test('streams: clean end, events in order with a slow consumer (back-pressure)', async (t) => {
  const many = Array.from({ length: 30 }, (_, i) => taskEvent(`e${i}`));
  const got = await streamAgainst(
    (s) => {
      s.respond({ ...GRPC_HEADERS, 'a2a-version': '1.0' }, { waitForTrailers: true });
      s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
      s.end(Buffer.concat(many));
    },
    {},
    2,
  );
  t.equal(got.end, undefined);
  t.same(got.events.map((e) => (e.value as { task: { id: string } }).task.id), many.map((_, i) => `e${i}`));
  t.same(got.metadata, { 'a2a-version': '1.0' });
});

t.test('streams: idle, no-data and maximum duration timers', async (t) => {
  const quiet: H2Handler = (s) => {
    s.respond(GRPC_HEADERS);
    s.write(taskEvent('first'));
  };
  const idle = await streamAgainst(quiet, { timeouts: { ...TEST_TIMEOUTS, streamIdleMs: 200 } });
  t.equal(idle.events.length, 1);
  isFailure(t, idle.end, 'STREAM_IDLE');

  // Bytes keep arriving (half a message at a time), but no whole event does.
  const trickle: H2Handler = (s) => {
    s.respond(GRPC_HEADERS);
    const bytes = taskEvent('slow');
    let i = 0;
    const timer = setInterval(() => (i < bytes.length && !s.destroyed ? s.write(bytes.subarray(i, ++i)) : clearInterval(timer)), 50);
    s.on('close', () => clearInterval(timer));
  };
  const noData = await streamAgainst(trickle, { timeouts: { ...TEST_TIMEOUTS, streamIdleMs: 1000, streamNoDataMs: 250 } });
  isFailure(t, noData.end, 'STREAM_NO_DATA');

  const chatty: H2Handler = (s) => {
    s.respond(GRPC_HEADERS);
    const timer = setInterval(() => (!s.destroyed ? s.write(taskEvent('tick')) : clearInterval(timer)), 40);
    s.on('close', () => clearInterval(timer));
  };
  const tooLong = await streamAgainst(chatty, { timeouts: { ...TEST_TIMEOUTS, maxStreamMs: 300 } });
  t.ok(tooLong.events.length >= 2);
  isFailure(t, tooLong.end, 'STREAM_TOO_LONG');
});

t.test('streams: RST_STREAM and a remote status error after events', async (t) => {
  const reset = await streamAgainst((s) => {
    s.respond(GRPC_HEADERS);
    s.write(taskEvent('a'), () => setTimeout(() => s.destroy(new Error('reset')), 20));
  });
  t.equal(reset.events.length, 1);
  isFailure(t, reset.end, 'UPSTREAM_STREAM_RESET');
  const failed = await streamAgainst((s) => {
    s.respond(GRPC_HEADERS, { waitForTrailers: true });
    s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '9', 'grpc-message': 'version%0Anot%07%20supported' }));
    s.end(taskEvent('a'));
  });
  t.match(failed.end, { reason: 'REMOTE_ERROR', code: -32603, message: 'version not supported', remoteStatus: { grpc: 9 } });
});

t.test('a gRPC caller of the gateway sees a hostile upstream as a typed status with both ErrorInfos', async (t) => {
  const server = await startH2((s) => {
    s.respond({ ':status': 200, 'content-type': 'text/html' });
    s.end('<html>oops</html>');
  });
  const client = grpcClientFor(server.target);
  const harness = await startHarness(client);
  const sdk = await sdkGrpcClient(harness.target);
  const err = (await sendText(sdk, 'hello').catch((e: unknown) => e)) as { name: string; status: number; message: string; statusDetailsBin?: Buffer };
  t.equal(err.name, 'InvalidAgentResponseError', 'the SDK types it from the A2A ErrorInfo');
  t.equal(err.status, grpc.status.INTERNAL);
  t.equal(err.message, gatewayErrors.WRONG_CONTENT_TYPE.message);
  const status = fromBinary(StatusSchema, err.statusDetailsBin!);
  const infos = status.details.map((d) => anyUnpack(d, ErrorInfoSchema));
  t.match(infos, [
    { reason: 'INVALID_AGENT_RESPONSE', domain: 'a2a-protocol.org' },
    { reason: 'WRONG_CONTENT_TYPE', domain: 'a2a-egress', metadata: { remote: 'upstream' } },
  ]);
  client.destroy();
  await harness.close();
  await server.close();
});
