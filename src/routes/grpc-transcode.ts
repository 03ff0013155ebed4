/**
 * A gRPC caller's call to a remote the gateway reaches over JSON-RPC or
 * HTTP+JSON (no gRPC endpoint, or `remotes.<name>.binding` says so): the
 * A2ACall the gRPC listener built runs through the binding-neutral call
 * runner (core/) with the remote's upstream codec, and the Outcome (or each
 * stream item) goes back to the listener, which writes it as a gRPC message
 * or status (bindings/grpc/caller-codec.ts). Same checks, bounds, log line
 * and metrics as the HTTP callers' transcoded calls.
 */
import type { Logger } from 'pino';
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import type { CallHandler, RequestInfo, UnaryReply } from '../bindings/grpc/contracts.js';
import { allowedResponseMetadata } from '../bindings/grpc/metadata.js';
import type { RemoteConfig } from '../config/schema.js';
import type { A2ACall } from '../core/call.js';
import { runUnary, type RunnerEnv, type RunTarget } from '../proxy/call-runner.js';
import type { ErrorOutcome, Outcome, ResultOutcome } from '../core/outcome.js';
import { runStream } from '../proxy/stream-runner.js';
import type { Reason } from '../envelope/codes.js';
import type { CallLog, GatewayContext } from '../proxy/context.js';
import { newGrpcCallLog } from '../proxy/grpc-call.js';
import { pushOutcomeRewrite, rewritePushA2ACall } from '../proxy/push-call.js';
import { recordCallLine } from '../proxy/reply.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import { literalHostDenied } from '../upstream/egress.js';
import { GrpcCallerOut } from './grpc-caller-out.js';
import { upstreamTargetFor } from './upstream-binding.js';

export interface GrpcTranscodeOptions {
  readonly ctx: GatewayContext;
  readonly logger: Logger;
  /** GetExtendedAgentCard's result rewritten for a gRPC caller (proxy/grpc-card.ts). */
  readonly rewriteCard?: (remote: RemoteConfig, result: ResultOutcome) => ResultOutcome | ErrorOutcome;
}

/** The runner's target for `call`, or the error that answers it (unknown remote, method not allowed, egress). */
async function targetOf(ctx: GatewayContext, call: A2ACall, opts: GrpcTranscodeOptions): Promise<RunTarget | ErrorOutcome> {
  const refused = (reason: Reason, detail?: string) => gatewayErrorOutcome(reason, { remote: call.remote }, detail);
  if (ctx.shutdown.aborted) return refused('GATEWAY_SHUTDOWN');
  const remote = ctx.config().remotes.get(call.remote);
  const runtime = ctx.runtime(call.remote);
  if (!remote || !runtime) return refused('UNKNOWN_REMOTE');
  const method = call.operation.jsonrpc[call.generation];
  if (method === undefined || !remote.methods.has(method)) return refused('METHOD_NOT_ALLOWED', `"${call.operation.name}"`);
  if (literalHostDenied(remote.url, remote.allowPrivateNetwork)) return refused('EGRESS_DENIED');
  const upstream = await upstreamTargetFor(ctx, remote, 'grpc');
  if (!upstream.ok) return upstream.error;
  const rewrite = opts.rewriteCard;
  return {
    remote,
    runtime,
    ...upstream.target,
    rewriteResult: call.operation.returnsCard && rewrite ? (result: ResultOutcome): Outcome => rewrite(remote, result) : pushOutcomeRewrite(ctx.push, call),
  };
}

export function createGrpcTranscoder(opts: GrpcTranscodeOptions): CallHandler {
  const { ctx, logger } = opts;
  const newLog = (call: A2ACall, info: RequestInfo | undefined): CallLog => newGrpcCallLog(ctx, call, info);
  const envOf = (call: A2ACall, out: GrpcCallerOut): RunnerEnv => ({
    ctx,
    requestId: call.caller.requestId,
    out: out.asResponse(),
    logger,
    gatewayError: gatewayErrorOutcome,
    onInternalError: (err) =>
      reportInternalError(logger, ctx.metrics.internalErrors, call.operation.streaming ? 'stream' : 'call', err, { requestId: call.caller.requestId, remote: call.remote }),
  });

  return {
    async unary(call, signal, info): Promise<UnaryReply> {
      const started = performance.now();
      const log = newLog(call, info);
      let reply: UnaryReply;
      const target = await targetOf(ctx, call, opts);
      // A push config leaves naming the gateway's webhook, never the caller's (or the call is refused here).
      const pushed = rewritePushA2ACall(ctx.push, call);
      if ('kind' in target) {
        reply = { outcome: target };
      } else if (!pushed.ok) {
        reply = { outcome: pushed.error };
      } else {
        const out = new GrpcCallerOut(signal);
        const result = await runUnary(envOf(call, out), target, pushed.call, log);
        const metadata = allowedResponseMetadata(result.headers);
        // A limit's retry-after stays on the error (caller-codec writes it as metadata).
        reply = { outcome: result.outcome, ...(Object.keys(metadata).length > 0 ? { metadata } : {}) };
      }
      log.outcome = reply.outcome.kind === 'result' ? 'ok' : reply.outcome.reason;
      log.bytesOut = reply.outcome.kind === 'result' ? Buffer.byteLength(reply.outcome.json) : 0;
      recordCallLine(ctx, logger, call.caller.requestId, log, started);
      return reply;
    },

    async stream(call, sink, info): Promise<void> {
      const started = performance.now();
      const log = newLog(call, info);
      const target = await targetOf(ctx, call, opts);
      const out = new GrpcCallerOut(sink.signal, sink);
      const pushed = rewritePushA2ACall(ctx.push, call);
      if ('kind' in target) {
        out.finish(target);
        log.outcome = target.reason;
      } else if (!pushed.ok) {
        out.finish(pushed.error);
        log.outcome = pushed.error.reason;
      } else {
        try {
          const run = await runStream(envOf(call, out), target, pushed.call, log, out.streamCaller());
          if (!run.relayed) {
            // Without an event stream: one error (a refusal, a limit, a remote that sent no events), or the one
            // result a remote answered a streaming call with, which is then the stream's only message.
            const outcome = run.result.outcome;
            if (outcome.kind === 'result') out.deliverOne(outcome);
            else out.finish(outcome);
            log.outcome = outcome.kind === 'result' ? 'ok' : outcome.reason;
          }
        } catch (err) {
          envOf(call, out).onInternalError(err);
          out.finish(gatewayErrorOutcome('GATEWAY_ERROR', { remote: call.remote }));
          log.outcome = 'GATEWAY_ERROR';
        }
        out.finish();
      }
      recordCallLine(ctx, logger, call.caller.requestId, log, started);
    },
  };
}
