/**
 * Card fetches obey the remote's policy, through the whole gateway:
 * - the cache key is the validated Major.Minor of A2A-Version: six raw
 *   spellings of 1.0 cost one upstream fetch, and the remote is asked with
 *   the canonical "1.0"; missing, empty and "0.3" share the 0.3 entry;
 * - the same pools as calls (a card fetch reuses the call's connection; a
 *   card on another origin gets a pool of its own that keeps its connection
 *   from one fetch to the next), with the framing guard and the buffer budget;
 * - on the remote's origin: rate limit, concurrency slots and breaker apply
 *   and its 5xx count against the breaker; on another origin they do not;
 * - one "card fetch" line per upstream fetch and one "card request" line per
 *   caller request, with a2a_egress_card_fetches_total / _card_requests_total.
 */
import t from 'tap';
import { request } from 'undici';
import { reasonOf, rpc, rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';
import { httpResponse, startRawUpstream, type RawUpstream } from '../support/raw-upstream.js';
import { card, startCardServer, type CardServer } from '../support/card-server.js';

let main: CardServer;
let other: CardServer;
let raw: RawUpstream;
t.before(async () => {
  [main, raw] = await Promise.all([startCardServer(), startRawUpstream()]);
  other = await startCardServer(() => main.url);
});
t.teardown(async () => {
  await Promise.all([main.close(), other.close(), raw.close()]);
});

const getCard = async (gw: RunningGateway, remote: string, headers: Record<string, string> = {}) => {
  const res = await request(`${gw.url}/remotes/${remote}/.well-known/agent-card.json`, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, reason: (JSON.parse(text) as { reason?: string }).reason };
};

t.test('the cache key is the validated Major.Minor: six spellings of 1.0, one fetch', async (t) => {
  const gw = await startGateway(`
server: { maxEventLoopDelayMs: 0 }
remotes:
  v: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/versions/card.json', allowPrivateNetwork: true }
`);
  t.teardown(() => gw.close());
  const hits = () => main.cardHits.filter((h) => h.path === '/versions/card.json');
  for (const spelling of ['1.0', '01.0', '1.00', '1.0.3', '001.000', ' 1.0\t']) {
    const got = await getCard(gw, 'v', { 'a2a-version': spelling });
    t.equal(got.status, 200, `A2A-Version "${spelling}" is served`);
  }
  t.equal(hits().length, 1, 'one upstream fetch for all six');
  t.equal(hits()[0]?.version, '1.0', 'the remote was asked with the canonical "1.0"');
  t.equal((await getCard(gw, 'v', { 'a2a-version': '1.1' })).status, 200);
  t.equal(hits().length, 2, 'another Major.Minor is another entry');
  const noVersion: Record<string, string>[] = [{}, { 'a2a-version': '' }, { 'a2a-version': '0.3' }, { 'a2a-version': 'junk' }];
  for (const headers of noVersion) await getCard(gw, 'v', headers);
  t.equal(hits().length, 3, 'missing, empty, "0.3" and an invalid value all mean 0.3: one more fetch');
  t.equal(hits()[2]?.version, undefined, 'asked as a 0.3 client asks: without the header');

  const fetchLines = gw.logs.filter((l) => l.msg === 'card fetch');
  t.equal(fetchLines.length, 3, 'one "card fetch" line per upstream fetch');
  t.match(fetchLines[0], { level: 30, cardFetch: { remote: 'v', origin: 'remote', outcome: 'ok', httpStatus: 200, a2aVersion: '1.0' } });
  t.ok(((fetchLines[0]!.cardFetch as { bytes: number }).bytes) > 0);
  const requestLines = gw.logs.filter((l) => l.msg === 'card request');
  t.equal(requestLines.length, 11, 'one "card request" line per caller request');
  t.match(requestLines[0], { cardRequest: { remote: 'v', outcome: 'ok', status: 200, fetched: true, a2aVersion: '1.0' } });
  t.match(requestLines[1], { cardRequest: { fetched: false } });
  const metrics = (await gw.app.inject({ method: 'GET', url: '/metrics' })).body;
  t.match(metrics, /a2a_egress_card_fetches_total\{remote="v",outcome="ok"\} 3/);
  t.match(metrics, /a2a_egress_card_requests_total\{remote="v",outcome="ok"\} 11/);
  t.equal((await getCard(gw, 'nope')).status, 404);
  t.match((await gw.app.inject({ method: 'GET', url: '/metrics' })).body, /a2a_egress_card_requests_total\{remote="unknown",outcome="UNKNOWN_REMOTE"\} 1/);
});

t.test('same pools as calls: a card fetch reuses the call’s connection; another origin keeps a pool of its own', async (t) => {
  const gw = await startGateway(`
server: { maxEventLoopDelayMs: 0 }
defaults: { allowPrivateNetwork: true, timeouts: { cardCacheTtlMs: 1 } }
remotes:
  same: { url: '${main.url}/a2a' }
  elsewhere: { url: '${main.url}/a2a', agentCardUrl: '${other.url}/cdn/card.json' }
`);
  t.teardown(() => gw.close());
  await main.tracker.destroyAll();
  await other.tracker.destroyAll();
  const mainBefore = main.tracker.total();
  t.ok((await rpc(`${gw.url}/remotes/same/ok`, rpcRequest('GetTask', 'p1', { id: 't' }))).json.result);
  t.equal((await getCard(gw, 'same')).status, 200);
  t.equal(main.tracker.total() - mainBefore, 1, 'the call and the card fetch shared one pooled connection');

  const otherBefore = other.tracker.total();
  t.equal((await getCard(gw, 'elsewhere')).status, 200);
  await new Promise((r) => setTimeout(r, 20));
  t.equal((await getCard(gw, 'elsewhere')).status, 200, 'fetched again (TTL 1 ms)');
  t.equal(other.cardHits.filter((h) => h.path === '/cdn/card.json').length, 2);
  t.equal(other.tracker.total() - otherBefore, 1, 'the other origin’s pool kept its connection (no fresh client per fetch)');
  t.match(gw.logs.filter((l) => l.msg === 'card fetch').at(-1), { cardFetch: { remote: 'elsewhere', origin: 'other', outcome: 'ok' } });
});

t.test('framing guard and buffer budget apply to card fetches', async (t) => {
  raw.route('/dup-cl/card.json', [{ write: `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\ncontent-length: 2\r\n\r\n{}` }, 'end']);
  raw.route('/ok/card.json', [{ write: httpResponse(card(raw.url)) }]);
  const MiB = 1024 * 1024;
  const gw = await startGateway(`
server: { maxEventLoopDelayMs: 0, maxBufferedBytes: ${MiB} }
defaults: { allowPrivateNetwork: true, limits: { maxCardBytes: ${2 * MiB}, maxResponseBytes: 65536, maxEventBytes: 65536 } }
remotes:
  framing: { url: '${raw.url}/a2a', agentCardUrl: '${raw.url}/dup-cl/card.json' }
  fine: { url: '${raw.url}/a2a', agentCardUrl: '${raw.url}/ok/card.json' }
  under: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/big-card?bytes=${MiB - 4096}' }
  over: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/big-card?bytes=${MiB + 4096}' }
`);
  t.teardown(() => gw.close());
  const framing = await getCard(gw, 'framing');
  t.equal(framing.status, 502);
  t.equal(framing.reason, 'UPSTREAM_PROTOCOL_ERROR', 'two Content-Length headers: refused before any body byte');
  t.equal((await getCard(gw, 'fine')).status, 200, 'a well-framed card from the same raw server');
  t.equal((await getCard(gw, 'under')).status, 200, 'a card just under the 1 MiB budget (and under maxCardBytes) is served');
  const over = await getCard(gw, 'over');
  t.equal(over.status, 503, 'just over the gateway-wide budget: try later');
  t.equal(over.reason, 'GATEWAY_OVERLOADED');
});

t.test('on the remote’s origin: rate limit, concurrency slots and breaker apply, and card 5xx feed the breaker', async (t) => {
  const gw = await startGateway(`
server: { maxEventLoopDelayMs: 0 }
defaults: { allowPrivateNetwork: true, retries: { attempts: 1 }, timeouts: { cardCacheTtlMs: 1, cardCacheStaleMs: 1 } }
remotes:
  rated: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/rated/card.json', rateLimit: { perSecond: 0.01, burst: 2 } }
  rated1: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/rated1/card.json', rateLimit: { perSecond: 0.01, burst: 1 } }
  slots: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/slots/card.json', limits: { maxConcurrent: 1, maxQueued: 0 } }
  broken: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/broken/card.json', circuitBreaker: { failureThreshold: 1, cooldownMs: 60000 } }
  cardfail: { url: '${main.url}/a2a', agentCardUrl: '${main.url}/card-500/card.json', circuitBreaker: { failureThreshold: 1, cooldownMs: 60000 } }
  cdn: { url: '${main.url}/a2a', agentCardUrl: '${other.url}/cdn/card.json', circuitBreaker: { failureThreshold: 1, cooldownMs: 60000 }, rateLimit: { perSecond: 0.01, burst: 1 } }
`);
  t.teardown(() => gw.close());

  // Rate, just under: burst 2 = one call and one card fetch; the card took the last token, so the next call is refused.
  t.ok((await rpc(`${gw.url}/remotes/rated/ok`, rpcRequest('GetTask', 'r1', { id: 't' }))).json.result, 'call: token 1 of 2');
  t.equal((await getCard(gw, 'rated')).status, 200, 'card fetch: token 2 of 2 (just under)');
  t.equal(reasonOf(await rpc(`${gw.url}/remotes/rated/ok`, rpcRequest('GetTask', 'r2', { id: 't' }))), 'RATE_LIMITED', 'the card fetch used a token');
  // Just over: burst 1, taken by a call; the card (never cached, so nothing stale to serve) is refused.
  t.ok((await rpc(`${gw.url}/remotes/rated1/ok`, rpcRequest('GetTask', 'r3', { id: 't' }))).json.result, 'call: token 1 of 1');
  const limited = await getCard(gw, 'rated1');
  t.equal(limited.status, 503, 'the card fetch is refused (just over)');
  t.equal(limited.reason, 'RATE_LIMITED');
  t.equal(limited.headers['retry-after'], '1');

  // Concurrency: the one slot is held by a call.
  const held = rpc(`${gw.url}/remotes/slots/hold`, rpcRequest('SendMessage', 's1', {}));
  while (main.held() < 1) await new Promise((r) => setTimeout(r, 10));
  const busy = await getCard(gw, 'slots');
  t.equal(busy.reason, 'OVERLOADED', 'no free slot: the card fetch is refused');
  main.release();
  await held;
  t.equal((await getCard(gw, 'slots')).status, 200, 'with the slot free it is fetched');

  // Breaker: one failed call opens it; the card is not fetched while open.
  const hitsBefore = main.cardHits.length;
  t.equal(reasonOf(await rpc(`${gw.url}/remotes/broken/fail`, rpcRequest('GetTask', 'b1', { id: 't' }))), 'UPSTREAM_HTTP_ERROR');
  const open = await getCard(gw, 'broken');
  t.equal(open.reason, 'CIRCUIT_OPEN', 'an open circuit refuses the card fetch');
  t.equal(main.cardHits.length, hitsBefore, 'nothing was sent to the failing remote');

  // A card endpoint answering 5xx counts against the breaker like a call would.
  t.equal((await getCard(gw, 'cardfail')).reason, 'UPSTREAM_HTTP_ERROR');
  t.equal(reasonOf(await rpc(`${gw.url}/remotes/cardfail/ok`, rpcRequest('GetTask', 'c1', { id: 't' }))), 'CIRCUIT_OPEN', 'the card’s 500 opened the circuit');

  // Another origin: the remote's breaker and bucket describe the remote, not the card host.
  t.equal(reasonOf(await rpc(`${gw.url}/remotes/cdn/fail`, rpcRequest('GetTask', 'x1', { id: 't' }))), 'UPSTREAM_HTTP_ERROR', 'the call opens the circuit (and used the only token)');
  t.equal((await getCard(gw, 'cdn')).status, 200, 'the card on another origin is still fetched, without a rate token');
});
