/**
 * The version bridge for calls that go through the binding-neutral runner
 * (HTTP+JSON callers here; gRPC callers through the same function): given a
 * caller's A2ACall and the upstream target upstreamTargetFor chose, decide
 * from the remote's generations (ctx.remoteVersions: `remotes.<name>.versions`,
 * else what its card said) whether the call crosses generations, and if it
 * does return the translated call and a target whose result and item stages
 * translate back (core/call-bridge.ts). A bridged call always goes to JSON-RPC at the
 * remote's `url`: the bridge speaks the remote's generation in JSON-RPC only
 * (a 0.3 remote's REST interface has other bodies than 1.0's). A remote with
 * `binding: http+json` is not bridged.
 */
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import { jsonRpcUpstreamCodec } from '../bindings/jsonrpc/upstream-codec.js';
import type { A2ACall } from '../core/call.js';
import { bridgeResultOutcome, bridgeStreamItem, planCallBridge } from '../core/call-bridge.js';
import type { RunTarget } from '../proxy/call-runner.js';
import type { ErrorOutcome } from '../core/outcome.js';
import type { CallLog, GatewayContext } from '../proxy/context.js';
import { reportDropped } from '../proxy/version-bridge.js';

export type BridgedCall =
  | { readonly ok: true; readonly call: A2ACall; readonly target: RunTarget }
  | { readonly ok: false; readonly error: ErrorOutcome };

export function bridgedCall(
  ctx: GatewayContext,
  /** The caller's request id and logger (a Fastify request, or a gRPC call's equivalents). */
  request: { readonly id: string; readonly log: { info(obj: object, msg: string): void } },
  call: A2ACall,
  target: RunTarget,
  log: CallLog,
): BridgedCall {
  const { remote } = target;
  if (ctx.remoteVersions === undefined) return { ok: true, call, target };
  const plan = planCallBridge(call, ctx.remoteVersions(remote));
  if (plan.kind === 'direct') return { ok: true, call, target };
  // `binding: http+json` remotes are spoken to in 1.0 REST: bridged toward 1.0 only (0.3 JSON-RPC callers).
  if (remote.binding === 'http+json' && plan.kind === 'bridge' && plan.bridge.remote !== '1.0') return { ok: true, call, target };
  const error = (reason: Parameters<typeof gatewayErrorOutcome>[0], detail?: string, httpStatus?: number) =>
    gatewayErrorOutcome(reason, { remote: remote.name, ...(httpStatus === undefined ? {} : { httpStatus }) }, detail);
  if (plan.kind === 'refuse') return { ok: false, error: error(plan.reason, plan.detail) };

  const { bridge } = plan;
  // Toward 0.3: JSON-RPC at url (the bridge does not speak 0.3 REST). Toward 1.0: the binding already chosen.
  const upstream = bridge.remote === '0.3' ? { codec: jsonRpcUpstreamCodec, base: remote.url } : { codec: target.codec, base: target.base };
  // The remote's request bound holds for what the gateway sends it, not only for what the caller sent.
  const built = upstream.codec.request(plan.call, upstream.base);
  if (!built.ok) return { ok: false, error: built.error };
  const bytes = built.request.body === undefined ? 0 : Buffer.byteLength(built.request.body);
  if (bytes > remote.limits.maxRequestBytes) {
    return { ok: false, error: error('REQUEST_TOO_LARGE', `more than ${remote.limits.maxRequestBytes} bytes once translated to A2A ${bridge.remote}`) };
  }
  log.bridge = `${bridge.caller}>${bridge.remote}`;
  reportDropped(ctx.metrics, request.log, request.id, remote.name, bridge, 'request', bridge.dropped);
  const onDropped = (direction: 'response' | 'event', labels: readonly string[]) =>
    reportDropped(ctx.metrics, request.log, request.id, remote.name, bridge, direction, labels);
  const rewriteResult = target.rewriteResult;
  return {
    ok: true,
    call: plan.call,
    target: {
      ...target,
      ...upstream,
      // After redaction (the runner's order); an extended card is translated first, then rewritten as a caller's card.
      rewriteResult: (result) => {
        const translated = bridgeResultOutcome(bridge, result, remote.limits.maxResponseBytes, {
          gatewayError: (reason, detail) => error(reason, detail, log.upstreamStatus),
          onDropped,
        });
        return translated.kind === 'result' && rewriteResult ? rewriteResult(translated) : translated;
      },
      rewriteItem: (item, index) =>
        bridgeStreamItem(bridge, item, remote.limits.maxEventBytes, {
          onDropped,
          invalidEvent: (cause) =>
            gatewayErrorOutcome('INVALID_EVENT', { remote: remote.name, httpStatus: log.upstreamStatus, metadata: { cause, event: index } }),
        }),
    },
  };
}
