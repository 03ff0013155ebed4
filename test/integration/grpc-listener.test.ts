/**
 * The gateway's gRPC listener with real grpc-js and @a2a-js/sdk callers and
 * test handlers: how a call names its remote, refusals before the handler,
 * how outcomes are encoded, cancellation, TLS and mTLS.
 */
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import type { A2ACall } from '../../src/core/call.js';
import { gatewayErrors } from '../../src/envelope/codes.js';
import type { CallHandler, EventSink } from '../../src/bindings/grpc/contracts.js';
import { ErrorInfoSchema } from '../../src/bindings/grpc/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../../src/bindings/grpc/gen/google/rpc/status_pb.js';
import { binaryToJson, jsonToBinary } from '../../src/bindings/grpc/proto-json.js';
import { gatewayFailure } from '../../src/bindings/grpc/response-reader.js';
import { REMOTE_METADATA_KEY, startGrpcListener } from '../../src/bindings/grpc/server.js';
import { sdkGrpcClient } from '../support/grpc-peers.js';
import { sendText, streamText } from '../support/sdk-client.js';
import { createTestPki } from '../support/tls.js';

const raw = (b: Buffer) => b;
const ECHO_MESSAGE = { message: { messageId: 'a1', role: 'ROLE_AGENT', parts: [{ text: 'ok' }] } };

/** A handler answering every unary call with ECHO_MESSAGE (as SendMessageResponse) and recording calls. */
function echoHandler(calls: A2ACall[], overrides: Partial<CallHandler> = {}): CallHandler {
  return {
    unary: async (call) => {
      calls.push(call);
      return { outcome: { kind: 'result', json: JSON.stringify(ECHO_MESSAGE), value: ECHO_MESSAGE }, metadata: { 'a2a-version': '1.0' } };
    },
    stream: async (call, sink) => {
      calls.push(call);
      sink.open({});
      sink.end();
    },
    ...overrides,
  };
}

/** A grpc-js client sending raw bytes to one method, returning the raw reply or the ServiceError. */
function rawUnary(target: string, method: string, body: Buffer, metadata = new grpc.Metadata(), credentials = grpc.credentials.createInsecure(), options: grpc.ChannelOptions = {}) {
  const client = new grpc.Client(target, credentials, options);
  return new Promise<{ reply?: Buffer; error?: grpc.ServiceError; headers?: grpc.Metadata }>((resolve) => {
    let headers: grpc.Metadata | undefined;
    const call = client.makeUnaryRequest(`/lf.a2a.v1.A2AService/${method}`, raw, raw, body, metadata, {}, (error, reply) => {
      client.close();
      resolve({ ...(error ? { error } : {}), ...(reply ? { reply } : {}), ...(headers ? { headers } : {}) });
    });
    call.on('metadata', (m) => (headers = m));
  });
}

function errorInfos(error: grpc.ServiceError) {
  const bin = error.metadata.get('grpc-status-details-bin')[0] as Buffer;
  return fromBinary(StatusSchema, bin).details.map((d) => anyUnpack(d, ErrorInfoSchema));
}

const sendRequest = () => Buffer.from(jsonToBinary('SendMessageRequest', { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }));

t.test('a shared listener takes the remote from metadata', async (t) => {
  const calls: A2ACall[] = [];
  const listener = await startGrpcListener({
    host: '127.0.0.1',
    port: 0,
    handler: echoHandler(calls),
    maxRequestBytes: 1024,
    remoteExists: (name) => name === 'weather',
    forwardHeadersOf: () => [],
  });
  t.teardown(() => listener.close());
  const target = `127.0.0.1:${listener.port}`;
  const named = new grpc.Metadata();
  named.set(REMOTE_METADATA_KEY, 'weather');
  const ok = await rawUnary(target, 'SendMessage', sendRequest(), named);
  t.same(binaryToJson('SendMessageResponse', ok.reply!).value, ECHO_MESSAGE);
  t.equal(calls[0]?.remote, 'weather');
  t.equal(ok.headers?.get('a2a-version')[0], '1.0', 'the reply metadata reaches the caller');

  for (const [name, metadata] of [
    ['no remote named', new grpc.Metadata()],
    ['an unknown remote', (() => { const m = new grpc.Metadata(); m.set(REMOTE_METADATA_KEY, 'nope'); return m; })()],
  ] as const) {
    const { error } = await rawUnary(target, 'SendMessage', sendRequest(), metadata);
    t.equal(error?.code, grpc.status.NOT_FOUND, name);
    t.equal(error?.details, gatewayErrors.UNKNOWN_REMOTE.message);
    t.match(errorInfos(error!), [{ reason: 'UNKNOWN_REMOTE', domain: 'a2a-egress' }]);
  }
  t.equal(calls.length, 1, 'the handler never saw the refused calls');
});

t.test('refused before the handler: undecodable request, too large, unauthenticated, unknown method', async (t) => {
  const calls: A2ACall[] = [];
  const listener = await startGrpcListener({
    host: '127.0.0.1',
    port: 0,
    remote: 'weather',
    handler: echoHandler(calls),
    maxRequestBytes: 256,
    remoteExists: () => true,
    forwardHeadersOf: () => [],
    authenticate: (m) => m.get('authorization')[0] === 'Bearer good',
  });
  t.teardown(() => listener.close());
  const target = `127.0.0.1:${listener.port}`;
  const authed = new grpc.Metadata();
  authed.set('authorization', 'Bearer good');

  const garbage = await rawUnary(target, 'GetTask', Buffer.from([0x0a, 0x40, 0x41]), authed.clone());
  t.equal(garbage.error?.code, grpc.status.INVALID_ARGUMENT);
  t.equal(garbage.error?.details, gatewayErrors.INVALID_PARAMS.message);
  t.match(errorInfos(garbage.error!), [{ reason: 'INVALID_PARAMS', metadata: { remote: 'weather' } }]);

  const justFits = Buffer.from(jsonToBinary('GetTaskRequest', { id: 'x'.repeat(253) }));
  t.equal(justFits.length, 256);
  t.equal((await rawUnary(target, 'GetTask', justFits, authed.clone())).error, undefined, 'a request of maxRequestBytes passes');
  const tooBig = await rawUnary(target, 'GetTask', Buffer.from(jsonToBinary('GetTaskRequest', { id: 'x'.repeat(254) })), authed.clone());
  t.equal(tooBig.error?.code, grpc.status.RESOURCE_EXHAUSTED, 'one byte more is refused by grpc-js');

  const anonymous = await rawUnary(target, 'SendMessage', sendRequest());
  t.equal(anonymous.error?.code, grpc.status.UNAUTHENTICATED);

  const unknown = await rawUnary(target, 'NoSuchMethod', Buffer.alloc(0), authed.clone());
  t.equal(unknown.error?.code, grpc.status.UNIMPLEMENTED);
  t.equal(calls.length, 1);
});

t.test('encoding outcomes: errors with details, Empty results, results that are not the response type', async (t) => {
  const handler: CallHandler = {
    unary: async (call) => {
      if (call.operation.name === 'DeleteTaskPushNotificationConfig') return { outcome: { kind: 'result', json: 'null', value: null } };
      if (call.operation.name === 'GetTask') return { outcome: { kind: 'result', json: '{"id":5}', value: { id: 5 } } };
      if (call.operation.name === 'CancelTask') throw new Error('handler bug with a secret inside');
      return { outcome: { ...gatewayFailure('RATE_LIMITED', 'weather', { retryAfterMs: '1000' }), headers: { 'retry-after': '1' } } };
    },
    stream: async (_call, sink) => sink.end(),
  };
  const listener = await startGrpcListener({ host: '127.0.0.1', port: 0, remote: 'weather', handler, maxRequestBytes: 4096, remoteExists: () => true, forwardHeadersOf: () => [] });
  t.teardown(() => listener.close());
  const target = `127.0.0.1:${listener.port}`;

  const deleted = await rawUnary(target, 'DeleteTaskPushNotificationConfig', Buffer.from(jsonToBinary('DeleteTaskPushNotificationConfigRequest', { taskId: 't', id: 'c' })));
  t.equal(deleted.error, undefined);
  t.equal(deleted.reply?.length, 0, 'google.protobuf.Empty');

  const wrongType = await rawUnary(target, 'GetTask', Buffer.from(jsonToBinary('GetTaskRequest', { id: 't' })));
  t.equal(wrongType.error?.code, grpc.status.INTERNAL);
  t.match(errorInfos(wrongType.error!), [{ reason: 'INVALID_AGENT_RESPONSE' }, { reason: 'INVALID_RESULT' }]);

  const limited = await rawUnary(target, 'SendMessage', sendRequest());
  t.equal(limited.error?.code, grpc.status.RESOURCE_EXHAUSTED);
  t.equal(limited.error?.metadata.get('retry-after')[0], '1');
  t.match(errorInfos(limited.error!), [{ reason: 'RATE_LIMITED', domain: 'a2a-egress', metadata: { remote: 'weather', retryAfterMs: '1000' } }]);

  const crashed = await rawUnary(target, 'CancelTask', Buffer.from(jsonToBinary('CancelTaskRequest', { id: 't' })));
  t.equal(crashed.error?.code, grpc.status.INTERNAL);
  t.equal(crashed.error?.details, gatewayErrors.GATEWAY_ERROR.message);
  t.notMatch(JSON.stringify(crashed.error), /secret/);
});

t.test('streams: events, a final error after them, and caller cancellation reaching the handler', async (t) => {
  let cancelled: Promise<void> | undefined;
  const handler: CallHandler = {
    unary: async () => ({ outcome: gatewayFailure('GATEWAY_ERROR', 'w') }),
    stream: async (call, sink: EventSink) => {
      sink.open({ 'a2a-version': '1.0' });
      const text = (call.params as { message?: { parts?: { text?: string }[] } }).message?.parts?.[0]?.text ?? '';
      if (text.startsWith('forever')) {
        cancelled = new Promise((resolve) => sink.signal.addEventListener('abort', () => resolve(), { once: true }));
        let i = 0;
        while (!sink.signal.aborted) {
          const more = await sink.write({ kind: 'result', json: '', value: { task: { id: `t${i++}` } } });
          if (!more) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        return sink.end();
      }
      for (const id of ['a', 'b']) await sink.write({ kind: 'result', json: '', value: { task: { id } } });
      sink.end(gatewayFailure('STREAM_IDLE', 'w'));
    },
  };
  const listener = await startGrpcListener({ host: '127.0.0.1', port: 0, remote: 'w', handler, maxRequestBytes: 4096, remoteExists: () => true, forwardHeadersOf: () => [] });
  t.teardown(() => listener.close());
  const sdk = await sdkGrpcClient(`127.0.0.1:${listener.port}`);
  const events: unknown[] = [];
  const err = await (async () => {
    for await (const e of sdk.sendMessageStream({ tenant: '', message: { messageId: 'm', contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: 'two' }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] }, configuration: undefined, metadata: undefined })) events.push(e);
  })().catch((e: unknown) => e);
  t.equal(events.length, 2, 'both events before the error');
  t.match(err, { status: grpc.status.DEADLINE_EXCEEDED, message: /remote stream sent nothing for too long/ });

  const controller = new AbortController();
  const seen = (async () => {
    for await (const _ of sdk.sendMessageStream({ tenant: '', message: { messageId: 'm2', contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: 'forever' }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] }, configuration: undefined, metadata: undefined }, { signal: controller.signal })) {
      controller.abort();
    }
  })().catch(() => undefined);
  await seen;
  await new Promise((r) => setTimeout(r, 50));
  t.ok(cancelled, 'the stream started');
  await t.resolves(cancelled!, "the caller's cancel aborts the handler's sink signal");
});

t.test('TLS and mTLS listeners with a stock SDK client', async (t) => {
  const pki = await createTestPki();
  const calls: A2ACall[] = [];
  const common = { host: '127.0.0.1', port: 0, remote: 'w', handler: echoHandler(calls), maxRequestBytes: 4096, remoteExists: () => true, forwardHeadersOf: () => [] };
  const tls = await startGrpcListener({ ...common, tls: { cert: Buffer.from(pki.server.cert), key: Buffer.from(pki.server.key) } });
  const mtls = await startGrpcListener({ ...common, tls: { cert: Buffer.from(pki.server.cert), key: Buffer.from(pki.server.key), ca: Buffer.from(pki.ca.cert), requireClientCert: true } });
  t.teardown(async () => {
    await tls.close();
    await mtls.close();
  });
  const serverOnly = grpc.credentials.createSsl(Buffer.from(pki.ca.cert));
  const withClientCert = grpc.credentials.createSsl(Buffer.from(pki.ca.cert), Buffer.from(pki.client.key), Buffer.from(pki.client.cert));
  t.equal((await rawUnary(`127.0.0.1:${tls.port}`, 'SendMessage', sendRequest(), new grpc.Metadata(), serverOnly)).error, undefined, 'TLS');
  t.equal((await rawUnary(`127.0.0.1:${mtls.port}`, 'SendMessage', sendRequest(), new grpc.Metadata(), withClientCert)).error, undefined, 'mTLS with a client certificate');
  const noCert = await rawUnary(`127.0.0.1:${mtls.port}`, 'SendMessage', sendRequest(), new grpc.Metadata(), serverOnly);
  t.equal(noCert.error?.code, grpc.status.UNAVAILABLE, 'mTLS without a client certificate is refused');
  const plain = await rawUnary(`127.0.0.1:${tls.port}`, 'SendMessage', sendRequest());
  t.equal(plain.error?.code, grpc.status.UNAVAILABLE, 'cleartext to a TLS listener fails');
  t.equal(calls.length, 2);
});

t.test('the listener binds loopback by default in the harness and answers the SDK client', async (t) => {
  const calls: A2ACall[] = [];
  const listener = await startGrpcListener({ host: '127.0.0.1', port: 0, remote: 'w', handler: echoHandler(calls), maxRequestBytes: 4096, remoteExists: () => true, forwardHeadersOf: () => [] });
  t.teardown(() => listener.close());
  const sdk = await sdkGrpcClient(`127.0.0.1:${listener.port}`);
  const reply = await sendText(sdk, 'hi');
  t.match(reply, { messageId: 'a1' });
  t.same(await streamText(sdk, 'x'), []);
});
