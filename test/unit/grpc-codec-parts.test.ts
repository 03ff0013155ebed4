import t from 'tap';
import { fromBinary } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import { gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import type { ErrorOutcome } from '../../src/core/outcome.js';
import { withGrpcInterfaces } from '../../src/bindings/grpc/card-interfaces.js';
import { ErrorInfoSchema } from '../../src/bindings/grpc/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../../src/bindings/grpc/gen/google/rpc/status_pb.js';
import { allowedResponseMetadata, decodeGrpcMessage, grpcTimeout, serviceParamsFromMetadata } from '../../src/bindings/grpc/metadata.js';
import { gatewayFailure } from '../../src/bindings/grpc/response-reader.js';
import { codeOfRemoteGrpcStatus, GrpcCode, grpcCodeOf } from '../../src/bindings/grpc/status-codes.js';
import { encodeStatusDetails } from '../../src/bindings/grpc/status-details.js';
import { formatGrpcTarget, parseGrpcTarget } from '../../src/bindings/grpc/target.js';

const remoteError = (code: number, grpc?: number): ErrorOutcome => ({
  kind: 'error',
  code,
  message: 'm',
  reason: 'REMOTE_ERROR',
  metadata: {},
  details: [],
  ...(grpc !== undefined ? { remoteStatus: { grpc } } : {}),
});

t.test('gRPC status of an error outcome (spec §5.4 and the gateway reasons)', async (t) => {
  const a2a: [number, number][] = [
    [-32001, GrpcCode.NOT_FOUND],
    [-32002, GrpcCode.FAILED_PRECONDITION],
    [-32003, GrpcCode.FAILED_PRECONDITION],
    [-32004, GrpcCode.FAILED_PRECONDITION],
    [-32005, GrpcCode.INVALID_ARGUMENT],
    [-32006, GrpcCode.INTERNAL],
    [-32007, GrpcCode.FAILED_PRECONDITION],
    [-32008, GrpcCode.FAILED_PRECONDITION],
    [-32009, GrpcCode.FAILED_PRECONDITION],
    [-32700, GrpcCode.INVALID_ARGUMENT],
    [-32600, GrpcCode.INVALID_ARGUMENT],
    [-32602, GrpcCode.INVALID_ARGUMENT],
    [-32601, GrpcCode.UNIMPLEMENTED],
    [-32603, GrpcCode.INTERNAL],
  ];
  for (const [code, grpc] of a2a) t.equal(grpcCodeOf(remoteError(code)), grpc, `code ${code}`);
  t.equal(grpcCodeOf(remoteError(-32603, GrpcCode.UNAVAILABLE)), GrpcCode.UNAVAILABLE, "a remote's own status is kept");
  t.equal(grpcCodeOf(remoteError(-32001, GrpcCode.INTERNAL)), GrpcCode.NOT_FOUND, 'but never against §5.4');
  t.equal(grpcCodeOf(remoteError(-32603, 0)), GrpcCode.INTERNAL, 'OK is not an error status');
  const expected: Partial<Record<Reason, number>> = {
    UPSTREAM_TIMEOUT: GrpcCode.DEADLINE_EXCEEDED,
    STREAM_IDLE: GrpcCode.DEADLINE_EXCEEDED,
    UPSTREAM_REFUSED: GrpcCode.UNAVAILABLE,
    UPSTREAM_GOAWAY: GrpcCode.UNAVAILABLE,
    UPSTREAM_STREAM_RESET: GrpcCode.UNAVAILABLE,
    RATE_LIMITED: GrpcCode.RESOURCE_EXHAUSTED,
    UNKNOWN_REMOTE: GrpcCode.NOT_FOUND,
    UNAUTHENTICATED: GrpcCode.UNAUTHENTICATED,
    EGRESS_DENIED: GrpcCode.PERMISSION_DENIED,
    WRONG_CONTENT_TYPE: GrpcCode.INTERNAL,
    INVALID_PARAMS: GrpcCode.INVALID_ARGUMENT,
    CALLER_CLOSED: GrpcCode.CANCELLED,
  };
  for (const [reason, grpc] of Object.entries(expected)) t.equal(grpcCodeOf(gatewayFailure(reason as Reason, 'r')), grpc, reason);
  for (const reason of Object.keys(gatewayErrors) as Reason[]) {
    const code = grpcCodeOf(gatewayFailure(reason, 'r'));
    t.ok(code >= 1 && code <= 16 && code !== GrpcCode.UNKNOWN, `${reason} has a definite status`);
  }
  t.equal(codeOfRemoteGrpcStatus(GrpcCode.NOT_FOUND), -32001);
  t.equal(codeOfRemoteGrpcStatus(GrpcCode.INVALID_ARGUMENT), -32602);
  t.equal(codeOfRemoteGrpcStatus(GrpcCode.UNIMPLEMENTED), -32601);
  t.equal(codeOfRemoteGrpcStatus(GrpcCode.PERMISSION_DENIED), -32603);
});

t.test('grpc-status-details-bin for a caller: A2A ErrorInfo first, then the gateway ErrorInfo, then kept details', async (t) => {
  const error: ErrorOutcome = {
    ...gatewayFailure('INVALID_RESPONSE_MESSAGE', 'weather', { event: '3' }),
    details: [
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.500s' },
      { '@type': 'type.googleapis.com/unknown.Type', x: 1 },
    ],
  };
  const status = fromBinary(StatusSchema, encodeStatusDetails(error, GrpcCode.INTERNAL));
  t.equal(status.code, GrpcCode.INTERNAL);
  t.equal(status.message, gatewayErrors.INVALID_RESPONSE_MESSAGE.message);
  t.match(anyUnpack(status.details[0]!, ErrorInfoSchema), { reason: 'INVALID_AGENT_RESPONSE', domain: 'a2a-protocol.org' });
  t.match(anyUnpack(status.details[1]!, ErrorInfoSchema), { reason: 'INVALID_RESPONSE_MESSAGE', domain: 'a2a-egress', metadata: { remote: 'weather', event: '3' } });
  t.equal(status.details[2]?.typeUrl, 'type.googleapis.com/google.rpc.RetryInfo');
  t.equal(status.details.length, 3, 'a detail type without a descriptor is left out');
  const plain = fromBinary(StatusSchema, encodeStatusDetails(gatewayFailure('UPSTREAM_TIMEOUT', 'w'), GrpcCode.DEADLINE_EXCEEDED));
  t.equal(plain.details.length, 1, 'no A2A ErrorInfo for an error A2A does not type');
});

t.test('caller metadata → service parameters', async (t) => {
  const params = serviceParamsFromMetadata(
    {
      'a2a-version': '1.0',
      'a2a-extensions': 'https://a.example/e/v1, https://b.example/e/v2',
      traceparent: '00-abc-def-01',
      authorization: 'Bearer caller-secret',
      'x-allowed': 'yes',
      'grpc-timeout': '5S',
      'x-bin-bin': Buffer.from([1]),
      'a2a-egress-remote': 'weather',
    },
    ['x-allowed', 'grpc-timeout'],
  );
  t.same(params, {
    a2aVersion: '1.0',
    extensions: 'https://a.example/e/v1, https://b.example/e/v2',
    forwarded: { traceparent: '00-abc-def-01', 'x-allowed': 'yes' },
  });
  t.same(serviceParamsFromMetadata({ 'a2a-version': 'not a token', 'a2a-extensions': 'not a uri' }, []), { forwarded: {} }, 'invalid values are dropped');
});

t.test('remote response metadata keeps only the §10.2 keys, validated', async (t) => {
  t.same(allowedResponseMetadata({ 'a2a-version': '1.0', 'a2a-extensions': 'urn:x:y', 'x-a2a-extensions': 'urn:a:b', 'set-cookie': ['a=b'], server: 'x' }), {
    'a2a-version': '1.0',
    'a2a-extensions': 'urn:x:y',
  });
  t.same(allowedResponseMetadata({ 'a2a-version': '1.0\u0000' }), {});
});

t.test('grpc-timeout and grpc-message encodings', async (t) => {
  t.equal(grpcTimeout(250), '250m');
  t.equal(grpcTimeout(0.2), '1m');
  t.equal(grpcTimeout(99_999_999), '99999999m');
  t.equal(grpcTimeout(100_000_000), '100000S');
  t.equal(decodeGrpcMessage('a%20b%E2%9C%93%zz%'), 'a b✓%zz%');
  t.equal(decodeGrpcMessage('plain'), 'plain');
});

t.test('gRPC targets', async (t) => {
  t.match(parseGrpcTarget('127.0.0.1:50051', false), { host: '127.0.0.1', port: 50051, tls: false, authority: '127.0.0.1:50051' });
  t.match(parseGrpcTarget('agent.example.com', true), { host: 'agent.example.com', port: 443, tls: true });
  t.match(parseGrpcTarget('dns:///agent.example.com:8443', true), { host: 'agent.example.com', port: 8443 });
  t.match(parseGrpcTarget('dns:agent.example.com:8443', false), { host: 'agent.example.com', port: 8443, tls: false });
  t.match(parseGrpcTarget('grpcs://agent.example.com', false), { host: 'agent.example.com', port: 443, tls: true });
  t.match(parseGrpcTarget('http://[::1]:9000/', true), { host: '::1', port: 9000, tls: false });
  t.match(parseGrpcTarget('[::1]:9000', false), { host: '::1', port: 9000 });
  for (const bad of ['https://agent.example/a2a/grpc', 'ftp://x:1', 'host:0', 'host:70000', 'a b:1', '[zz]:1', 'https://u:p@h:1', 'unix:/tmp/sock']) {
    t.throws(() => parseGrpcTarget(bad, true), { name: 'GrpcTargetError' }, bad);
  }
  t.equal(formatGrpcTarget('::1', 8080), '[::1]:8080');
  t.equal(formatGrpcTarget('127.0.0.1', 8080), '127.0.0.1:8080');
});

t.test('card: gRPC interfaces kept, rewritten to the gateway, in the remote’s order', async (t) => {
  const remoteTarget = parseGrpcTarget('agent.example.com:443', true);
  const original = {
    supportedInterfaces: [
      { url: 'agent.example.com:443', protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: 't1' },
      { url: 'https://agent.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'evil.example.com:443', protocolBinding: 'GRPC', protocolVersion: '1.0' },
      { url: 'grpcs://agent.example.com', protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: 't1' },
    ],
  };
  const rewritten = { name: 'x', supportedInterfaces: [{ url: 'http://gw/remotes/a/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] };
  const opts = { remoteTarget, gatewayTarget: '127.0.0.1:7001', advertise: false, maxCardTextBytes: 100 };
  t.same(withGrpcInterfaces(original, rewritten, '1.0', opts).supportedInterfaces, [
    { url: '127.0.0.1:7001', protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: 't1' },
    { url: 'http://gw/remotes/a/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
  ], 'same-target entries kept once, other endpoints dropped, gRPC first as the remote had it');
  const jsonFirst = { supportedInterfaces: [original.supportedInterfaces[1], original.supportedInterfaces[0]] };
  t.equal((withGrpcInterfaces(jsonFirst, rewritten, '1.0', opts).supportedInterfaces as { protocolBinding: string }[])[0]?.protocolBinding, 'JSONRPC');
  t.same(withGrpcInterfaces({ supportedInterfaces: [original.supportedInterfaces[1]] }, rewritten, '1.0', opts), rewritten, 'no gRPC, not advertised: unchanged');
  t.same(
    (withGrpcInterfaces({ supportedInterfaces: [original.supportedInterfaces[1]] }, rewritten, '1.0', { ...opts, advertise: true, remoteTarget: undefined }).supportedInterfaces as unknown[]).at(-1),
    { url: '127.0.0.1:7001', protocolBinding: 'GRPC', protocolVersion: '1.0' },
    'advertised for a remote without gRPC',
  );
  const v03 = { url: 'https://agent.example.com/a2a', preferredTransport: 'JSONRPC', additionalInterfaces: [{ url: 'agent.example.com:443', transport: 'GRPC' }] };
  t.same(withGrpcInterfaces(v03, { url: 'http://gw/remotes/a/', preferredTransport: 'JSONRPC' }, '0.3', opts).additionalInterfaces, [
    { url: 'http://gw/remotes/a/', transport: 'JSONRPC' },
    { url: '127.0.0.1:7001', transport: 'GRPC' },
  ]);
});
