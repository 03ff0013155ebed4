/**
 * The binding-neutral call runner: one A2ACall → the remote through its
 * upstream codec → one Outcome (./stream-runner.ts: or a relayed stream),
 * with the same policy the JSON-RPC path applies: admission (breaker, rate,
 * concurrency), the remote's credentials, the per-remote pool with its egress
 * guard, a real total deadline and an exact headers deadline, safe retries
 * for read-only operations, the capped decoded read, validateResults,
 * secret redaction, the breaker's verdict, upstream latency and the call's
 * log fields. It never sees a wire format: the codec does, and the caller's
 * codec writes what it returns. No Fastify here.
 */
import { performance } from 'node:perf_hooks';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { checkResult } from '../a2a/result-validate.js';
import type { RemoteConfig } from '../config/schema.js';
import type { Reason } from '../envelope/codes.js';
import { normalizePolicyOf } from '../envelope/normalize.js';
import { filterUpstreamResponseHeaders } from '../policy/header-policy.js';
import { LimitError } from '../policy/limit-error.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import { withRetries } from '../policy/retry.js';
import type { CallLog, GatewayContext } from './context.js';
import { tracedAttempt } from '../telemetry/call-trace.js';
import type { CallTelemetry } from '../telemetry/tracing.js';
import { applyVerdict, breakerVerdict, type BreakerVerdict } from '../upstream/breaker-verdict.js';
import { CallAbort } from '../upstream/call-abort.js';
import { RETRYABLE, classifyTransportError, describeForLog } from '../upstream/errors.js';
import type { BodyRead, UpstreamAnswer } from '../upstream/read-body.js';
import { sendUnary } from '../upstream/unary-exchange.js';
import type { A2ACall } from '../core/call.js';
import type { ErrorOutcome, Outcome, ResultOutcome, StreamItem } from '../core/outcome.js';
import { redactOutcome } from '../core/redact-outcome.js';
import type { CodecPolicy, UpstreamCodec, UpstreamHttpRequest } from '../core/upstream-codec.js';
import { recordUpstreamDuration } from './reply.js';

export interface GatewayErrorContext {
  readonly remote?: string | undefined;
  readonly httpStatus?: number | undefined;
  readonly metadata?: Readonly<Record<string, string | number | boolean>> | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** What the runner needs around one call. */
export interface RunnerEnv {
  readonly ctx: GatewayContext;
  readonly requestId: string;
  /** The caller's response: its 'close' aborts the call; a stream is relayed onto it. */
  readonly out: ServerResponse;
  readonly logger: { debug(obj: object, msg: string): void };
  /** A gateway failure as an ErrorOutcome (bindings/error-outcome.ts, handed in: core does not import bindings). */
  readonly gatewayError: (reason: Reason, errorFacts?: GatewayErrorContext, detail?: string) => ErrorOutcome;
  /** A bug of the gateway's own (GATEWAY_ERROR): logged with its stack and counted. */
  readonly onInternalError: (err: unknown) => void;
  /** The call's telemetry handle (telemetry/call-trace.ts), while traces or channel subscribers want one. */
  readonly trace?: CallTelemetry | undefined;
}

/** Where and how the call goes. */
export interface RunTarget {
  readonly remote: RemoteConfig;
  readonly runtime: RemoteRuntime;
  readonly codec: UpstreamCodec;
  /** The remote's interface URL for this codec (same origin as remote.url: the pool is per origin). */
  readonly base: URL;
  /** A second look at a result (the extended card's rewrite). */
  readonly rewriteResult?: ((result: ResultOutcome) => Outcome) | undefined;
  /** A last look at each stream item after redaction (the version bridge: core/call-bridge.ts). */
  readonly rewriteItem?: ((item: StreamItem, index: number) => StreamItem) | undefined;
}

export interface RunResult {
  readonly outcome: Outcome;
  /** Response headers for the caller: the remote's A2A headers, or retry-after for a limit. */
  readonly headers: Record<string, string>;
}

/** One policy object per remote config (a reload makes new configs), not one per call. */
const codecPolicies = new WeakMap<RemoteConfig, CodecPolicy>();

export function codecPolicyOf(remote: RemoteConfig): CodecPolicy {
  let policy = codecPolicies.get(remote);
  if (policy === undefined) {
    // keepBytes: a codec's result is a binding-neutral Outcome whose text and value are made on use, so a plain
    // success may stay the remote's bytes (an HTTP+JSON caller writes them as they are).
    const base = normalizePolicyOf(remote, '1.0', undefined, true);
    policy = !remote.limits.validateResults
      ? base
      : {
          ...base,
          checkResult: (call, result) => {
            // The schema of the generation the remote answered in (0.3 method names key 0.3 schemas; a bridged call's remote is 0.3).
            const check = checkResult(call.operation.jsonrpc[call.generation] ?? call.operation.name, result);
            return check.ok ? undefined : check.problem;
          },
        };
    codecPolicies.set(remote, policy);
  }
  return policy;
}

/** The headers every upstream request carries on top of the codec's. */
export function upstreamHeadersOf(env: RunnerEnv, target: RunTarget, request: UpstreamHttpRequest, streaming: boolean): Record<string, string> {
  // The codec made it for this call: completed in place, not copied.
  const headers = request.headers;
  // Configured credentials win over anything a caller sent.
  const credentials = target.runtime.credentials?.headers();
  if (credentials) Object.assign(headers, credentials);
  headers['x-request-id'] = env.requestId;
  // Streams are relayed as they arrive, so they are asked for uncompressed.
  headers['accept-encoding'] = streaming ? 'identity' : 'gzip, deflate, br';
  headers['user-agent'] = env.ctx.userAgent;
  return headers;
}

/** The remote's response headers a caller may see, without any holding a credential. */
export function callerHeadersOf(res: { readonly headers: IncomingHttpHeaders }, runtime: RemoteRuntime, log: CallLog): Record<string, string> {
  const filtered = filterUpstreamResponseHeaders(res.headers);
  const redactor = runtime.redactor();
  if (!redactor) return filtered;
  const kept = redactor.headers(filtered);
  if (kept.count > 0) log.redactions = (log.redactions ?? 0) + kept.count;
  return kept.headers;
}

/** A refusal by the gateway's own limits, with its Retry-After. */
export function limitResult(env: RunnerEnv, remote: string, err: LimitError): RunResult {
  const retryAfterMs = err.retryAfterMs !== undefined ? Math.max(1, Math.ceil(err.retryAfterMs)) : undefined;
  const headers: Record<string, string> = retryAfterMs !== undefined ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) } : {};
  return { outcome: env.gatewayError(err.reason, { remote, ...(retryAfterMs !== undefined ? { metadata: { retryAfterMs } } : {}), headers }), headers };
}

/**
 * Reads a whole reply (the answer's reader applies the unary cap) and hands it to `normalize`; transport failures
 * become gateway errors. A body that came with the head (the usual small reply) is read at once: no promise, no tick.
 */
export function readReply(
  env: RunnerEnv,
  target: RunTarget,
  res: UpstreamAnswer,
  normalize: (reply: { status: number; body: Buffer }) => Outcome,
): Outcome | Promise<Outcome> {
  const now = res.readBodyNow();
  if (now !== undefined) return outcomeOfRead(env, target, res, now, normalize);
  return res.readBody().then((read) => outcomeOfRead(env, target, res, read, normalize));
}

function outcomeOfRead(
  env: RunnerEnv,
  target: RunTarget,
  res: UpstreamAnswer,
  read: BodyRead,
  normalize: (reply: { status: number; body: Buffer }) => Outcome,
): Outcome {
  const { remote } = target;
  if (!read.ok) {
    if (read.reason === 'GATEWAY_ERROR') env.onInternalError(read.error);
    else if (read.error !== undefined) env.logger.debug({ requestId: env.requestId, err: describeForLog(read.error) }, 'upstream body failed');
    return env.gatewayError(read.reason, { remote: remote.name, httpStatus: res.statusCode });
  }
  return normalize({ status: res.statusCode, body: read.body });
}

/** Redaction, then the result's second look; counts redactions into the log. */
export function finishOutcome(env: RunnerEnv, target: RunTarget, outcome: Outcome, log: CallLog): Outcome {
  const redacted = redactOutcome(outcome, target.runtime.redactor(), (where) =>
    env.gatewayError('CREDENTIAL_ECHOED', { remote: target.remote.name, httpStatus: log.upstreamStatus }, where),
  );
  if (redacted.redactions > 0) log.redactions = (log.redactions ?? 0) + redacted.redactions;
  const out = redacted.outcome;
  return out.kind === 'result' && target.rewriteResult ? target.rewriteResult(out) : out;
}

/** One unary call through the remote's codec. */
export async function runUnary(env: RunnerEnv, target: RunTarget, call: A2ACall, log: CallLog): Promise<RunResult> {
  const { ctx, out } = env;
  const { remote, runtime, codec } = target;
  const built = codec.request(call, target.base);
  if (!built.ok) return { outcome: built.error, headers: {} };

  // One abort point: the total and headers deadlines (shared timer queues), the caller leaving, the drain's end.
  const abort = new CallAbort();
  const deadlineAt = Date.now() + remote.timeouts.totalMs;
  abort.startTotal(remote.timeouts.totalMs);
  abort.watchCaller(out);
  abort.watchDrain(ctx.drainEnd);

  let release: (() => void) | undefined;
  const lease = ctx.budget.lease();
  let result: RunResult;
  let verdict: BreakerVerdict = 'none';
  try {
    // The signal is made only if the call has to wait in the concurrency queue.
    // Usually admitted at once: no tick.
    const admitted = runtime.admit(() => abort.signal);
    release = typeof admitted === 'function' ? admitted : await admitted;
    const headers = upstreamHeadersOf(env, target, built.request, false);
    const upstreamStarted = performance.now();
    abort.startHeaders(remote.timeouts.headersMs);
    log.attempts = 0;
    const attempt = () => {
      log.attempts = (log.attempts ?? 0) + 1;
      const upstream = { n: log.attempts, url: () => new URL(built.request.path, target.base), headers, binding: target.codec.binding, method: built.request.method };
      return tracedAttempt(env.trace, upstream, classifyTransportError, (sent) =>
        sendUnary(ctx.pools.get(remote), { path: built.request.path, method: built.request.method, headers: sent, body: built.request.body ?? null }, { maxBytes: remote.limits.maxResponseBytes, hold: lease }, abort),
      );
    };
    const res =
      call.operation.readOnly && remote.retries.attempts > 1
        ? await withRetries(attempt, Object.assign({}, remote.retries, { deadline: deadlineAt, signal: abort.signal, isRetryable: (err: unknown) => RETRYABLE.has(classifyTransportError(err)) }))
        : await attempt();
    abort.stopHeaders();
    recordUpstreamDuration(ctx, remote.name, log, upstreamStarted);
    log.upstreamStatus = res.statusCode;
    const responseHeaders = callerHeadersOf(res, runtime, log);
    const policy = codecPolicyOf(remote);
    const read = readReply(env, target, res, (reply) => codec.reply(call, reply, policy));
    const outcome = read instanceof Promise ? await read : read;
    verdict = breakerVerdict(res.statusCode, outcome.kind === 'error' ? outcome.reason : 'ok');
    result = { outcome: finishOutcome(env, target, outcome, log), headers: responseHeaders };
  } catch (err) {
    if (err instanceof LimitError) result = limitResult(env, remote.name, err);
    else {
      const reason = classifyTransportError(err);
      if (reason === 'GATEWAY_ERROR') env.onInternalError(err);
      else env.logger.debug({ requestId: env.requestId, err: describeForLog(err) }, 'upstream call failed');
      verdict = breakerVerdict(undefined, reason);
      result = { outcome: env.gatewayError(reason, { remote: remote.name }), headers: {} };
    }
  } finally {
    abort.finish();
    release?.();
    lease.release();
  }
  applyVerdict(runtime.breaker, verdict);
  return result;
}
