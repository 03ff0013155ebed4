/**
 * A unary exchange: the upstream exchange (exchange.ts) with its body read
 * whole, decoded and capped (capped-read.ts). Unary calls of every binding
 * and card fetches send this way.
 */
import type { Dispatcher } from 'undici';
import type { CallAbort } from './call-abort.js';
import type { BodyLimits } from './capped-read.js';
import { sendExchange, type UpstreamRequest, type UpstreamResponse } from './exchange.js';

export type { BodyLimits } from './capped-read.js';
export type { UpstreamRequest as UnaryRequest, UpstreamResponse as UnaryResponse } from './exchange.js';

/**
 * Sends one request on `pool`; resolves at the response head (1xx skipped),
 * rejects with the transport's error (or the call's CallAborted) before it;
 * `readBody()` hands over the capped body. `abort` ends it early.
 */
export function sendUnary(pool: Dispatcher, request: UpstreamRequest, limits: BodyLimits, abort: CallAbort): Promise<UpstreamResponse> {
  return sendExchange(pool, request, { limits }, abort);
}
