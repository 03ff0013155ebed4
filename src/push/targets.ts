/**
 * Which local webhooks the gateway delivers pushes to (`server.push.allowedTargets`),
 * so a caller cannot use the gateway to reach arbitrary internal addresses.
 * Spec §13.2's rules hold for every target: http or https only, http only
 * to loopback unless an entry names http itself, no credentials in the
 * URL, no fragment, no private addresses unless allowed.
 *
 * Entries:
 * - `loopback`: any http(s) URL whose host is `localhost`, 127.0.0.0/8 or
 *   [::1]; it must resolve to loopback addresses only.
 * - a URL prefix `https://host[:port][/path]`: the same scheme, the host
 *   (or, written `*.example.com`, any name under it), the port (written `*`:
 *   any; omitted: the scheme's default), and a path under that path (on a
 *   segment boundary). Names must resolve to public addresses unless
 *   `allowPrivateTargets`; an IP literal written in the entry is allowed as
 *   written.
 *
 * Pure: `check` looks at a URL; `addressAllowed` is the connect-time half
 * (the delivery's DNS lookup hook applies it to every resolved address, so
 * a name that rebinds to another address later is still refused).
 */
import { BlockList, isIP } from 'node:net';
import { isNonPublicAddress } from '../upstream/egress.js';

/** What the resolved addresses of an allowed target may be. */
export type AddressRule = 'loopback' | 'public' | 'any';

export type TargetCheck = { readonly ok: true; readonly url: URL; readonly rule: AddressRule } | { readonly ok: false; readonly problem: string };

export const MAX_TARGET_URL_BYTES = 2048;

interface PrefixEntry {
  readonly protocol: 'http:' | 'https:';
  /** Lower-case host name or IP literal (IPv6 in brackets), or the suffix after `*.` when `wildcard`. */
  readonly host: string;
  readonly wildcard: boolean;
  /** '*' for any port; else the port as URL writes it ('' = the scheme's default). */
  readonly port: string;
  /** Path prefix without a trailing slash ('' = any path). */
  readonly path: string;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped?.[1]) return LOOPBACK.check(mapped[1], 'ipv4');
  const family = isIP(bare);
  if (family === 4) return LOOPBACK.check(bare, 'ipv4');
  if (family === 6) return LOOPBACK.check(bare, 'ipv6');
  return false;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || isLoopbackAddress(hostname);
}

export class TargetPolicy {
  constructor(
    private readonly loopback: boolean,
    private readonly prefixes: readonly PrefixEntry[],
    private readonly allowPrivate: boolean,
  ) {}

  /** Is `text` a webhook URL the gateway may deliver to? `self`: URL prefixes of the gateway's own webhooks (never a target). */
  check(text: string, self: readonly string[] = []): TargetCheck {
    if (Buffer.byteLength(text, 'utf8') > MAX_TARGET_URL_BYTES) return { ok: false, problem: `the webhook URL is longer than ${MAX_TARGET_URL_BYTES} bytes` };
    if (!URL.canParse(text)) return { ok: false, problem: 'the webhook URL is not a valid absolute URL' };
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, problem: 'the webhook URL must be http or https' };
    if (url.username !== '' || url.password !== '') return { ok: false, problem: 'the webhook URL must not contain credentials (use authentication)' };
    if (url.hash !== '' || text.includes('#')) return { ok: false, problem: 'the webhook URL must not have a fragment' };
    if (self.some((prefix) => url.href === prefix || url.href.startsWith(`${prefix}/`))) return { ok: false, problem: 'the webhook URL is the gateway’s own webhook' };
    const hostname = url.hostname.toLowerCase();
    if (this.loopback && isLoopbackHost(hostname)) return { ok: true, url, rule: 'loopback' };
    for (const entry of this.prefixes) {
      if (!matches(entry, url, hostname)) continue;
      const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
      // An IP literal the operator wrote is allowed as written; any other address must follow the private rule.
      if (isIP(literal) !== 0) {
        if (!entry.wildcard && entry.host === hostname) return { ok: true, url, rule: 'any' };
        if (!this.allowPrivate && isNonPublicAddress(literal)) continue;
      }
      return { ok: true, url, rule: this.allowPrivate ? 'any' : 'public' };
    }
    if (url.protocol === 'http:' && !isLoopbackHost(hostname)) return { ok: false, problem: 'the webhook URL must be https (http only to loopback or where allowedTargets says http)' };
    return { ok: false, problem: 'the webhook URL is not in server.push.allowedTargets' };
  }

  /** The connect-time half: may a socket for a target of this rule connect to `address`? */
  static addressAllowed(rule: AddressRule, address: string): boolean {
    if (rule === 'any') return true;
    if (rule === 'loopback') return isLoopbackAddress(address);
    return !isNonPublicAddress(address);
  }
}

function matches(entry: PrefixEntry, url: URL, hostname: string): boolean {
  if (url.protocol !== entry.protocol) return false;
  if (entry.wildcard ? !hostname.endsWith(`.${entry.host}`) : hostname !== entry.host) return false;
  if (entry.port !== '*' && url.port !== entry.port) return false;
  if (entry.path === '') return true;
  return url.pathname === entry.path || url.pathname.startsWith(`${entry.path}/`);
}

export type ParsedPolicy = { readonly ok: true; readonly policy: TargetPolicy } | { readonly ok: false; readonly problem: string };

export function parseTargetPolicy(entries: readonly string[], allowPrivate: boolean): ParsedPolicy {
  let loopback = false;
  const prefixes: PrefixEntry[] = [];
  for (const [i, raw] of entries.entries()) {
    if (raw === 'loopback') {
      loopback = true;
      continue;
    }
    const entry = parsePrefix(raw);
    if (typeof entry === 'string') return { ok: false, problem: `entry ${i + 1} (${JSON.stringify(raw.slice(0, 100))}): ${entry}` };
    prefixes.push(entry);
  }
  return { ok: true, policy: new TargetPolicy(loopback, prefixes, allowPrivate) };
}

function parsePrefix(raw: string): PrefixEntry | string {
  const m = /^(https?):\/\/(\*\.)?([^/:*?#@]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}|\*))?(\/[^?#*]*)?$/.exec(raw);
  if (!m) return 'not "loopback" nor a URL prefix like https://host[:port][/path] (host may start with "*.", port may be "*")';
  const protocol = m[1] === 'http' ? 'http:' : 'https:';
  const wildcard = m[2] !== undefined;
  const portText = m[4];
  // Let URL normalize the host and the path as it will normalize targets.
  const probe = `${protocol}//${m[3]}${portText && portText !== '*' ? `:${portText}` : ''}${m[5] ?? ''}`;
  if (!URL.canParse(probe)) return 'not a valid URL prefix';
  const url = new URL(probe);
  if (wildcard && isIP(url.hostname) !== 0) return 'a "*." wildcard needs a domain name, not an address';
  return {
    protocol,
    host: url.hostname.toLowerCase(),
    wildcard,
    port: portText === '*' ? '*' : url.port,
    path: m[5] === undefined ? '' : url.pathname.replace(/\/+$/, ''),
  };
}
