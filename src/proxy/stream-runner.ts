/**
 * One streaming call through the remote's codec (SendStreamingMessage,
 * SubscribeToTask): admission, the upstream request, then either the SSE
 * relay (the remote started an event stream; each event read by the remote's
 * codec and written by the caller's, every stream bound and timer of the
 * JSON-RPC relay) or one Outcome (it did not: an error before any event, an
 * HTML page, a JSON error where a stream was asked, or the gateway failed
 * before the remote answered). The concurrency slot is held for the
 * stream's whole life.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import type { Reason } from '../envelope/codes.js';
import { LimitError } from '../policy/limit-error.js';
import type { CallLog } from './context.js';
import { relayStream } from '../stream/relay.js';
import { applyVerdict, breakerVerdict, type BreakerVerdict } from '../upstream/breaker-verdict.js';
import { CallAbort } from '../upstream/call-abort.js';
import { classifyTransportError, describeForLog } from '../upstream/errors.js';
import { sendExchange, type UpstreamResponse } from '../upstream/exchange.js';
import { headerValue } from '../upstream/read-body.js';
import type { A2ACall } from '../core/call.js';
import {
  callerHeadersOf,
  codecPolicyOf,
  finishOutcome,
  limitResult,
  readReply,
  upstreamHeadersOf,
  type RunResult,
  type RunTarget,
  type RunnerEnv,
} from './call-runner.js';
import { ItemRelayCore } from '../core/item-relay-core.js';
import { traceStreamEnd, traceStreamEvent, traceStreamStart, tracedAttempt } from '../telemetry/call-trace.js';
import type { StreamItem } from '../core/outcome.js';
import { recordRelayedStream, recordUpstreamDuration } from './reply.js';

/** The caller's side of a relayed stream. */
export interface StreamCaller {
  /** One item in the caller's binding (the exact SSE text). */
  readonly write: (item: StreamItem) => string;
  /** Extra response headers (x-request-id). */
  readonly headers: Readonly<Record<string, string>>;
  /** Called once, just before the relay takes the caller's socket (e.g. Fastify's reply.hijack()). */
  readonly takeOver: () => void;
}

/** `relayed`: the stream was written to the caller (log fields set); else `result` is the one reply to send. */
export type StreamRun = { readonly relayed: true } | { readonly relayed: false; readonly result: RunResult };

export async function runStream(env: RunnerEnv, target: RunTarget, call: A2ACall, log: CallLog, caller: StreamCaller): Promise<StreamRun> {
  const { ctx, out } = env;
  const { remote, runtime, codec } = target;
  const built = codec.request(call, target.base);
  if (!built.ok) return { relayed: false, result: { outcome: built.error, headers: {} } };

  // One abort point (upstream/call-abort.ts): the headers and total deadlines (shared timer queues), the caller
  // leaving, the drain's end. The upstream exchange is its target; a signal is made only for a wait in the concurrency queue.
  const abort = new CallAbort();
  // Until the relay takes over (its own timers bound the stream), the headers wait and a non-stream body are bounded.
  abort.startTotal(remote.timeouts.totalMs);
  abort.startHeaders(Math.min(remote.timeouts.headersMs, remote.timeouts.totalMs));
  abort.watchCaller(out);
  abort.watchDrain(ctx.drainEnd);

  let release: (() => void) | undefined;
  const lease = ctx.budget.lease();
  let run: StreamRun;
  let verdict: BreakerVerdict = 'none';
  let upstreamRes: UpstreamResponse | undefined;
  try {
    release = await runtime.admit(() => abort.signal);
    const upstreamStarted = performance.now();
    const upstream = { n: 1, url: () => new URL(built.request.path, target.base), headers: upstreamHeadersOf(env, target, built.request, true), binding: target.codec.binding, method: built.request.method };
    const streamIf = (status: number, headers: IncomingHttpHeaders) => codec.isEventStream(status, headerValue(headers['content-type']));
    const res = (upstreamRes = await tracedAttempt(env.trace, upstream, classifyTransportError, (sent) =>
      sendExchange(ctx.pools.get(remote), { path: built.request.path, method: built.request.method, headers: sent, body: built.request.body ?? null }, { limits: { maxBytes: remote.limits.maxResponseBytes, hold: lease }, streamIf }, abort),
    ));
    abort.stopHeaders();
    recordUpstreamDuration(ctx, remote.name, log, upstreamStarted);
    log.upstreamStatus = res.statusCode;
    const responseHeaders = callerHeadersOf(res, runtime, log);
    const policy = codecPolicyOf(remote);
    const body = res.stream;
    if (body === undefined) {
      const outcome = await readReply(env, target, res, (reply) => codec.streamBody(call, reply, policy));
      verdict = breakerVerdict(res.statusCode, outcome.kind === 'error' ? outcome.reason : 'ok');
      // Redacted like a unary reply: a remote may echo its credential in an error (or a single result) as well as in events.
      run = { relayed: false, result: { outcome: finishOutcome(env, target, outcome, log), headers: responseHeaders } };
    } else {
      abort.stopTotal();
      lease.release();
      const httpStatus = res.statusCode;
      const stopError = (reason: Reason, detail?: string) => env.gatewayError(reason, { remote: remote.name, httpStatus }, detail);
      const core = new ItemRelayCore(
        { callerId: null, remote, httpStatus },
        {
          read: (event, index) => codec.event(call, event, policy, httpStatus, index),
          write: caller.write,
          stopError,
          // Asked per event: a token file that rotates during a long stream is redacted from the events after it.
          redactor: runtime.credentials ? () => runtime.redactor() : undefined,
          rewrite: target.rewriteItem,
        },
      );
      caller.takeOver();
      ctx.metrics.openStreams.inc({ remote: remote.name });
      const trace = traceStreamStart(env.trace);
      const relayed = await relayStream(
        { statusCode: res.statusCode, headers: res.headers, body },
        {
          callerId: null,
          remote,
          out,
          headers: Object.assign({}, responseHeaders, caller.headers),
          shutdown: ctx.shutdown,
          onInternalError: env.onInternalError,
          abortUpstream: () => body.destroy(),
          buffer: ctx.budget.lease(),
          core,
          ...(trace ? { onEvent: (event) => traceStreamEvent(trace, event, 'result') } : {}),
        },
      ).finally(() => ctx.metrics.openStreams.dec({ remote: remote.name }));
      traceStreamEnd(trace, relayed);
      recordRelayedStream(ctx, remote.name, log, relayed);
      verdict = breakerVerdict(res.statusCode, relayed.outcome);
      run = { relayed: true };
    }
  } catch (err) {
    if (err instanceof LimitError) run = { relayed: false, result: limitResult(env, remote.name, err) };
    else {
      const reason = classifyTransportError(err);
      if (reason === 'GATEWAY_ERROR') env.onInternalError(err);
      else env.logger.debug({ requestId: env.requestId, err: describeForLog(err) }, 'upstream stream call failed');
      verdict = breakerVerdict(undefined, reason);
      run = { relayed: false, result: { outcome: env.gatewayError(reason, { remote: remote.name }), headers: {} } };
    }
  } finally {
    // A stream head the relay never took (something failed in between) must not hold its socket paused.
    upstreamRes?.stream?.destroy();
    abort.finish();
    release?.();
    lease.release();
  }
  applyVerdict(runtime.breaker, verdict);
  return run;
}
