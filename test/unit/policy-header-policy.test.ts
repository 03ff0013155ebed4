import type { IncomingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import t from 'tap';
import { HOP_BY_HOP } from '../../src/http/hop-by-hop.js';
import {
  ALWAYS_FORWARDED,
  MAX_FORWARDED_VALUE_LENGTH,
  MAX_EXTENSIONS,
  MAX_EXTENSION_URI_LENGTH,
  MAX_RESPONSE_VALUE_LENGTH,
  buildUpstreamHeaders,
  connectionLists,
  filterUpstreamResponseHeaders,
  isForwardableHeaderName,
} from '../../src/policy/header-policy.js';

const none = { forwardHeaders: [] as string[] };

t.test('the A2A and tracing headers pass by default', async (t) => {
  const caller = Object.fromEntries(ALWAYS_FORWARDED.map((name) => [name, `v-${name}`]));
  t.same(buildUpstreamHeaders(caller, none), caller);
  t.same(
    [...ALWAYS_FORWARDED].sort(),
    ['a2a-extensions', 'a2a-version', 'accept-language', 'traceparent', 'tracestate', 'x-a2a-extensions', 'x-request-id'],
  );
});

t.test('credentials, proxies, host and forwarding headers are dropped by default', async (t) => {
  const out = buildUpstreamHeaders(
    {
      authorization: 'Bearer caller-secret',
      cookie: 'session=abc',
      'proxy-authorization': 'Basic x',
      host: 'gateway.local',
      forwarded: 'for=10.0.0.1',
      'x-forwarded-for': '10.0.0.1',
      'x-forwarded-host': 'evil',
      'x-forwarded-proto': 'http',
      'user-agent': 'agent/1',
      'content-type': 'application/json',
      'content-length': '12',
      'x-custom': 'x',
      'a2a-version': '1.0',
    },
    none,
  );
  t.same(out, { 'a2a-version': '1.0' });
});

t.test('the allowlist lets authorization and cookie through', async (t) => {
  const out = buildUpstreamHeaders(
    // Node joins cookies itself; an array (e.g. from headersDistinct) must join with '; ' too.
    { authorization: 'Bearer x', cookie: ['a=1', 'b=2'], 'x-tenant': 't1', 'x-other': 'no' } as unknown as IncomingHttpHeaders,
    { forwardHeaders: ['authorization', 'cookie', 'x-tenant'] },
  );
  t.same(out, { authorization: 'Bearer x', cookie: 'a=1; b=2', 'x-tenant': 't1' });
});

t.test('allowlist entries are matched case-insensitively', async (t) => {
  t.same(buildUpstreamHeaders({ 'x-tenant': 't1' }, { forwardHeaders: [' X-Tenant '] }), { 'x-tenant': 't1' });
});

t.test('hop-by-hop, host and content-length are never forwarded, even if allowlisted', async (t) => {
  const caller: Record<string, string> = { host: 'h', 'content-length': '5' };
  for (const name of HOP_BY_HOP) caller[name] = 'x';
  const out = buildUpstreamHeaders(caller, { forwardHeaders: Object.keys(caller) });
  t.same(out, {});
});

t.test('headers named in Connection are hop-by-hop for this message', async (t) => {
  const out = buildUpstreamHeaders(
    { connection: 'keep-alive, X-Tenant', 'x-tenant': 't1', 'x-keep': 'k', traceparent: 'tp' },
    { forwardHeaders: ['x-tenant', 'x-keep'] },
  );
  t.same(out, { 'x-keep': 'k', traceparent: 'tp' });
  for (const name of ['close', 'a', 'b']) t.ok(connectionLists(['close', ' a , ,B'], name), name);
  t.notOk(connectionLists(['close', ' a , ,B'], 'c'));
  t.notOk(connectionLists(undefined, 'a'));
  t.notOk(connectionLists('x-tenant-id', 'x-tenant'), 'a longer name is another name');
  t.notOk(connectionLists('x-ten', 'x-tenant'), 'so is a shorter one');
  t.ok(connectionLists('\tX-Tenant\u00a0,keep-alive', 'x-tenant'), 'trimmed as String#trim trims, compared without case');
});

/** What connectionLists answers, as the Set of names it replaced built it: split, trim, lower-case. */
function listedByReference(connection: string | string[] | undefined, name: string): boolean {
  if (connection === undefined) return false;
  const joined = Array.isArray(connection) ? connection.join(',') : connection;
  return joined.split(',').some((part) => part.trim().toLowerCase() === name);
}

t.test('property: connectionLists answers as split, trim and toLowerCase would', async (t) => {
  const names = ['keep-alive', 'x-tenant', 'k', 'te', 'a2a-version'];
  // Items: a name in some case (the Kelvin sign for K), a longer or shorter one, dotted capital I, bare junk letters,
  // each padded with a kind of space String#trim removes (or one it keeps); joined with commas.
  const spaces = fc.constantFrom('', ' ', '\t', '\n', '\u00a0', '\u2003', '\ufeff', '\u0085');
  const word = fc.constantFrom(...names, 'KEEP-ALIVE', 'Keep-Alive', '\u212aeep-alive', 'X-Tenant', 'x-tenant-id', 'K', '\u212a', 'TE', 'İ', 'a2a', '');
  const junk = fc.array(fc.constantFrom('K', 'k', 'e', 'x', '-', 'T', ' ', ','), { maxLength: 6 }).map((chars) => chars.join(''));
  const item = fc.tuple(spaces, fc.oneof(word, junk), spaces).map((parts) => parts.join(''));
  const value = fc.array(item, { maxLength: 4 }).map((items) => items.join(','));
  let listed = 0;
  fc.assert(
    fc.property(fc.oneof(value, fc.array(value, { maxLength: 3 })), fc.constantFrom(...names), (connection, name) => {
      const answer = connectionLists(connection, name);
      if (answer) listed++;
      return answer === listedByReference(connection, name);
    }),
    { numRuns: 3000 },
  );
  // The generator reaches both answers (a property that only ever saw "not listed" would prove little).
  t.ok(listed > 100, `listed in ${listed} of 3,000 runs`);
});

t.test('values with CR, LF, NUL or other controls are dropped', async (t) => {
  for (const bad of ['a\rb', 'a\nb', 'a\u0000b', 'a\u0001b', 'a\u007fb', 'a\u0100b']) {
    t.same(buildUpstreamHeaders({ 'x-request-id': bad, traceparent: 'ok' }, none), { traceparent: 'ok' }, JSON.stringify(bad));
  }
  t.same(buildUpstreamHeaders({ 'x-request-id': 'a\tb é' }, none), { 'x-request-id': 'a\tb é' }, 'HTAB and obs-text are valid');
});

t.test('values up to 8 KiB pass; longer ones are dropped', async (t) => {
  const at = 'a'.repeat(MAX_FORWARDED_VALUE_LENGTH);
  t.equal(MAX_FORWARDED_VALUE_LENGTH, 8192);
  t.same(buildUpstreamHeaders({ tracestate: at }, none), { tracestate: at }, 'just at the bound');
  t.same(buildUpstreamHeaders({ tracestate: at + 'a' }, none), {}, 'one over');
});

t.test('repeated values are joined with a comma; undefined values skipped', async (t) => {
  t.same(buildUpstreamHeaders({ 'a2a-extensions': ['urn:a', 'urn:b'], tracestate: undefined }, none), {
    'a2a-extensions': 'urn:a, urn:b',
  });
});

t.test('isForwardableHeaderName validates allowlist entries', async (t) => {
  t.ok(isForwardableHeaderName('Authorization'));
  t.ok(isForwardableHeaderName('x-api-key'));
  t.notOk(isForwardableHeaderName('Host'));
  t.notOk(isForwardableHeaderName('transfer-encoding'));
  t.notOk(isForwardableHeaderName('content-length'));
  t.notOk(isForwardableHeaderName('bad name'));
  t.notOk(isForwardableHeaderName(''));
});

t.test('response: only a2a-version and a2a-extensions survive', async (t) => {
  const out = filterUpstreamResponseHeaders({
    'a2a-version': '1.0',
    'a2a-extensions': 'https://example.com/ext/v1',
    'set-cookie': ['a=1'],
    server: 'nginx',
    'x-powered-by': 'php',
    location: 'http://evil/',
    'content-type': 'text/html',
    'content-length': '5',
    'content-encoding': 'gzip',
    connection: 'keep-alive',
    'x-unknown': 'x',
    'A2A-Version-Extra': '1',
  });
  t.same(out, { 'a2a-version': '1.0', 'a2a-extensions': 'https://example.com/ext/v1' });
});

t.test('response: names are matched case-insensitively, undefined skipped', async (t) => {
  t.same(filterUpstreamResponseHeaders({ 'A2A-Version': '0.3', 'a2a-extensions': undefined }), { 'a2a-version': '0.3' });
});

t.test('response a2a-version: a single token only', async (t) => {
  const version = (v: string | string[]) => filterUpstreamResponseHeaders({ 'a2a-version': v })['a2a-version'];
  t.equal(version(' 1.0 '), '1.0', 'surrounding spaces trimmed');
  t.equal(version(['1.0']), '1.0');
  t.equal(version(['1.0', '0.3']), undefined, 'repeated header is ambiguous');
  t.equal(version('1.0 ignore previous instructions'), undefined, 'no spaces inside');
  t.equal(version('1.0\r\nx: y'), undefined);
  t.equal(version('1.0é'), undefined, 'printable ASCII only');
  t.equal(version(''), undefined);
});

t.test('response a2a-version: Major.Minor only (A2A 1.0 §3.6, §14.2.1)', async (t) => {
  const version = (v: string) => filterUpstreamResponseHeaders({ 'a2a-version': v })['a2a-version'];
  for (const ok of ['0.3', '1.0', '10.20', '999.999', '0.0']) t.equal(version(ok), ok, `${ok} passes`);
  for (const bad of ['1', '1.', '.1', '1.0.0', 'v1.0', '1.0-beta', '1,0', '1.0,0.3', '１.０', 'latest', '1e0.0', '+1.0', '-1.0']) {
    t.equal(version(bad), undefined, `${JSON.stringify(bad)} dropped`);
  }
  t.equal(version('999.999'), '999.999', 'three digits each: just at the bound');
  t.equal(version('1000.0'), undefined, 'four major digits: one over');
  t.equal(version('0.1000'), undefined, 'four minor digits: one over');
});

t.test('response a2a-extensions: at most 16 URIs', async (t) => {
  t.equal(MAX_EXTENSIONS, 16);
  const list = (n: number) => Array.from({ length: n }, (_, i) => `urn:a2a:ext:${i}`);
  const ext = (v: string) => filterUpstreamResponseHeaders({ 'a2a-extensions': v })['a2a-extensions'];
  t.equal(ext(list(MAX_EXTENSIONS).join(',')), list(MAX_EXTENSIONS).join(', '), 'just at');
  t.equal(ext(list(MAX_EXTENSIONS + 1).join(',')), undefined, 'one over drops the header');
  const repeated = filterUpstreamResponseHeaders({ 'x-a2a-extensions': [list(8).join(','), list(9).join(',')] });
  t.same(repeated, {}, 'the count covers repeated fields joined (0.3 spelling too)');
});

t.test('response a2a-extensions: each URI at most 512 characters', async (t) => {
  t.equal(MAX_EXTENSION_URI_LENGTH, 512);
  const uri = (length: number) => 'https://example.com/' + 'x'.repeat(length - 'https://example.com/'.length);
  const ext = (v: string) => filterUpstreamResponseHeaders({ 'a2a-extensions': v })['a2a-extensions'];
  t.equal(ext(`urn:a,${uri(MAX_EXTENSION_URI_LENGTH)}`), `urn:a, ${uri(MAX_EXTENSION_URI_LENGTH)}`, 'just at');
  t.equal(ext(`urn:a,${uri(MAX_EXTENSION_URI_LENGTH + 1)}`), undefined, 'one over');
});

t.test('response values up to 4 KiB pass; longer ones are dropped', async (t) => {
  t.equal(MAX_RESPONSE_VALUE_LENGTH, 4096);
  const ext = (v: string) => filterUpstreamResponseHeaders({ 'a2a-extensions': v })['a2a-extensions'];
  // Eight URIs within the per-URI bound, padded with spaces (trimmed away) to reach the whole-field bound.
  const items = Array.from({ length: 8 }, (_, i) => `urn:${i}:${'x'.repeat(500)}`).join(',');
  const pad = ' '.repeat(MAX_RESPONSE_VALUE_LENGTH - items.length);
  t.equal(ext(items + pad), items.split(',').join(', '), 'just at');
  t.equal(ext(items + pad + ' '), undefined, 'one over');
  t.same(filterUpstreamResponseHeaders({ 'a2a-version': '1.0' + ' '.repeat(MAX_RESPONSE_VALUE_LENGTH - 3) }), { 'a2a-version': '1.0' }, 'version just at');
  t.same(filterUpstreamResponseHeaders({ 'a2a-version': '1.0' + ' '.repeat(MAX_RESPONSE_VALUE_LENGTH - 2) }), {}, 'version one over');
});

t.test('response a2a-extensions: a comma-separated list of URIs', async (t) => {
  const ext = (v: string | string[]) => filterUpstreamResponseHeaders({ 'a2a-extensions': v })['a2a-extensions'];
  t.equal(ext('https://a.example/x,urn:b:c'), 'https://a.example/x, urn:b:c', 'normalized separator');
  t.equal(ext(['https://a.example/x', 'urn:b']), 'https://a.example/x, urn:b', 'repeated headers joined');
  t.equal(ext('urn:a, , urn:b,'), 'urn:a, urn:b', 'empty list items skipped');
  t.equal(ext('https://a.example/x?q=1&r=%20#f'), 'https://a.example/x?q=1&r=%20#f');
  t.equal(ext('urn:a, not a uri'), undefined, 'one bad item drops the header');
  t.equal(ext('no-scheme'), undefined);
  t.equal(ext('1http://x'), undefined, 'scheme starts with a letter');
  t.equal(ext('urn:a\tb'), undefined, 'control characters');
  t.equal(ext('urn:<script>'), undefined);
  t.equal(ext(' , '), undefined, 'nothing left');
  t.equal(ext('/ext/v1'), undefined, 'a relative reference is not an absolute URI');
  t.equal(ext('//example.com/ext'), undefined, 'nor a network-path reference');
  t.equal(ext('https://[zz]/x'), undefined, 'URI characters, but no URL parser accepts it');
  t.equal(ext('urn:a2a:ext:timestamp'), 'urn:a2a:ext:timestamp', 'a URN is absolute');
});
