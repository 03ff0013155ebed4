/**
 * Which card a caller gets (the version bridge, issue 17), before the usual
 * rewrite to the gateway. Pure.
 *
 * - `A2A-Version: 1.x`: a 1.0 card; `A2A-Version: 0.x`: a 0.3 card; the remote's card is bridged when it is of the
 *   other generation (bridgeCard).
 * - No `A2A-Version`: A2A reads that as 0.3, but 1.0 clients fetch cards without it too (the a2a-tck 1.0 does, and
 *   validates a strict 1.0 card; the @a2a-js/sdk 1.3 resolver sends it), and nothing else in the request tells the
 *   two apart. `remotes.<name>.unversionedCard` decides: `remote` (default) the card as the remote wrote it, as
 *   before the bridge; `"0.3"` or `"1.0"` that generation's card.
 * - A card that already carries both generations' members (the @a2a-js/sdk compat layer writes such 0.3 cards) is
 *   served as it is.
 */
import { bridgeCard } from './bridge/index.js';
import type { ProtocolGeneration } from './operations.js';

export type UnversionedCard = 'remote' | ProtocolGeneration;

export type CardForCaller =
  | { readonly ok: true; readonly card: Record<string, unknown>; readonly generation: ProtocolGeneration; readonly dropped: readonly string[] }
  | { readonly ok: false; readonly problem: string };

/** `version`: the caller's A2A-Version as Major.Minor, undefined when it sent none. */
export function cardForCaller(
  card: Record<string, unknown>,
  generation: ProtocolGeneration,
  version: string | undefined,
  unversioned: UnversionedCard = 'remote',
): CardForCaller {
  const asked: ProtocolGeneration =
    version === undefined ? (unversioned === 'remote' ? generation : unversioned) : Number(version.split('.', 1)[0]) >= 1 ? '1.0' : '0.3';
  if (generation === asked || readableAs(card, asked)) return { ok: true, card, generation, dropped: [] };
  const bridged = bridgeCard(generation, asked, card);
  if (!bridged.ok) return { ok: false, problem: bridged.problem };
  return { ok: true, card: bridged.value, generation: asked, dropped: bridged.dropped };
}

/** Some cards carry both generations' members (the @a2a-js/sdk compat layer's 0.3 card keeps `supportedInterfaces`). */
function readableAs(card: Record<string, unknown>, generation: ProtocolGeneration): boolean {
  if (generation === '1.0') return Array.isArray(card.supportedInterfaces);
  return typeof card.url === 'string' && typeof card.protocolVersion === 'string' && card.protocolVersion.startsWith('0.');
}
