/**
 * The extended agent card a REST caller asked for (GET extendedAgentCard)
 * gets the same rewrite and bounds as the public card (src/a2a/card-rewrite.ts),
 * as an Outcome: the rewritten card, or INVALID_AGENT_CARD / NO_USABLE_INTERFACE.
 */
import type { CallRequest } from '../jsonrpc/call-io.js';
import { rewriteExtendedCardResult } from '../a2a/card-rewrite.js';
import { gatewayErrorOutcome } from '../bindings/error-outcome.js';
import type { RemoteConfig } from '../config/schema.js';
import type { Outcome, ResultOutcome } from '../core/outcome.js';
import type { GatewayContext } from '../proxy/context.js';
import { cardRewriteOptions } from './card-interfaces.js';
import type { RemoteMount } from './remote-mount.js';

export function extendedCardOutcomeRewrite(ctx: GatewayContext, mount: RemoteMount, request: CallRequest, remote: RemoteConfig): (result: ResultOutcome) => Outcome {
  return (result) => {
    const rewritten = rewriteExtendedCardResult(result.value, cardRewriteOptions(remote, mount.baseUrl(request, ctx.config().server, remote), ctx.config().server.push !== undefined));
    if (!rewritten.ok) return gatewayErrorOutcome(rewritten.reason, { remote: remote.name, httpStatus: 200 }, rewritten.problem);
    return { kind: 'result', json: JSON.stringify(rewritten.card), value: rewritten.card };
  };
}
