/**
 * The interfaces a remote's card offers, in the card's order, through the
 * gateway's card cache (the one the card routes use: a card is fetched once
 * whoever asks). `remotes.<name>.binding: auto` picks from these
 * (routes/upstream-binding.ts). A2A 0.3 cards count only for JSON-RPC: their
 * HTTP+JSON is 0.3's, which the gateway does not speak upstream.
 */
import type { CardCache, ValidCard } from '../a2a/card-cache.js';
import type { FetchCard } from '../cards/card-fetch.js';
import { loadRemoteCard } from '../cards/card-source.js';
import { isRecord } from '../a2a/card-text.js';
import type { RemoteConfig } from '../config/schema.js';
import type { CardInterfaces } from '../proxy/context.js';
import { cardCacheKey } from './agent-card.js';

/** One interface of a card: its binding and url (the shape the call path reads, proxy/context.ts). */
export type CardInterface = NonNullable<CardInterfaces>[number];

const CARD_VERSION = '1.0';

/** Per card object: a cached card is read once, not on every call that picks a binding from it. */
const interfacesByCard = new WeakMap<ValidCard, readonly CardInterface[]>();

/** How long a card that could not be had is not asked for again by calls (the card routes still ask every time). */
export const FAILED_CARD_RETRY_MS = 5_000;

export function interfacesOfCard(valid: ValidCard): readonly CardInterface[] {
  let interfaces = interfacesByCard.get(valid);
  if (interfaces === undefined) {
    interfaces = Object.freeze(readInterfaces(valid));
    interfacesByCard.set(valid, interfaces);
  }
  return interfaces;
}

function readInterfaces(valid: ValidCard): CardInterface[] {
  const card = valid.card;
  const entry = (binding: unknown, url: unknown): CardInterface[] => (typeof binding === 'string' && typeof url === 'string' ? [{ binding, url }] : []);
  if (valid.generation === '1.0') {
    const list = card.supportedInterfaces ?? card.supported_interfaces;
    return (Array.isArray(list) ? list : []).filter(isRecord).flatMap((i) => entry(i.protocolBinding ?? i.protocol_binding, i.url));
  }
  const additional = Array.isArray(card.additionalInterfaces) ? card.additionalInterfaces.filter(isRecord) : [];
  return [...entry(card.preferredTransport ?? 'JSONRPC', card.url), ...additional.flatMap((i) => entry(i.transport, i.url))].filter((i) => i.binding === 'JSONRPC');
}

/**
 * A lookup over the shared cache; undefined when the card cannot be had (the caller falls back). A failure is
 * remembered per remote config for FAILED_CARD_RETRY_MS (at most the card TTL): without a card every call would
 * otherwise fetch it again (failures are not cached), a request to the remote per call. A reload makes new remote
 * configs, so it asks again at once. `onCardLoaded`: every card this lookup loads (the version bridge learns the
 * remote's generations from it).
 *
 * Synchronous while the answer is known (a fresh card already read, or a failure still remembered), a promise only
 * when the cache must be asked: `binding: auto` is read on every HTTP+JSON call, and the promise, the cache's view
 * object and the await cost each call several microseconds (measured: the bench's HTTP+JSON caller of an `auto`
 * remote spent 1.15x the JSON-RPC path's CPU, one with a fixed binding 1.0x).
 */
export function remoteCardInterfaces(
  cache: CardCache<ValidCard>,
  fetchCard: FetchCard,
  now: () => number = Date.now,
  onCardLoaded?: (remote: string, card: ValidCard) => void,
): (remote: RemoteConfig) => CardInterfaces | Promise<CardInterfaces> {
  const failedUntil = new WeakMap<RemoteConfig, number>();
  // Told once per card object, like interfacesOfCard: not on every call (a reload drops a changed remote's card).
  const told = new WeakSet<ValidCard>();
  const load = async (remote: RemoteConfig, key: string): Promise<CardInterfaces> => {
    try {
      const cached = await cache.get(
        key,
        // The fetch's own deadline is the remote's cardMs (cards/card-fetch.ts).
        () => loadRemoteCard(remote, fetchCard, undefined, CARD_VERSION),
        { ttlMs: remote.timeouts.cardCacheTtlMs, staleMs: remote.timeouts.cardCacheStaleMs },
      );
      if (onCardLoaded && !told.has(cached.card)) {
        told.add(cached.card);
        onCardLoaded(remote.name, cached.card);
      }
      return interfacesOfCard(cached.card);
    } catch {
      failedUntil.set(remote, now() + Math.min(FAILED_CARD_RETRY_MS, remote.timeouts.cardCacheTtlMs));
      return undefined;
    }
  };
  return (remote) => {
    const until = failedUntil.get(remote);
    if (until !== undefined && now() < until) return undefined;
    const key = cardCacheKey(remote.name, CARD_VERSION);
    const card = cache.fresh(key);
    // A card some other path put in the cache is loaded here once, so onCardLoaded still hears of it.
    if (card !== undefined && (onCardLoaded === undefined || told.has(card))) return interfacesOfCard(card);
    return load(remote, key);
  };
}
