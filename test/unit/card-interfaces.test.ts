/**
 * `binding: auto` reads a remote's card interfaces on every HTTP+JSON call: the lookup answers synchronously while the
 * answer is known (a fresh card already read, a failure still remembered) and asks the cache (a promise) otherwise;
 * the decisions made from it (upstream target, gRPC or not) follow the card the cache holds.
 */
import t from 'tap';
import { CardCache, type ValidCard } from '../../src/a2a/card-cache.js';
import type { FetchCard } from '../../src/cards/card-fetch.js';
import { parseConfig } from '../../src/loader/load.js';
import type { GatewayContext } from '../../src/proxy/context.js';
import { grpcUpstreamWanted } from '../../src/routes/grpc-upstream-call.js';
import { FAILED_CARD_RETRY_MS, remoteCardInterfaces } from '../../src/routes/remote-card-interfaces.js';
import { upstreamTargetFor } from '../../src/routes/upstream-binding.js';

const config = parseConfig(['remotes:', '  a:', '    url: https://agent.example.com/a2a/v1', '    timeouts: { cardCacheTtlMs: 60000 }'].join('\n'));
const remote = config.remotes.get('a')!;

const cardWith = (...interfaces: [binding: string, url: string][]) =>
  JSON.stringify({
    name: 'a',
    description: 'a',
    version: '1',
    supportedInterfaces: interfaces.map(([protocolBinding, url]) => ({ protocolBinding, url, protocolVersion: '1.0' })),
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  });

/** A card endpoint that answers what the test sets, counting requests. */
function cardServer(body: string, status = 200) {
  const state = { body, status, requests: 0 };
  const fetchCard: FetchCard = async () => {
    state.requests++;
    return { status: state.status, headers: { 'content-type': 'application/json' }, body: Buffer.from(state.body) };
  };
  return { state, fetchCard };
}

function setup(body: string, status = 200) {
  const clock = { ms: 1_000_000 };
  const now = () => clock.ms;
  const server = cardServer(body, status);
  const loaded: ValidCard[] = [];
  const lookup = remoteCardInterfaces(new CardCache<ValidCard>({ now }), server.fetchCard, now, (_name, card) => loaded.push(card));
  const ctx = { cardInterfaces: lookup } as unknown as GatewayContext;
  return { clock, server, loaded, lookup, ctx };
}

t.test('a fresh card is answered synchronously, the same array each time; past its TTL the cache is asked again', async (t) => {
  const { clock, server, loaded, lookup } = setup(cardWith(['HTTP+JSON', 'https://agent.example.com/rest']));
  const first = lookup(remote);
  t.ok(first instanceof Promise, 'nothing cached yet: the cache is asked');
  const interfaces = await first;
  t.same(interfaces, [{ binding: 'HTTP+JSON', url: 'https://agent.example.com/rest' }]);
  const again = lookup(remote);
  t.notOk(again instanceof Promise, 'then synchronously');
  t.equal(again, interfaces, 'the same array (the decisions are memoized on it)');
  t.equal(loaded.length, 1, 'onCardLoaded heard of the card once');
  clock.ms += 59_999;
  t.equal(lookup(remote), interfaces, 'just inside the TTL: still synchronous');
  clock.ms += 1;
  server.state.body = cardWith(['JSONRPC', 'https://agent.example.com/a2a/v1']);
  const refreshed = lookup(remote);
  t.ok(refreshed instanceof Promise, 'at the TTL: the cache is asked');
  t.same(await refreshed, [{ binding: 'JSONRPC', url: 'https://agent.example.com/a2a/v1' }]);
  t.equal(server.state.requests, 2);
  t.equal(loaded.length, 2, 'the new card was told too');
});

t.test('a card that cannot be had is remembered as such for FAILED_CARD_RETRY_MS, synchronously', async (t) => {
  const { clock, server, lookup } = setup('<html>down</html>', 503);
  t.equal(await lookup(remote), undefined);
  t.equal(lookup(remote), undefined, 'known to be missing: no promise');
  clock.ms += FAILED_CARD_RETRY_MS - 1;
  t.equal(lookup(remote), undefined, 'just inside the retry window: still no request');
  t.equal(server.state.requests, 1);
  clock.ms += 1;
  server.state.status = 200;
  server.state.body = cardWith(['HTTP+JSON', 'https://agent.example.com/rest']);
  const retried = lookup(remote);
  t.ok(retried instanceof Promise, 'at the end of the window the card is asked for again');
  t.same(await retried, [{ binding: 'HTTP+JSON', url: 'https://agent.example.com/rest' }]);
});

t.test("a card another path put in the cache is still told to onCardLoaded once (through the cache's get)", async (t) => {
  const clock = { ms: 0 };
  const now = () => clock.ms;
  const cache = new CardCache<ValidCard>({ now });
  const server = cardServer(cardWith(['HTTP+JSON', 'https://agent.example.com/rest']));
  const loaded: string[] = [];
  const first = remoteCardInterfaces(cache, server.fetchCard, now);
  await first(remote);
  const second = remoteCardInterfaces(cache, server.fetchCard, now, (name) => loaded.push(name));
  const answer = second(remote);
  t.ok(answer instanceof Promise, 'a card this lookup never told is read through get()');
  await answer;
  t.same(loaded, ['a']);
  t.notOk(second(remote) instanceof Promise);
  t.equal(server.state.requests, 1, 'the cached card was not fetched again');
});

t.test("auto: an HTTP+JSON caller's upstream target and gRPC verdict follow the card, synchronously once it is known", async (t) => {
  const { clock, server, ctx } = setup(cardWith(['HTTP+JSON', 'https://agent.example.com/rest'], ['GRPC', 'agent.example.com:443']));
  const pending = upstreamTargetFor(ctx, remote, 'http+json');
  t.ok(pending instanceof Promise);
  const first = await pending;
  t.ok(first.ok && first.target.codec.binding === 'http+json' && first.target.base.href === 'https://agent.example.com/rest');
  const second = upstreamTargetFor(ctx, remote, 'http+json');
  t.equal(second, first, 'synchronous, and the same choice object');
  t.equal(grpcUpstreamWanted(ctx, remote, 'http+json'), false, 'HTTP+JSON comes first on the card: not gRPC');
  t.equal(grpcUpstreamWanted(ctx, remote, 'http+json'), false, 'asked again: the memoized verdict');
  const jsonrpc = upstreamTargetFor(ctx, remote, 'jsonrpc');
  t.ok(!(jsonrpc instanceof Promise) && jsonrpc.ok && jsonrpc.target.codec.binding === 'jsonrpc', 'JSON-RPC callers never read the card');

  // The card changes at its TTL: both decisions follow the new card.
  clock.ms += 60_000;
  server.state.body = cardWith(['GRPC', 'agent.example.com:443'], ['JSONRPC', 'https://agent.example.com/a2a/v1']);
  const verdict = grpcUpstreamWanted(ctx, remote, 'http+json');
  t.ok(verdict instanceof Promise);
  t.equal(await verdict, true, 'gRPC first on the new card');
  t.equal(grpcUpstreamWanted(ctx, remote, 'http+json'), true);
  const target = upstreamTargetFor(ctx, remote, 'http+json');
  t.ok(!(target instanceof Promise) && target.ok && target.target.codec.binding === 'jsonrpc', 'its first HTTP interface is JSON-RPC');
});

t.test('auto without a usable card: JSON-RPC at url, and not gRPC', async (t) => {
  const { ctx } = setup('not json', 200);
  const target = await upstreamTargetFor(ctx, remote, 'http+json');
  t.ok(target.ok && target.target.codec.binding === 'jsonrpc' && target.target.base === remote.url);
  t.equal(grpcUpstreamWanted(ctx, remote, 'http+json'), false, 'the failure is remembered: synchronous');
  const again = upstreamTargetFor(ctx, remote, 'http+json');
  t.notOk(again instanceof Promise);
});
