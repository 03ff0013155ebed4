/** The headers of the request the gateway sends a remote (the call itself: upstream/exchange.ts). */
import type { CallRequest } from '../jsonrpc/call-io.js';
import type { RemoteConfig } from '../config/schema.js';
import { buildUpstreamHeaders } from '../policy/header-policy.js';
import type { RemoteRuntime } from '../policy/remote-runtime.js';
import type { GatewayContext } from './context.js';

export function upstreamHeaders(
  ctx: GatewayContext,
  request: CallRequest,
  remote: RemoteConfig,
  runtime: RemoteRuntime,
  streaming: boolean,
): Record<string, string> {
  return {
    ...buildUpstreamHeaders(request.headers, { forwardHeaders: remote.forwardHeaders }),
    // Configured credentials win over anything a caller sent.
    ...runtime.credentials?.headers(),
    'x-request-id': request.id,
    'content-type': 'application/json',
    accept: streaming ? 'text/event-stream' : 'application/json',
    // Streams are relayed as they arrive, so they are asked for uncompressed.
    'accept-encoding': streaming ? 'identity' : 'gzip, deflate, br',
    'user-agent': ctx.userAgent,
  };
}
