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
  // Completed in place: the forwarded headers are a fresh object of this call's, and the names keep the order (and a
  // later value replaces an earlier one in its place) that one object literal spreading it would give, without copying.
  const headers = buildUpstreamHeaders(request.headers, { forwardHeaders: remote.forwardHeaders });
  // Configured credentials win over anything a caller sent.
  const credentials = runtime.credentials?.headers();
  if (credentials) Object.assign(headers, credentials);
  headers['x-request-id'] = request.id;
  headers['content-type'] = 'application/json';
  headers.accept = streaming ? 'text/event-stream' : 'application/json';
  // Streams are relayed as they arrive, so they are asked for uncompressed.
  headers['accept-encoding'] = streaming ? 'identity' : 'gzip, deflate, br';
  headers['user-agent'] = ctx.userAgent;
  return headers;
}
