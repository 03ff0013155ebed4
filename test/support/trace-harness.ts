/**
 * Drives the telemetry API the way the call path will (request in, call
 * understood, one handle per upstream attempt with retries, the stream's
 * events, the reply out), against a real upstream on 127.0.0.1 that records
 * the trace headers it received. Until the call path is wired to it, this is
 * how the tracing layer is tested end to end; the wiring test replaces it.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { OPERATIONS, type OperationName, type ProtocolGeneration } from '../../src/a2a/operations.js';
import type { A2ACall, Binding } from '../../src/core/call.js';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../../src/core/outcome.js';
import { gatewayErrors, type Reason } from '../../src/envelope/codes.js';
import type { Ending } from '../../src/telemetry/channels.js';
import type { CallTelemetry, Telemetry } from '../../src/telemetry/tracing.js';
import { trackConnections } from './servers.js';

/** What the upstream does with one request: answer, or cut the connection. */
export type UpstreamPlan = { readonly status: number; readonly body?: string } | 'reset';

export interface PlannedUpstream {
  readonly url: URL;
  /** Headers of every request received, in order. */
  readonly received: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/** An upstream that answers the n-th request with `plans[n]` (the last plan repeats). */
export async function startPlannedUpstream(plans: readonly UpstreamPlan[], path = '/a2a'): Promise<PlannedUpstream> {
  const received: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    received.push(req.headers);
    const plan = plans[Math.min(received.length - 1, plans.length - 1)] ?? { status: 200 };
    req.resume();
    req.on('end', () => {
      if (plan === 'reset') {
        req.socket.destroy();
        return;
      }
      res.writeHead(plan.status, { 'content-type': 'application/json' });
      res.end(plan.body ?? '');
    });
  });
  const connections = trackConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}${path}`),
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        void connections.destroyAll();
      }),
  };
}

export function a2aCall(operation: OperationName, generation: ProtocolGeneration = '1.0', binding: Binding = 'jsonrpc'): A2ACall {
  return {
    remote: 'weather',
    operation: OPERATIONS[operation],
    generation,
    paramsJson: '{}',
    params: {},
    service: { forwarded: {} },
    caller: { binding, requestId: 'req-1' },
  };
}

export const result = (value: unknown): ResultOutcome => ({ kind: 'result', json: JSON.stringify(value), value });

export function gatewayError(reason: Reason, message?: string): ErrorOutcome {
  const spec = gatewayErrors[reason];
  return { kind: 'error', code: spec.code, message: message ?? spec.message, reason, metadata: {}, details: [] };
}

export function remoteError(code: number, message: string): ErrorOutcome {
  return { kind: 'error', code, message, reason: 'REMOTE_ERROR', metadata: {}, details: [] };
}

export interface CallerSide {
  readonly remote?: string;
  readonly binding?: Binding;
  readonly requestId?: string;
  readonly traceparent?: string;
  readonly tracestate?: string;
}

export interface UnaryRun {
  readonly trace: CallTelemetry | undefined;
  readonly outcome: Outcome;
  readonly attempts: number;
}

const RETRYABLE_STATUS = new Set([502, 503, 504]);

/**
 * One unary call: up to `maxAttempts` attempts (retrying a reset or a 502/503/504, as the gateway does for read-only
 * operations), the trace headers sent upstream as the call path must (the attempt's when traces are on, else the
 * caller's), and the reply's JSON-RPC result or error as the Outcome.
 */
export async function runUnaryCall(
  telemetry: Telemetry,
  caller: CallerSide,
  call: A2ACall,
  upstream: PlannedUpstream,
  maxAttempts = 1,
): Promise<UnaryRun> {
  const started = performance.now();
  const trace = telemetry.active
    ? telemetry.startCall({
        remote: caller.remote ?? call.remote,
        binding: caller.binding ?? call.caller.binding,
        requestId: caller.requestId ?? call.caller.requestId,
        traceparent: caller.traceparent,
        tracestate: caller.tracestate,
        startTime: started,
      })
    : undefined;
  trace?.setCall(call);
  let outcome: Outcome = gatewayError('UPSTREAM_UNREACHABLE');
  let attempts = 0;
  for (let n = 1; n <= maxAttempts; n++) {
    attempts = n;
    const attempt = trace?.upstreamStart({ attempt: n, binding: 'jsonrpc', url: upstream.url, method: 'POST' });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const traceparent = attempt?.traceparent ?? caller.traceparent;
    const tracestate = attempt ? attempt.tracestate : caller.tracestate;
    if (traceparent !== undefined) headers.traceparent = traceparent;
    if (tracestate !== undefined) headers.tracestate = tracestate;
    try {
      const res = await request(upstream.url, { method: 'POST', headers, body: '{}' });
      const text = await res.body.text();
      attempt?.end({ status: res.statusCode });
      if (RETRYABLE_STATUS.has(res.statusCode) && n < maxAttempts) continue;
      outcome = outcomeOf(res.statusCode, text);
    } catch {
      attempt?.end({ reason: 'UPSTREAM_RESET' });
      outcome = gatewayError('UPSTREAM_RESET');
      if (n < maxAttempts) continue;
    }
    break;
  }
  trace?.end(outcome);
  return { trace, outcome, attempts };
}

function outcomeOf(status: number, text: string): Outcome {
  if (status >= 400) return gatewayError('UPSTREAM_HTTP_ERROR');
  const body = JSON.parse(text) as { result?: unknown; error?: { code: number; message: string } };
  if (body.error) return remoteError(body.error.code, body.error.message);
  return result(body.result);
}

export interface StreamScript {
  /** Event payloads the relay writes, in order. */
  readonly events: readonly unknown[];
  /** How the relay ended. */
  readonly ending: Ending;
  /** The final error event, when the stream ended with one. */
  readonly finalError?: ErrorOutcome;
  readonly bytes?: number;
}

/** One streaming call: one attempt that answers 200 (an event stream), then the relay's events and ending. */
export async function runStreamCall(
  telemetry: Telemetry,
  caller: CallerSide,
  call: A2ACall,
  upstream: PlannedUpstream,
  script: StreamScript,
): Promise<CallTelemetry | undefined> {
  const trace = telemetry.active
    ? telemetry.startCall({
        remote: caller.remote ?? call.remote,
        binding: caller.binding ?? call.caller.binding,
        requestId: caller.requestId ?? call.caller.requestId,
        traceparent: caller.traceparent,
        tracestate: caller.tracestate,
      })
    : undefined;
  trace?.setCall(call);
  const attempt = trace?.upstreamStart({ attempt: 1, binding: 'jsonrpc', url: upstream.url });
  const headers: Record<string, string> = {};
  const traceparent = attempt?.traceparent ?? caller.traceparent;
  if (traceparent !== undefined) headers.traceparent = traceparent;
  const res = await request(upstream.url, { method: 'POST', headers, body: '{}' });
  await res.body.text();
  attempt?.end({ status: res.statusCode });
  const stream = trace?.streamStart();
  for (const value of script.events) stream?.event(result(value));
  stream?.end({ ending: script.ending, bytes: script.bytes });
  trace?.end(script.finalError);
  return trace;
}
