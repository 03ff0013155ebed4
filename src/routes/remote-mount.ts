/**
 * Where a remote's routes are mounted. The same route plugins serve both
 * forms; only this object differs:
 *  - shared: `/remotes/<name>/...` on the gateway's listener, the remote named by the URL;
 *  - a remote's own listener (`remotes.<name>.listen`): the remote at the root, fixed by the listener.
 * Every route (calls, cards, and any binding added later) asks the mount which
 * remote a request is for, what path follows the remote's base, and what
 * base URL a caller reaches the remote at (the URL written into cards).
 */
import type { CallRequest } from '../jsonrpc/call-io.js';
import type { RemoteConfig, ServerConfig } from '../config/schema.js';

export interface RemoteMount {
  /** Route prefix: `/remotes/:name`, or '' at the root of a remote's own listener. */
  readonly prefix: string;
  /** The remote a request is for: the `:name` in its URL, or the listener's own remote. */
  remoteName(request: CallRequest): string | undefined;
  /** The raw URL text after the remote's base path, query included; undefined when the URL does not start with it. */
  suffix(rawUrl: string, name: string): string | undefined;
  /** The remote's A2A base URL as this caller reaches it, always with its trailing slash. */
  baseUrl(request: CallRequest, server: Readonly<ServerConfig>, remote: RemoteConfig): string;
}

/** `/remotes/<name>/` on the gateway's shared listener. */
export const sharedMount: RemoteMount = {
  prefix: '/remotes/:name',
  remoteName: (request) => (request.params as { name?: string } | undefined)?.name,
  suffix(rawUrl, name) {
    const prefix = `/remotes/${name}`;
    // An absolute-form target (`POST http://host/...`) does not start with the prefix.
    return rawUrl.startsWith(prefix) ? rawUrl.slice(prefix.length) : undefined;
  },
  baseUrl: (request, server, remote) => `${publicBaseUrl(request, server)}/remotes/${encodeURIComponent(remote.name)}/`,
};

/** The root of a listener that serves one remote only. */
export function listenerMount(name: string, listenerPublicBaseUrl?: string): RemoteMount {
  return {
    prefix: '',
    remoteName: () => name,
    suffix: (rawUrl) => (rawUrl.startsWith('/') ? rawUrl : undefined),
    // server.publicBaseUrl names the shared listener; this listener has its own (or the request's host).
    baseUrl: (request, server) => `${publicBaseUrl(request, server, listenerPublicBaseUrl ?? null)}/`,
  };
}

// host[:port], a bracketed IPv6 literal, nothing else: a Host header goes into URLs callers follow.
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

function firstHeader(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.split(',')[0]?.trim();
}

/**
 * Where callers reach the listener a request came in on: the configured public
 * URL (`server.publicBaseUrl` by default; null = none), else the request's own scheme and host.
 */
export function publicBaseUrl(request: CallRequest, server: Readonly<ServerConfig>, configured: string | null = server.publicBaseUrl ?? null): string {
  if (configured) return configured.replace(/\/+$/, '');
  const headers = request.raw.headers;
  const encrypted = (request.raw.socket as { encrypted?: boolean }).encrypted === true;
  let proto = encrypted ? 'https' : 'http';
  let host = headers.host;
  if (server.trustProxy) {
    const forwardedProto = firstHeader(headers['x-forwarded-proto'])?.toLowerCase();
    if (forwardedProto === 'http' || forwardedProto === 'https') proto = forwardedProto;
    host = firstHeader(headers['x-forwarded-host']) ?? host;
  }
  if (host === undefined || !HOST.test(host)) {
    const socket = request.raw.socket;
    const address = socket.localAddress ?? '127.0.0.1';
    host = `${address.includes(':') ? `[${address}]` : address}:${socket.localPort ?? server.port}`;
  }
  return `${proto}://${host}`;
}
