import t from 'tap';
import { Code, gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import {
  A2A_ERRORS,
  a2aReasonOfCode,
  codeOfA2aReason,
  codeOfRemoteStatus,
  GRPC_CODE,
  grpcCodeName,
  REASON_STATUS,
  statusOfCode,
  statusOfError,
} from '../../src/bindings/status-map.js';
import { gatewayErrorOutcome } from '../../src/bindings/error-outcome.js';

t.test('spec §5.4: every A2A error has its HTTP status, gRPC code and ErrorInfo reason', async (t) => {
  const table: [number, string, number, string][] = [
    [-32001, 'TASK_NOT_FOUND', 404, 'NOT_FOUND'],
    [-32002, 'TASK_NOT_CANCELABLE', 400, 'FAILED_PRECONDITION'],
    [-32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED', 400, 'FAILED_PRECONDITION'],
    [-32004, 'UNSUPPORTED_OPERATION', 400, 'FAILED_PRECONDITION'],
    [-32005, 'CONTENT_TYPE_NOT_SUPPORTED', 400, 'INVALID_ARGUMENT'],
    [-32006, 'INVALID_AGENT_RESPONSE', 500, 'INTERNAL'],
    [-32007, 'EXTENDED_AGENT_CARD_NOT_CONFIGURED', 400, 'FAILED_PRECONDITION'],
    [-32008, 'EXTENSION_SUPPORT_REQUIRED', 400, 'FAILED_PRECONDITION'],
    [-32009, 'VERSION_NOT_SUPPORTED', 400, 'FAILED_PRECONDITION'],
  ];
  t.equal(A2A_ERRORS.size, table.length);
  for (const [code, reason, http, grpc] of table) {
    t.same(statusOfCode(code), { http, grpc }, String(code));
    t.equal(a2aReasonOfCode(code), reason);
    t.equal(codeOfA2aReason(reason), code);
  }
  t.equal(codeOfA2aReason('INVALID_PARAMS'), Code.InvalidParams, "the SDK's RequestMalformedError");
  t.equal(codeOfA2aReason('NOPE'), undefined);
  t.equal(a2aReasonOfCode(-32602), undefined);
});

t.test('standard JSON-RPC codes and unknown codes', async (t) => {
  t.same(statusOfCode(-32700), { http: 400, grpc: 'INVALID_ARGUMENT' });
  t.same(statusOfCode(-32600), { http: 400, grpc: 'INVALID_ARGUMENT' });
  t.same(statusOfCode(-32601), { http: 404, grpc: 'UNIMPLEMENTED' });
  t.same(statusOfCode(-32602), { http: 400, grpc: 'INVALID_ARGUMENT' });
  t.same(statusOfCode(-32603), { http: 500, grpc: 'INTERNAL' });
  t.same(statusOfCode(-32000), { http: 500, grpc: 'UNKNOWN' });
  t.same(statusOfCode(42), { http: 500, grpc: 'UNKNOWN' });
});

t.test('every gateway reason maps to an error status and a gRPC code; the families are consistent', async (t) => {
  for (const reason of Object.keys(gatewayErrors) as Reason[]) {
    const s = REASON_STATUS[reason];
    t.ok(s, reason);
    t.ok((s.http >= 400 && s.http <= 599) || s.http === 499, `${reason} http ${s.http}`);
    t.not(GRPC_CODE[s.grpc], 0, `${reason} is not OK`);
    const code = gatewayErrors[reason].code;
    // A reason of an A2A code shows that code's family: a bad remote reply is an upstream (5xx) problem.
    if (code === Code.InvalidAgentResponse) t.equal(s.http, 502, `${reason}: a malformed remote reply is 502`);
    if (code === Code.InvalidRequest || code === Code.ParseError || code === Code.InvalidParams) t.ok(s.http >= 400 && s.http < 500, `${reason}: the caller's mistake is 4xx`);
  }
  t.same(REASON_STATUS.UPSTREAM_TIMEOUT, { http: 504, grpc: 'DEADLINE_EXCEEDED' });
  t.same(REASON_STATUS.RATE_LIMITED, { http: 429, grpc: 'RESOURCE_EXHAUSTED' });
  t.same(REASON_STATUS.OVERLOADED, { http: 503, grpc: 'UNAVAILABLE' });
  t.same(REASON_STATUS.UPSTREAM_REFUSED, { http: 502, grpc: 'UNAVAILABLE' });
  t.same(REASON_STATUS.HTTP_METHOD_NOT_ALLOWED, { http: 405, grpc: 'UNIMPLEMENTED' });
});

t.test('statusOfError: reasons are fixed; a remote error keeps its own status of the same class', async (t) => {
  const remote = (code: number, remoteStatus?: { http?: number; grpc?: number }) => ({ reason: 'REMOTE_ERROR' as const, code, ...(remoteStatus ? { remoteStatus } : {}) });
  t.same(statusOfError(gatewayErrorOutcome('UPSTREAM_TIMEOUT'), 'http+json'), { http: 504, grpc: 'DEADLINE_EXCEEDED' });
  t.same(statusOfError(remote(-32001), 'http+json'), { http: 404, grpc: 'NOT_FOUND' });
  t.same(statusOfError(remote(-32002, { http: 409 }), 'http+json'), { http: 409, grpc: 'FAILED_PRECONDITION' }, 'a 409 stays');
  t.same(statusOfError(remote(-32001, { http: 500 }), 'http+json'), { http: 404, grpc: 'NOT_FOUND' }, 'a 5xx for a 4xx error does not');
  t.same(statusOfError(remote(-32001, { http: 200 }), 'http+json'), { http: 404, grpc: 'NOT_FOUND' }, 'a 2xx is no error status');
  t.same(statusOfError(remote(-32603, { http: 503 }), 'http+json'), { http: 503, grpc: 'INTERNAL' });
  t.same(statusOfError(remote(-32004, { grpc: 12 }), 'grpc'), { http: 400, grpc: 'UNIMPLEMENTED' });
  t.same(statusOfError(remote(-32004, { grpc: 0 }), 'grpc'), { http: 400, grpc: 'FAILED_PRECONDITION' });
  t.same(statusOfError(remote(-32004, { http: 404 }), 'grpc'), { http: 400, grpc: 'FAILED_PRECONDITION' }, 'an HTTP status is not a gRPC one');
});

t.test('a remote status without an A2A ErrorInfo maps to exact equivalents only', async (t) => {
  t.equal(codeOfRemoteStatus(400), Code.InvalidParams);
  t.equal(codeOfRemoteStatus(404), Code.InternalError);
  t.equal(codeOfRemoteStatus(405), Code.MethodNotFound);
  t.equal(codeOfRemoteStatus(501), Code.MethodNotFound);
  t.equal(codeOfRemoteStatus(503), Code.InternalError);
  t.equal(codeOfRemoteStatus(400, 'FAILED_PRECONDITION'), Code.InternalError, 'the status name is more precise than 400');
  t.equal(codeOfRemoteStatus(500, 'INVALID_ARGUMENT'), Code.InvalidParams);
  t.equal(codeOfRemoteStatus(404, 'UNIMPLEMENTED'), Code.MethodNotFound);
  t.equal(codeOfRemoteStatus(400, 'NOT_A_CODE'), Code.InvalidParams, 'an unknown name falls back to the status');
  t.equal(grpcCodeName(5), 'NOT_FOUND');
  t.equal(grpcCodeName(17), undefined);
});

t.test('gatewayErrorOutcome: catalogue text and code, metadata as strings, A2A ErrorInfo for A2A codes', async (t) => {
  const e = gatewayErrorOutcome('UPSTREAM_HTTP_ERROR', { remote: 'r', httpStatus: 500, metadata: { cause: 'INVALID_JSON', event: 3 } }, 'HTTP 500');
  t.same(e, {
    kind: 'error',
    code: -32006,
    message: `${gatewayErrors.UPSTREAM_HTTP_ERROR.message}: HTTP 500`,
    reason: 'UPSTREAM_HTTP_ERROR',
    metadata: { remote: 'r', httpStatus: '500', cause: 'INVALID_JSON', event: '3' },
    a2a: { reason: 'INVALID_AGENT_RESPONSE', metadata: {} },
    details: [],
  });
  const g = gatewayErrorOutcome('RATE_LIMITED', { headers: { 'retry-after': '2' } });
  t.equal(g.a2a, undefined, '-32603 has no A2A ErrorInfo');
  t.same(g.headers, { 'retry-after': '2' });
});
