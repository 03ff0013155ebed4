/**
 * Hostile gRPC upstreams (written at the frame level with node:http2,
 * test/support/hostile-grpc.ts) behind the running gateway: a gRPC caller
 * sees each failure as one typed status with the gateway's ErrorInfo and the
 * catalogue's fixed text, nothing of the remote's junk, and the gateway logs
 * and counts the call with its reason. Bounds are tested just under and just
 * over. The layer-level cases are in grpc-hostile-upstreams.test.ts.
 */
import t, { type Test } from 'tap';
import http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import { encodeMessage } from '../../src/bindings/grpc/framing.js';
import { ErrorInfoSchema } from '../../src/bindings/grpc/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../../src/bindings/grpc/gen/google/rpc/status_pb.js';
import { jsonToBinary, SERVICE_PATH } from '../../src/bindings/grpc/proto-json.js';
import { answer, GRPC_HEADERS, startH2, taskEvent, taskMessage, type H2Handler, type HostileServer } from '../support/hostile-grpc.js';
import { startGrpcGateway, type GrpcGateway } from '../support/grpc-gateway.js';

const TASK_ID = 't'.repeat(100);
const TASK_BYTES = taskMessage(TASK_ID).length - 5; // the message without its 5-byte prefix

const handlers: Record<string, H2Handler> = {
  // Trailers-only: the status in the headers, with details that are not a google.rpc.Status at all.
  junkDetails: (s) =>
    s.respond({ ...GRPC_HEADERS, 'grpc-status': '5', 'grpc-message': 'no%20task%1B[31m t1', 'grpc-status-details-bin': Buffer.from('\u0000junk\u00ff<script>').toString('base64') }, { endStream: true }),
  task: (s) => answer(s, taskMessage(TASK_ID)),
  // A prefix announcing 16 MiB, then bytes that never stop.
  oversized: (s) => {
    s.respond(GRPC_HEADERS);
    s.write(Buffer.from([0, 0x01, 0, 0, 0]));
    s.write(Buffer.alloc(64 * 1024));
  },
  resetMidStream: (s) => {
    s.respond(GRPC_HEADERS);
    s.write(taskEvent('a'), () => setTimeout(() => s.destroy(new Error('reset')), 20));
  },
  silent: () => {},
  // Headers, then nothing: a stream that goes quiet.
  quietStream: (s) => s.respond(GRPC_HEADERS),
  brokenEvent: (s) => {
    s.respond(GRPC_HEADERS, { waitForTrailers: true });
    s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
    s.write(taskEvent('a'));
    s.end(encodeMessage(Buffer.from([0x0a, 0x7f, 0x01])));
  },
  unavailable: (s) => s.respond({ ...GRPC_HEADERS, 'grpc-status': '14', 'grpc-message': 'overloaded' }, { endStream: true }),
  threeEvents: (s) => {
    s.respond(GRPC_HEADERS, { waitForTrailers: true });
    s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
    s.end(Buffer.concat([taskEvent('a'), taskEvent('b'), taskEvent('c')]));
  },
};

// A port nobody listens on: connections are refused.
const closedPort = await new Promise<number>((resolve) => {
  const probe = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(port));
  });
});

const servers: Record<string, HostileServer> = {};
for (const [name, handler] of Object.entries(handlers)) servers[name] = await startH2(handler);

const remote = (name: string, server: string, extra = '') => `
  ${name}:
    url: http://127.0.0.1:1/
    allowPrivateNetwork: true
    retries: { attempts: 1 }
    grpc: { target: "${servers[server]!.target}" }${extra}`;

const gw: GrpcGateway = await startGrpcGateway(`
server: { host: 127.0.0.1, port: 0, grpc: { port: 0 } }
defaults:
  circuitBreaker: { failureThreshold: 1000 }
remotes:${remote('notFound', 'junkDetails')}${remote('atLimit', 'task', `\n    limits: { maxResponseBytes: ${TASK_BYTES} }`)}${remote('overLimit', 'task', `\n    limits: { maxResponseBytes: ${TASK_BYTES - 1} }`)}${remote('huge', 'oversized')}${remote('reset', 'resetMidStream')}${remote('silent', 'silent', '\n    timeouts: { totalMs: 300 }')}${remote('broken', 'brokenEvent')}${remote('threeOk', 'threeEvents', '\n    limits: { maxStreamEvents: 3 }')}${remote('threeOver', 'threeEvents', '\n    limits: { maxStreamEvents: 2 }')}${remote('validated', 'threeEvents', '\n    limits: { validateResults: true }')}${remote('quiet', 'quietStream', '\n    timeouts: { streamIdleMs: 200 }')}${remote('patient', 'silent')}${remote('smallRequests', 'task', '\n    limits: { maxRequestBytes: 64 }')}${remote('failing', 'unavailable')}
    circuitBreaker: { failureThreshold: 2, cooldownMs: 60000 }
  refused:
    url: http://127.0.0.1:1/
    allowPrivateNetwork: true
    retries: { attempts: 3, baseMs: 1, maxMs: 2 }
    grpc: { target: "127.0.0.1:${closedPort}" }
`);
const client = new grpc.Client(gw.grpc.shared!, grpc.credentials.createInsecure());
t.teardown(async () => {
  client.close();
  await gw.close();
  for (const server of Object.values(servers)) await server.close();
});

const identity = (b: Buffer): Buffer => b;
const named = (remote: string): grpc.Metadata => {
  const metadata = new grpc.Metadata();
  metadata.set('a2a-egress-remote', remote);
  return metadata;
};

function unary(remote: string, request: Buffer = Buffer.from(jsonToBinary('GetTaskRequest', { id: 't1' }))): Promise<{ error?: grpc.ServiceError; reply?: Buffer }> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(`${SERVICE_PATH}GetTask`, identity, identity, request, named(remote), (error, reply) => resolve(error ? { error } : { reply: reply! }));
  });
}

function stream(remote: string): Promise<{ events: Buffer[]; error?: grpc.ServiceError }> {
  const request = Buffer.from(jsonToBinary('SendMessageRequest', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }));
  return new Promise((resolve) => {
    const events: Buffer[] = [];
    const call = client.makeServerStreamRequest(`${SERVICE_PATH}SendStreamingMessage`, identity, identity, request, named(remote));
    call.on('data', (event: Buffer) => events.push(event));
    call.on('error', (error: grpc.ServiceError) => resolve({ events, error }));
    call.on('end', () => setImmediate(() => resolve({ events })));
  });
}

/** The ErrorInfos of a status, in order. */
function errorInfos(error: grpc.ServiceError): { reason: string; domain: string; metadata: Record<string, string> }[] {
  const bin = error.metadata.get('grpc-status-details-bin')[0] as Buffer;
  return fromBinary(StatusSchema, bin).details.map((d) => anyUnpack(d, ErrorInfoSchema)!);
}

function isGatewayFailure(t: Test, error: grpc.ServiceError | undefined, reason: Reason, code: grpc.status, remote: string): void {
  t.ok(error, `${reason}: a status`);
  t.equal(error?.code, code, `${reason}: ${grpc.status[code]}`);
  t.equal(error?.details, gatewayErrors[reason].message, 'the catalogue’s fixed text');
  const gateway = errorInfos(error!).find((i) => i.domain === 'a2a-egress');
  t.match(gateway, { reason, metadata: { remote } });
  t.match(gw.calls().filter((c) => c.remote === remote).at(-1), { binding: 'grpc', outcome: reason }, 'logged with its reason');
}

t.test('a trailers-only error with junk status details: the status and its type kept, the junk dropped', async (t) => {
  const { error } = await unary('notFound');
  t.equal(error?.code, grpc.status.NOT_FOUND);
  t.equal(error?.details, 'no task t1', 'the remote’s message, sanitized (its terminal escape removed)');
  t.notMatch(error?.details ?? '', /\u001b/, 'control characters are gone from the message');
  const infos = errorInfos(error!);
  t.match(infos[0], { domain: 'a2a-protocol.org', reason: 'TASK_NOT_FOUND' }, 'the A2A ErrorInfo is the gateway’s, from the status');
  t.notMatch(JSON.stringify(infos), /junk|script/, 'nothing of the undecodable details survives');
  t.match(gw.calls().at(-1), { remote: 'notFound', outcome: 'REMOTE_ERROR' });
});

t.test('a response message at maxResponseBytes passes; one byte over is RESPONSE_TOO_LARGE', async (t) => {
  const ok = await unary('atLimit');
  t.notOk(ok.error);
  t.equal(ok.reply?.length, TASK_BYTES);
  const over = await unary('overLimit');
  isGatewayFailure(t, over.error, 'RESPONSE_TOO_LARGE', grpc.status.INTERNAL, 'overLimit');
});

t.test('an oversized length prefix is refused before the message is read', async (t) => {
  const { error } = await unary('huge');
  isGatewayFailure(t, error, 'RESPONSE_TOO_LARGE', grpc.status.INTERNAL, 'huge');
  t.match(await gw.metrics(), /a2a_egress_normalizations_total\{remote="huge",reason="RESPONSE_TOO_LARGE"\} 1/);
});

t.test('RST_STREAM mid-stream: the events before it, then UPSTREAM_STREAM_RESET', async (t) => {
  const { events, error } = await stream('reset');
  t.equal(events.length, 1);
  isGatewayFailure(t, error, 'UPSTREAM_STREAM_RESET', grpc.status.UNAVAILABLE, 'reset');
  const gateway = errorInfos(error!).find((i) => i.domain === 'a2a-egress');
  t.equal(gateway?.metadata.http2Error, String(http2.constants.NGHTTP2_INTERNAL_ERROR));
  t.match(gw.calls().at(-1), { remote: 'reset', events: 1 });
});

t.test('a call that never answers ends at the remote’s totalMs, which travels as grpc-timeout', async (t) => {
  const { error } = await unary('silent');
  isGatewayFailure(t, error, 'UPSTREAM_TIMEOUT', grpc.status.DEADLINE_EXCEEDED, 'silent');
  t.equal(servers.silent!.requests.at(-1)?.['grpc-timeout'], '300m');
});

t.test('a broken stream message after a good event is INVALID_EVENT', async (t) => {
  const { events, error } = await stream('broken');
  t.equal(events.length, 1);
  isGatewayFailure(t, error, 'INVALID_EVENT', grpc.status.INTERNAL, 'broken');
});

t.test('maxStreamEvents: exactly at it the stream ends cleanly; one over is STREAM_TOO_MANY_EVENTS', async (t) => {
  const ok = await stream('threeOk');
  t.notOk(ok.error);
  t.equal(ok.events.length, 3);
  t.match(gw.calls().at(-1), { remote: 'threeOk', outcome: 'ok', events: 3 });
  const over = await stream('threeOver');
  t.equal(over.events.length, 2);
  isGatewayFailure(t, over.error, 'STREAM_TOO_MANY_EVENTS', grpc.status.INTERNAL, 'threeOver');
});

t.test('maxRequestBytes: a request at the bound passes, one byte over is REQUEST_TOO_LARGE', async (t) => {
  const request = (n: number) => Buffer.from(jsonToBinary('GetTaskRequest', { id: 'x'.repeat(n - 2) }));
  t.equal(request(64).length, 64);
  const ok = await unary('smallRequests', request(64));
  t.notOk(ok.error);
  const over = await unary('smallRequests', request(65));
  isGatewayFailure(t, over.error, 'REQUEST_TOO_LARGE', grpc.status.RESOURCE_EXHAUSTED, 'smallRequests');
});

t.test('a request that is not the method’s message is INVALID_PARAMS, logged', async (t) => {
  const { error } = await unary('atLimit', Buffer.from([0x0a, 0x7f, 0x01]));
  isGatewayFailure(t, error, 'INVALID_PARAMS', grpc.status.INVALID_ARGUMENT, 'atLimit');
});

t.test('the circuit breaker counts a remote’s UNAVAILABLE; once open, calls fail fast with CIRCUIT_OPEN', async (t) => {
  for (let i = 0; i < 2; i++) {
    const { error } = await unary('failing');
    t.match(error, { code: grpc.status.UNAVAILABLE, details: 'overloaded' }, 'the remote’s own status and message');
  }
  const before = servers.unavailable!.requests.length;
  const { error } = await unary('failing');
  isGatewayFailure(t, error, 'CIRCUIT_OPEN', grpc.status.UNAVAILABLE, 'failing');
  t.ok(Number(errorInfos(error!).find((i) => i.domain === 'a2a-egress')?.metadata.retryAfterMs) > 0, 'retryAfterMs');
  t.equal(servers.unavailable!.requests.length, before, 'the remote was not called');
  t.match(await gw.metrics(), /a2a_egress_circuit_state\{remote="failing"\} 2/);
});

t.test('read-only calls are retried on a refused connection (retries.attempts); others are not', async (t) => {
  const { error } = await unary('refused');
  isGatewayFailure(t, error, 'UPSTREAM_REFUSED', grpc.status.UNAVAILABLE, 'refused');
  t.match(gw.calls().at(-1), { method: 'GetTask', attempts: 3 });
  const sent = await new Promise<grpc.ServiceError | undefined>((resolve) => {
    const request = Buffer.from(jsonToBinary('SendMessageRequest', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }));
    client.makeUnaryRequest(`${SERVICE_PATH}SendMessage`, identity, identity, request, named('refused'), (err) => resolve(err ?? undefined));
  });
  t.equal(sent?.code, grpc.status.UNAVAILABLE);
  t.match(gw.calls().at(-1), { method: 'SendMessage', outcome: 'UPSTREAM_REFUSED', attempts: 1 });
});

t.test('validateResults: an event the A2A schema refuses (a task without status) ends the stream with INVALID_RESULT', async (t) => {
  const { events, error } = await stream('validated');
  t.equal(events.length, 0);
  t.equal(error?.code, grpc.status.INTERNAL);
  t.equal(error?.details, `${gatewayErrors.INVALID_RESULT.message}: result.task.status is required`, 'the problem names a path, never a value');
  t.match(errorInfos(error!).find((i) => i.domain === 'a2a-egress'), { reason: 'INVALID_RESULT', metadata: { remote: 'validated' } });
  t.match(gw.calls().at(-1), { remote: 'validated', outcome: 'INVALID_RESULT', events: 0 });
});

t.test('a stream that goes quiet ends at streamIdleMs with STREAM_IDLE', async (t) => {
  const { events, error } = await stream('quiet');
  t.equal(events.length, 0);
  isGatewayFailure(t, error, 'STREAM_IDLE', grpc.status.DEADLINE_EXCEEDED, 'quiet');
});

t.test('a caller’s own deadline cancels the call upstream: CALLER_CLOSED in the log', async (t) => {
  const before = servers.silent!.requests.length;
  const error = await new Promise<grpc.ServiceError | null>((resolve) => {
    const request = Buffer.from(jsonToBinary('GetTaskRequest', { id: 't1' }));
    client.makeUnaryRequest(`${SERVICE_PATH}GetTask`, identity, identity, request, named('patient'), { deadline: Date.now() + 200 }, (err) => resolve(err));
  });
  t.equal(error?.code, grpc.status.DEADLINE_EXCEEDED, 'the caller’s client ends it');
  t.equal(servers.silent!.requests.length, before + 1, 'the call reached the remote');
  t.equal(servers.silent!.requests.at(-1)?.['grpc-timeout'], '60000m', 'the remote’s own deadline (totalMs) travels upstream');
  for (let i = 0; i < 50 && gw.calls().at(-1)?.remote !== 'patient'; i++) await new Promise((r) => setTimeout(r, 20));
  t.match(gw.calls().at(-1), { remote: 'patient', outcome: 'CALLER_CLOSED' });
});
