/**
 * A JSON-RPC caller's call to a remote the gateway reaches over another
 * binding (`remotes.<name>.binding: http+json`, or `grpc`: routes/grpc-upstream-call.ts): the checked request becomes
 * an A2ACall (bindings/jsonrpc/caller-codec.ts), runs through the
 * binding-neutral call runner with the remote's upstream codec, and the
 * Outcome (or each stream item) is written back as JSON-RPC for the caller's
 * id. Same log line and metrics as every JSON-RPC call.
 */
import type { CallReply, CallRequest } from '../jsonrpc/call-io.js';
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import { encodeJsonRpcOutcome, encodeJsonRpcStreamItem, jsonRpcCallOf } from '../bindings/jsonrpc/caller-codec.js';
import type { RemoteConfig } from '../config/schema.js';
import type { CallerGeneration } from '../envelope/codes.js';
import { runUnary, type RunnerEnv, type RunResult } from '../proxy/call-runner.js';
import type { StreamItem } from '../core/outcome.js';
import { runStream } from '../proxy/stream-runner.js';
import type { CallerRequest } from '../jsonrpc/caller-request.js';
import { buildUpstreamHeaders } from '../policy/header-policy.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import type { CallLog, GatewayContext } from '../proxy/context.js';
import { pushOutcomeRewrite } from '../proxy/push-call.js';
import { finishCall, sendEnvelope } from '../proxy/reply.js';
import { callTraceOf } from '../telemetry/call-trace.js';
import { reportInternalError } from '../telemetry/internal-error.js';
import type { RemoteMount } from './remote-mount.js';
import { extendedCardOutcomeRewrite } from './rest-card-result.js';
import { grpcUpstreamWanted, runGrpcStream, runGrpcUnary } from './grpc-upstream-call.js';
import { bridgedCall } from './bridged-call.js';
import { upstreamTargetFor } from './upstream-binding.js';

export interface TranscodeTarget {
  readonly remote: RemoteConfig;
  readonly runtime: RemoteRuntime;
  readonly call: CallerRequest;
  readonly caller: CallerGeneration;
}

export async function transcodedJsonRpcCall(
  ctx: GatewayContext,
  request: CallRequest,
  reply: CallReply,
  mount: RemoteMount,
  { remote, runtime, call: checked, caller }: TranscodeTarget,
  log: CallLog,
  started: number,
): Promise<void> {
  const id = checked.id;
  const answer = (result: RunResult) => {
    const outcome = result.outcome;
    const normalized = outcome.kind === 'result' ? { json: encodeJsonRpcOutcome(id, outcome, caller), outcome: 'ok' as const, result: outcome.value } : { json: encodeJsonRpcOutcome(id, outcome, caller), outcome: outcome.reason };
    sendEnvelope(ctx, reply, normalized, log, started, result.headers);
  };
  const parsed = jsonRpcCallOf(checked, {
    remote: remote.name,
    requestId: request.id,
    headers: request.headers,
    forwarded: buildUpstreamHeaders(request.headers, { forwardHeaders: remote.forwardHeaders }),
  });
  if (!parsed.ok) return answer({ outcome: parsed.error, headers: {} });
  const call = parsed.call;
  const streamCaller = {
    write: (item: StreamItem) => encodeJsonRpcStreamItem(id, item, caller),
    headers: { 'x-request-id': request.id },
    takeOver: () => reply.hijack(),
  };
  // JSON-RPC callers go over gRPC only with binding: grpc (synchronous: no card read).
  if (grpcUpstreamWanted(ctx, remote, 'jsonrpc') === true) {
    // The gRPC handler rewrites an extended card itself (its gRPC and JSON-RPC interfaces pointing at the gateway).
    if (!call.operation.streaming) return answer(await runGrpcUnary(ctx, call, reply.raw, log));
    const run = await runGrpcStream(ctx, remote, call, reply.raw, log, streamCaller);
    if (run.relayed) return finishCall(ctx, reply, log, started);
    return answer(run.result);
  }
  const upstream = await upstreamTargetFor(ctx, remote, 'jsonrpc');
  if (!upstream.ok) return answer({ outcome: upstream.error, headers: {} });
  // Version bridge (issue 17): a 0.3 caller of a remote reached over 1.0 HTTP+JSON is translated (routes/bridged-call.ts).
  const bridged = bridgedCall(ctx, request, parsed.call, {
    remote,
    runtime,
    ...upstream.target,
    // The push config was rewritten before the transcode (routes/jsonrpc.ts); results show the caller its own again.
    rewriteResult: call.operation.returnsCard ? extendedCardOutcomeRewrite(ctx, mount, request, remote) : pushOutcomeRewrite(ctx.push, call),
  }, log);
  if (!bridged.ok) return answer({ outcome: bridged.error, headers: {} });
  const target = bridged.target;
  const env: RunnerEnv = {
    ctx,
    requestId: request.id,
    out: reply.raw,
    logger: request.log,
    gatewayError: gatewayErrorOutcome,
    onInternalError: (err) => reportInternalError(request.log, ctx.metrics.internalErrors, call.operation.streaming ? 'stream' : 'call', err, { requestId: request.id, remote: remote.name }),
    trace: callTraceOf(reply),
  };
  if (!call.operation.streaming) return answer(await runUnary(env, target, bridged.call, log));
  const run = await runStream(env, target, bridged.call, log, streamCaller);
  if (run.relayed) return finishCall(ctx, reply, log, started);
  answer(run.result);
}
