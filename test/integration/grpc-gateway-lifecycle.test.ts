/**
 * The gateway's gRPC listeners around the calls: caller authentication
 * (`server.auth` on the `authorization` metadata), TLS and mTLS
 * (`server.grpc.tls`), and the drain: on close, open streams end with
 * GATEWAY_SHUTDOWN at once, unary calls still running get it when drainMs is
 * up, and new calls are refused.
 */
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { ClientFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { startSdkGrpcUpstream } from '../support/grpc-peers.js';
import { replyText, sendText, taskIdOf } from '../support/sdk-client.js';
import { sdkGrpcClientOf, startGrpcGateway } from '../support/grpc-gateway.js';
import { createTestPki } from '../support/tls.js';
import { tempDir } from '../support/temp-dir.js';

const upstream = await startSdkGrpcUpstream({ stepDelayMs: 5 });
t.teardown(() => upstream.close());

const remoteYaml = `
remotes:
  agent:
    url: http://127.0.0.1:1/
    allowPrivateNetwork: true
    grpc: { target: "${upstream.target}", listen: { port: 0 } }`;

t.test('server.auth: a gRPC caller without an accepted bearer token is UNAUTHENTICATED', async (t) => {
  const gw = await startGrpcGateway(`server: { host: 127.0.0.1, port: 0, auth: { type: bearer, tokensEnv: GW_CALLERS } }${remoteYaml}`, { GW_CALLERS: 'caller-token-1,caller-token-2' });
  t.teardown(() => gw.close());
  const sdk = await sdkGrpcClientOf(gw.grpc.remotes.agent!, upstream.card);
  const refused = await sendText(sdk, 'hi').catch((e: unknown) => e);
  t.match(refused, { status: grpc.status.UNAUTHENTICATED, message: /not authenticated/ });
  t.match(gw.calls().at(-1), { remote: 'agent', binding: 'grpc', outcome: 'UNAUTHENTICATED' });
  const wrong = await sendText(sdk, 'hi', { serviceParameters: { authorization: 'Bearer nope' } }).catch((e: unknown) => e);
  t.match(wrong, { status: grpc.status.UNAUTHENTICATED });
  const ok = await sendText(sdk, 'hi', { serviceParameters: { authorization: 'Bearer caller-token-2' } });
  t.equal(replyText(ok), 'echo: hi');
  t.equal(upstream.received.at(-1)!.get('authorization').length, 0, 'the caller’s token is not forwarded');
});

t.test('server.grpc.tls with requireClientCert: mTLS callers only', async (t) => {
  const pki = await createTestPki();
  const dir = tempDir('a2a-egress-grpc-tls-');
  writeFileSync(join(dir, 'server.pem'), pki.server.cert);
  writeFileSync(join(dir, 'server.key'), pki.server.key);
  const gw = await startGrpcGateway(`
server:
  host: 127.0.0.1
  port: 0
  grpc: { tls: { certFile: ${join(dir, 'server.pem')}, keyFile: ${join(dir, 'server.key')}, caFile: ${pki.files.caFile}, requireClientCert: true } }${remoteYaml}`);
  t.teardown(() => gw.close());
  t.match(gw.logs.find((l) => l.msg === 'gRPC listener bound'), { tls: true });
  const target = gw.grpc.remotes.agent!;
  const card = { ...upstream.card, supportedInterfaces: [{ url: target, protocolBinding: 'GRPC', tenant: '', protocolVersion: '1.0' }] };
  const withCert = await new ClientFactory({
    transports: [new GrpcTransportFactory({ grpcChannelCredentials: grpc.credentials.createSsl(Buffer.from(pki.ca.cert), Buffer.from(pki.client.key), Buffer.from(pki.client.cert)) })],
  }).createFromAgentCard(card);
  t.equal(replyText(await sendText(withCert, 'over mtls')), 'echo: over mtls');
  const noCert = await new ClientFactory({
    transports: [new GrpcTransportFactory({ grpcChannelCredentials: grpc.credentials.createSsl(Buffer.from(pki.ca.cert)) })],
  }).createFromAgentCard(card);
  const refused = await sendText(noCert, 'no cert').catch((e: unknown) => e);
  t.match(refused, { status: grpc.status.UNAVAILABLE }, 'the handshake fails without a client certificate');
  const cleartext = await sdkGrpcClientOf(target, upstream.card);
  t.match(await sendText(cleartext, 'plain').catch((e: unknown) => e), { status: grpc.status.UNAVAILABLE }, 'no cleartext');
});

t.test('drain: streams end with GATEWAY_SHUTDOWN, unary calls get it at drainMs, new calls are refused', async (t) => {
  const gw = await startGrpcGateway(`server: { host: 127.0.0.1, port: 0, drainMs: 300 }${remoteYaml}`);
  const sdk = await sdkGrpcClientOf(gw.grpc.remotes.agent!, upstream.card);
  const message = (id: string) => ({
    tenant: '',
    message: { messageId: id, contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text' as const, value: 'wait here' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: undefined,
    metadata: undefined,
  });
  const stream = sdk.sendMessageStream(message('m-stream'));
  const first = await stream.next();
  t.ok(taskIdOf(first.value!), 'the stream is open');
  // A unary call on a task that waits: it is still running when the gateway starts to close.
  const unary = sdk.sendMessage(message('m-unary')).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 100));
  const started = performance.now();
  const closed = gw.close();
  // Events already on their way may come first; the stream then ends with the error.
  let streamEnd: unknown;
  for (;;) {
    const next = await stream.next().catch((e: unknown) => e);
    if (next instanceof Error || (next as IteratorResult<unknown>).done) {
      streamEnd = next;
      break;
    }
  }
  t.match(streamEnd, { status: grpc.status.UNAVAILABLE, message: /gateway is shutting down/ }, 'the stream ends with GATEWAY_SHUTDOWN');
  const unaryEnd = await unary;
  t.match(unaryEnd, { status: grpc.status.UNAVAILABLE, message: /gateway is shutting down/ }, 'the unary call answers GATEWAY_SHUTDOWN');
  t.ok(performance.now() - started >= 250, 'not before drainMs');
  await closed;
  const outcomes = gw.calls().map((c) => [c.method, c.outcome]);
  t.same(outcomes.slice(-2).sort(), [['SendMessage', 'GATEWAY_SHUTDOWN'], ['SendStreamingMessage', 'GATEWAY_SHUTDOWN']]);
  const after = await sendText(sdk, 'too late').catch((e: unknown) => e);
  t.match(after, { status: grpc.status.UNAVAILABLE }, 'a call after close is refused');
});
