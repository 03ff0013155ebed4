/**
 * One unary call: admission (breaker, rate, concurrency), the upstream
 * request with a real total deadline, safe retries for read-only methods,
 * a capped read, normalization, and the breaker's verdict.
 */
import { performance } from 'node:perf_hooks';
import type { CallReply, CallRequest } from '../jsonrpc/call-io.js';
import type { RemoteConfig } from '../config/schema.js';
import type { MethodInfo } from '../a2a/methods.js';
import type { CallerGeneration } from '../envelope/codes.js';
import type { Normalized } from '../envelope/normalize.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';
import { callerHeadersOf } from './call-runner.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import { withRetries } from '../policy/retry.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import { callTraceOf, tracedAttempt } from '../telemetry/call-trace.js';
import { applyVerdict, breakerVerdict, type BreakerVerdict } from '../upstream/breaker-verdict.js';
import { CallAbort } from '../upstream/call-abort.js';
import { classifyTransportError } from '../upstream/errors.js';
import { sendUnary, type UnaryResponse } from '../upstream/unary-exchange.js';
import type { CallLog, GatewayContext } from './context.js';
import { recordUpstreamDuration, sendEnvelope } from './reply.js';
import { failedCallReply } from './limits.js';
import { RETRYABLE, normalizeUpstreamReply, readUpstreamBody, type ResultRewrite } from './upstream-reply.js';
import { upstreamHeaders } from './upstream-request.js';
import { bridgeReply, reportDropped, withUpstreamVersion, type VersionBridge } from './version-bridge.js';

export type { ResultRewrite } from './upstream-reply.js';

/** What a trace records of an attempt: made only for a traced call or a retried one, never on the plain path. */
function attemptRecord(n: number, path: string, remoteUrl: URL, headers: Record<string, string>) {
  return { n, url: () => new URL(path, remoteUrl), headers };
}

export async function unaryCall(
  ctx: GatewayContext,
  request: CallRequest,
  reply: CallReply,
  target: { remote: RemoteConfig; runtime: RemoteRuntime; call: CallerRequest; info: MethodInfo; path: string; caller: CallerGeneration; bridge?: VersionBridge | undefined },
  log: CallLog,
  started: number,
  rewriteResult?: ResultRewrite,
): Promise<void> {
  const { remote, runtime, call, info, path, caller, bridge } = target;
  // One abort point: the total and headers deadlines (shared timer queues), the caller leaving, the drain's end.
  const abort = new CallAbort();
  const deadlineAt = Date.now() + remote.timeouts.totalMs;
  abort.startTotal(remote.timeouts.totalMs);
  abort.watchCaller(reply.raw);
  // Shutdown's drainMs is up: answer GATEWAY_SHUTDOWN now rather than have the socket cut.
  abort.watchDrain(ctx.drainEnd);
  const onInternalError = (err: unknown) =>
    reportInternalError(request.log, ctx.metrics.internalErrors, 'call', err, { requestId: request.id, remote: remote.name });

  let release: (() => void) | undefined;
  const lease = ctx.budget.lease();
  let normalized: Normalized;
  let responseHeaders: Record<string, string> = {};
  let verdict: BreakerVerdict = 'none';
  // The outer try gives back what the call held however it ends, the answer written or not.
  try {
    try {
      // The signal is made only if the call has to wait in the concurrency queue. Usually admitted at once: no tick.
      const admitted = runtime.admit(() => abort.signal);
      release = typeof admitted === 'function' ? admitted : await admitted;
      const headers = withUpstreamVersion(upstreamHeaders(ctx, request, remote, runtime, false), bridge);
      const upstreamStarted = performance.now();
      // undici's own headersTimeout ticks coarsely (~500 ms); this one is exact. It stays a backstop in the pool.
      abort.startHeaders(remote.timeouts.headersMs);
      const trace = callTraceOf(reply);
      const limits = { maxBytes: remote.limits.maxResponseBytes, hold: lease };
      const send = (sent: Record<string, string>) => sendUnary(ctx.pools.get(remote), { path, method: 'POST', headers: sent, body: call.raw }, limits, abort);
      let res: UnaryResponse;
      // Only read-only methods are ever retried.
      if (info.readOnly && remote.retries.attempts > 1) {
        log.attempts = 0;
        const attempt = () => {
          log.attempts = (log.attempts ?? 0) + 1;
          return tracedAttempt(trace, attemptRecord(log.attempts, path, remote.url, headers), classifyTransportError, send);
        };
        res = await withRetries(
          attempt,
          // Object.assign, not a spread followed by members (a hidden class per call in V8).
          Object.assign({}, remote.retries, { deadline: deadlineAt, signal: abort.signal, isRetryable: (err: unknown) => RETRYABLE.has(classifyTransportError(err)) }),
        );
      } else {
        // The usual call: one attempt, and without a trace no attempt record either.
        log.attempts = 1;
        res = await (trace === undefined ? send(headers) : tracedAttempt(trace, attemptRecord(1, path, remote.url, headers), classifyTransportError, send));
      }
      abort.stopHeaders();
      recordUpstreamDuration(ctx, remote.name, log, upstreamStarted);
      log.upstreamStatus = res.statusCode;
      responseHeaders = callerHeadersOf(res, runtime, log);
      const redactor = runtime.redactor();
      // Usually the body came with the head: no promise, no tick.
      const body = readUpstreamBody(res);
      const read = body instanceof Promise ? await body : body;
      normalized = normalizeUpstreamReply(request, res, read, { remote, call, caller, redactor, onInternalError, keepBytes: bridge === undefined }, rewriteResult);
      if (bridge) normalized = bridgeReply(bridge, normalized, { remote: remote.name, caller, maxBytes: remote.limits.maxResponseBytes, onDropped: (direction, labels) => reportDropped(ctx.metrics, request.log, request.id, remote.name, bridge, direction, labels) });
      if (normalized.redactions) log.redactions = (log.redactions ?? 0) + normalized.redactions;
      verdict = breakerVerdict(res.statusCode, normalized.outcome);
    } catch (err) {
      const failed = failedCallReply(err, { id: call.id, remote: remote.name, caller, requestId: request.id }, { log: request.log, onInternalError, what: 'upstream call failed' });
      normalized = failed.normalized;
      if (failed.headers) responseHeaders = failed.headers;
      if (failed.verdict) verdict = failed.verdict;
    }
    // The caller's answer first; then the call gives back what it held and feeds the breaker: no part of the latency a
    // caller waits for.
    sendEnvelope(ctx, reply, normalized, log, started, responseHeaders);
  } finally {
    abort.finish();
    release?.();
    lease.release();
    applyVerdict(runtime.breaker, verdict);
  }
}
