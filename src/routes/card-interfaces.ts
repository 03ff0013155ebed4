/**
 * The card rewrite's options for one remote as a caller reaches it through
 * this gateway: every binding the gateway serves for it and where. HTTP+JSON
 * interfaces live at the same base as JSON-RPC (`/remotes/<name>`, or the
 * root of the remote's own listener): the REST paths and the JSON-RPC POST to
 * the base never collide (routes/http-json.ts).
 */
import type { RewriteOptions } from '../a2a/card-rewrite.js';
import type { RemoteConfig } from '../config/schema.js';

/** `gatewayRemoteUrl` is the remote's base URL on this listener, with its trailing slash. */
/** `pushNotifications`: the gateway carries push notifications (`server.push`); false makes the card say it does not. */
export function cardRewriteOptions(remote: RemoteConfig, gatewayRemoteUrl: string, pushNotifications?: boolean): RewriteOptions {
  return {
    ...(pushNotifications === undefined ? {} : { pushNotifications }),
    remoteUrl: remote.url,
    gatewayRemoteUrl,
    maxCardTextBytes: remote.limits.maxCardTextBytes,
    // The SDK clients append `/message:send` to the interface URL: no trailing slash.
    httpJsonUrl: gatewayRemoteUrl.replace(/\/+$/, ''),
    // HTTP+JSON callers are served for every remote (passed through or transcoded to JSON-RPC); JSON-RPC
    // callers reach an HTTP+JSON or gRPC remote only with `binding: http+json` or `grpc` (auto keeps them on
    // JSON-RPC at url).
    ...(remote.advertiseBindings ? { advertise: { jsonrpc: remote.binding === 'http+json' || remote.binding === 'grpc', httpJson: true } } : {}),
  };
}
