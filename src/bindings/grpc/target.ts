/**
 * Where a gRPC interface lives, from the forms agent cards and configs use:
 * `host:port` (what grpc-js clients, the @a2a-js/sdk included, take as their
 * target), `dns:host:port` / `dns:///host:port` (grpc-js's own scheme), and
 * URLs (`grpc://`, `grpcs://`, `http://`, `https://`). A URL's scheme says
 * whether TLS is used; the bare forms take `defaultTls`. Paths are not part of
 * gRPC addressing (the method path is fixed) and are refused, so a card entry
 * such as `https://agent.example/a2a/grpc` cannot silently mean another endpoint.
 */
import { isIP } from 'node:net';

export interface GrpcTarget {
  /** Host name or IP literal (IPv6 without brackets). */
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** The :authority the remote sees and the TLS server name source: host[:port] as written. */
  readonly authority: string;
}

export class GrpcTargetError extends Error {
  override readonly name = 'GrpcTargetError';
}

const URL_SCHEMES: Readonly<Record<string, boolean>> = { 'grpc:': false, 'http:': false, 'grpcs:': true, 'https:': true };

export function parseGrpcTarget(value: string, defaultTls: boolean): GrpcTarget {
  const text = value.trim();
  const dns = /^dns:(?:\/\/[^/]*\/)?(.*)$/i.exec(text);
  if (dns) return hostPort(dns[1] ?? '', defaultTls);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (scheme) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new GrpcTargetError('gRPC target is not a valid URL');
    }
    const tls = URL_SCHEMES[url.protocol];
    if (tls === undefined) throw new GrpcTargetError(`gRPC target scheme ${url.protocol} is not one of grpc, grpcs, http, https`);
    if (url.pathname !== '' && url.pathname !== '/') throw new GrpcTargetError('gRPC target must not have a path');
    if (url.search || url.hash || url.username || url.password) throw new GrpcTargetError('gRPC target must not have a query, fragment or user info');
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
    return { host, port, tls, authority: url.host };
  }
  return hostPort(text, defaultTls);
}

function hostPort(text: string, tls: boolean): GrpcTarget {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(text);
  if (!match) throw new GrpcTargetError('gRPC target is not host:port');
  const host = match[1] ?? match[2] ?? '';
  if (match[1] !== undefined && isIP(host) !== 6) throw new GrpcTargetError('gRPC target has an invalid IPv6 address');
  const port = match[3] === undefined ? 443 : Number(match[3]);
  if (port < 1 || port > 65535) throw new GrpcTargetError('gRPC target port is out of range');
  return { host, port, tls, authority: text };
}

/** The `host:port` form a stock grpc-js client takes as its target (IPv6 in brackets). */
export function formatGrpcTarget(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}
