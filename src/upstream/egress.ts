/**
 * The egress guard: which addresses a remote may resolve to. The check runs
 * at connect time (a `lookup` hook on every socket the pool opens), so a name
 * that resolves to a public address once and to 127.0.0.1 the next time (DNS
 * rebinding) is still refused.
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';

/** Addresses that are not the public internet: loopback, private, link-local, CGNAT, metadata, multicast, reserved. */
const NON_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, incl. 169.254.169.254 cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved + broadcast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 can reach any IPv4, including private ones
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7], // unique local, incl. fd00::/8
  ['fe80::', 10], // link-local
  ['fec0::', 10],
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

const MAPPED_V4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/** True when `address` (an IP literal) is not a public internet address. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const mapped = MAPPED_V4.exec(bare);
  if (mapped?.[1]) return isNonPublicAddress(mapped[1]);
  const family = isIP(bare);
  if (family === 4) return NON_PUBLIC.check(bare, 'ipv4');
  if (family === 6) {
    // ::ffff:a.b.c.d in hex form (::ffff:7f00:1) is an IPv4 address too.
    if (NON_PUBLIC.check(bare, 'ipv6')) return true;
    const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(bare);
    if (hexMapped?.[1] && hexMapped[2]) {
      const hi = parseInt(hexMapped[1], 16);
      const lo = parseInt(hexMapped[2], 16);
      return isNonPublicAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
    }
    return false;
  }
  return true; // not an IP at all: refuse rather than guess
}

export class EgressDeniedError extends Error {
  override readonly name = 'EgressDeniedError';
  readonly code = 'EGRESS_DENIED';
  constructor(readonly address: string) {
    super('address not allowed by the egress policy');
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * Wraps a resolver so every answer is checked before a socket connects to it.
 * `resolver` is injectable so tests can play a rebinding DNS server.
 */
export function guardedLookup(allowPrivateNetwork: boolean, resolver: LookupFunction = dnsLookup as LookupFunction): LookupFunction {
  if (allowPrivateNetwork) return resolver;
  return (hostname, options, callback) => {
    resolver(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      const denied = all.find((a) => isNonPublicAddress(a.address));
      if (denied) return callback(new EgressDeniedError(denied.address) as NodeJS.ErrnoException, '', 0);
      callback(null, address, family);
    });
  };
}

/** For URLs whose host is an IP literal: no lookup happens, so check it up front. */
export function literalHostDenied(url: URL, allowPrivateNetwork: boolean): boolean {
  if (allowPrivateNetwork) return false;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isNonPublicAddress(host);
}
