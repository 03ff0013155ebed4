/**
 * The extended agent card (`agent/getAuthenticatedExtendedCard`,
 * `GetExtendedAgentCard`) arrives inside a JSON-RPC result; it gets the same
 * rewrite and bounds as the public card, or the call fails with -32006.
 */
import { rewriteExtendedCardResult } from '../a2a/card-rewrite.js';
import { serializeResultJson } from '../envelope/envelope.js';
import { failureEnvelope } from '../envelope/normalize.js';
import type { GatewayContext } from '../proxy/context.js';
import type { ResultRewrite } from '../proxy/unary.js';
import { cardRewriteOptions } from './card-interfaces.js';
import { sharedMount, type RemoteMount } from './remote-mount.js';

export function cardResultRewrite(ctx: GatewayContext, mount: RemoteMount = sharedMount): ResultRewrite {
  return (result, { request, remote, callerId, caller }) => {
    const rewritten = rewriteExtendedCardResult(result, cardRewriteOptions(remote, mount.baseUrl(request, ctx.config().server, remote), ctx.config().server.push !== undefined));
    if (!rewritten.ok) return failureEnvelope(callerId, rewritten.reason, { remote: remote.name, httpStatus: 200, caller }, rewritten.problem);
    return { json: serializeResultJson(callerId, JSON.stringify(rewritten.card)), outcome: 'ok', result: rewritten.card };
  };
}
