/**
 * Which A2A generations a remote speaks over JSON-RPC (the version bridge,
 * issue 17, decides from this whether a caller is translated). Config wins
 * (`remotes.<name>.versions`); else the remote's card says it: a 1.0 card
 * names a protocolVersion per interface (its JSONRPC interfaces count; when
 * it lists none, all of them), a 0.3 card has one protocolVersion for all.
 * Unknown (no config, no card seen, no version the gateway bridges) means the
 * gateway passes the call through as it is. Pure.
 */
import type { ProtocolGeneration } from './operations.js';
import type { ValidCard } from './card-cache.js';

/** The generations the bridge translates between, in the order -32009 names them. */
export const BRIDGED_GENERATIONS: readonly ProtocolGeneration[] = Object.freeze(['0.3', '1.0']);

const MAJOR_MINOR = /^\s*(\d{1,3})\.(\d{1,3})(?:\.\d{1,3})?\s*$/;

/** The generation a protocolVersion ("0.3.0", "1.0", " 1.0.1") belongs to; undefined for any other version. */
export function generationOfVersion(version: unknown): ProtocolGeneration | undefined {
  if (typeof version !== 'string') return undefined;
  const match = MAJOR_MINOR.exec(version);
  if (!match) return undefined;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major === 0 && minor === 3) return '0.3';
  if (major === 1 && minor === 0) return '1.0';
  return undefined;
}

/** The generations a validated card says the remote speaks over JSON-RPC; undefined when it names none the bridge knows. */
export function cardGenerations(card: ValidCard): readonly ProtocolGeneration[] | undefined {
  const found = new Set<ProtocolGeneration>();
  if (card.generation === '0.3') {
    // 0.3's additionalInterfaces carry no version of their own: the card's is theirs too.
    const generation = generationOfVersion(card.card.protocolVersion ?? '0.3');
    if (generation) found.add(generation);
  } else {
    const interfaces = Array.isArray(card.card.supportedInterfaces) ? (card.card.supportedInterfaces as unknown[]) : [];
    const records = interfaces.filter((i): i is Record<string, unknown> => i !== null && typeof i === 'object');
    const jsonrpc = records.filter((i) => i.protocolBinding === 'JSONRPC');
    for (const i of jsonrpc.length > 0 ? jsonrpc : records) {
      const generation = generationOfVersion(i.protocolVersion);
      if (generation) found.add(generation);
    }
  }
  return found.size === 0 ? undefined : BRIDGED_GENERATIONS.filter((g) => found.has(g));
}

/** `remotes.<name>.versions` when set, else what the card said (undefined: unknown, the gateway does not bridge). */
export function remoteGenerations(
  configured: readonly ProtocolGeneration[] | undefined,
  learned: readonly ProtocolGeneration[] | undefined,
): readonly ProtocolGeneration[] | undefined {
  return configured !== undefined && configured.length > 0 ? configured : learned;
}

/**
 * What each remote's card said last, kept apart from the card cache: a card marked no-cache or no-store is
 * not kept (RFC 9111), but the generations read from it (not the card) are what the call path routes by
 * until the next card fetch says otherwise. A reload forgets a changed remote.
 */
export class LearnedVersions {
  readonly #byRemote = new Map<string, readonly ProtocolGeneration[]>();

  learn(remote: string, card: ValidCard): void {
    const generations = cardGenerations(card);
    if (generations === undefined) this.#byRemote.delete(remote);
    else this.#byRemote.set(remote, generations);
  }

  get(remote: string): readonly ProtocolGeneration[] | undefined {
    return this.#byRemote.get(remote);
  }

  forget(remote: string): void {
    this.#byRemote.delete(remote);
  }
}
