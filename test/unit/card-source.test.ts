import t from 'tap';
import { parseConfig } from '../../src/loader/load.js';
import { CardFetchError, cardUrlFor, type FetchCard } from '../../src/cards/card-fetch.js';
import { loadRemoteCard, parseCardBody } from '../../src/cards/card-source.js';

const reasonOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof CardFetchError) return err.reason;
    throw err;
  }
  return 'no error';
};
const buf = (s: string | Uint8Array) => Buffer.from(s);
const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

t.test('parseCardBody refuses what is not one JSON object, naming a gateway reason', async (t) => {
  t.same(parseCardBody(buf(' {"name":"x"} '), 8), { name: 'x' });
  t.same(parseCardBody(buf('\ufeff{"name":"x"}'), 8), { name: 'x' }, 'a UTF-8 BOM is tolerated');
  t.equal(reasonOf(() => parseCardBody(buf(''), 8)), 'EMPTY_RESPONSE');
  t.equal(reasonOf(() => parseCardBody(buf('  \n'), 8)), 'EMPTY_RESPONSE');
  t.equal(reasonOf(() => parseCardBody(buf('<html></html>'), 8)), 'NON_JSON_RESPONSE');
  t.equal(reasonOf(() => parseCardBody(buf('[{}]'), 8)), 'NON_JSON_RESPONSE');
  t.equal(reasonOf(() => parseCardBody(buf('{"name":'), 8)), 'INVALID_JSON');
  t.equal(reasonOf(() => parseCardBody(buf(new Uint8Array([0x7b, 0xff, 0x7d])), 8)), 'INVALID_UTF8');
  t.equal(reasonOf(() => parseCardBody(buf('{"__proto__":{"x":1}}'), 8)), 'UNSAFE_JSON');
  t.equal(reasonOf(() => parseCardBody(buf('{"constructor":{"prototype":{}}}'), 8)), 'UNSAFE_JSON');
});

t.test('parseCardBody: nesting just under maxJsonDepth parses, just over is refused', async (t) => {
  t.ok(parseCardBody(buf(nested(8)), 8));
  t.equal(reasonOf(() => parseCardBody(buf(nested(9)), 8)), 'JSON_TOO_DEEP');
});

const config = parseConfig(
  [
    'remotes:',
    '  a:',
    '    url: https://agent.example.com/a2a/v1',
    '  b:',
    '    url: https://agent.example.com/a2a/v1',
    '    agentCardUrl: https://cards.example.com/a.json',
  ].join('\n'),
);
const remoteA = config.remotes.get('a')!;

t.test('config: card keys get their defaults; agentCardUrl replaces the well-known path', async (t) => {
  t.equal(remoteA.limits.maxCardBytes, 262_144);
  t.equal(remoteA.limits.maxCardTextBytes, 2048);
  t.equal(remoteA.timeouts.cardMs, 10_000);
  t.equal(remoteA.timeouts.cardCacheTtlMs, 300_000);
  t.equal(remoteA.timeouts.cardCacheStaleMs, 3_600_000);
  t.equal(config.server.trustProxy, false);
  t.equal(config.server.publicBaseUrl, undefined);
  t.equal(cardUrlFor(remoteA).href, 'https://agent.example.com/.well-known/agent-card.json');
  t.equal(cardUrlFor(config.remotes.get('b')!).href, 'https://cards.example.com/a.json');
  t.throws(() => parseConfig('remotes:\n  a:\n    url: https://x.example/\n    agentCardUrl: file:///etc/passwd\n'), { name: 'ConfigError' });
  t.throws(() => parseConfig('server:\n  publicBaseUrl: ftp://x.example/\nremotes:\n  a:\n    url: https://x.example/\n'), { name: 'ConfigError' });
});

const answering = (status: number, body: string, headers: Record<string, string> = {}): FetchCard =>
  async () => ({ status, headers, body: Buffer.from(body) });
const signal = new AbortController().signal;
const v10 = JSON.stringify({ name: 'n', supportedInterfaces: [{ url: 'https://agent.example.com/a2a/v1', protocolBinding: 'JSONRPC' }] });

t.test('loadRemoteCard: a valid card with its max-age', async (t) => {
  const loaded = await loadRemoteCard(remoteA, answering(200, v10, { 'cache-control': 'max-age=30' }), signal);
  t.equal(loaded.card.generation, '1.0');
  t.equal(loaded.maxAgeMs, 30_000);
  t.equal((await loadRemoteCard(remoteA, answering(299, v10), signal)).maxAgeMs, undefined);
});

t.test('loadRemoteCard: non-2xx, invalid JSON and schema failures are CardFetchErrors', async (t) => {
  await t.rejects(loadRemoteCard(remoteA, answering(199, v10), signal), { name: 'CardFetchError', reason: 'UPSTREAM_HTTP_ERROR', httpStatus: 199 });
  await t.rejects(loadRemoteCard(remoteA, answering(300, v10), signal), { name: 'CardFetchError', reason: 'UPSTREAM_HTTP_ERROR', detail: 'card request answered HTTP 300' });
  await t.rejects(loadRemoteCard(remoteA, answering(200, '{'), signal), { name: 'CardFetchError', reason: 'INVALID_JSON' });
  await t.rejects(loadRemoteCard(remoteA, answering(200, '{"name":"PAYLOAD"}'), signal), {
    name: 'CardFetchError',
    reason: 'INVALID_AGENT_CARD',
    detail: 'card has neither "supportedInterfaces" (A2A 1.0) nor "url" (A2A 0.3)',
  });
});
