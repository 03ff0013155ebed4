/**
 * The push key ring: the secrets that seal push tickets (./ticket.ts) and
 * derive the credentials the gateway mints for remotes. Rotation without
 * shared storage: the first key seals every new ticket, every key opens
 * the tickets it sealed, so a new key is put first, and an old one is
 * removed once no config made under it is still wanted
 * (`server.push.maxConfigAgeSeconds` after it stopped being first).
 *
 * Each configured key is 32 random bytes (base64 or base64url). Nothing
 * uses it directly: HKDF-SHA-256 derives an AES-256-GCM key for tickets
 * and an HMAC-SHA-256 key for credentials, so the two uses never share a
 * key. A key's id (4 bytes of an HMAC under it) travels in the ticket, so
 * opening picks the right key at once and "sealed under a key this
 * gateway no longer holds" is an outcome of its own.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import { inspect } from 'node:util';

export const KEY_BYTES = 32;
export const KEY_ID_BYTES = 4;
/** More keys than this is a misconfiguration (each one costs a lookup slot, not time: ids select the key). */
export const MAX_KEYS = 16;

export interface PushKey {
  /** 4 bytes, written into every ticket this key seals. */
  readonly id: Buffer;
  /** AES-256-GCM key for tickets. */
  readonly ticketKey: Buffer;
  /** HMAC-SHA-256 key for the credential minted for each ticket. */
  readonly credentialKey: Buffer;
}

export class PushKeyRing {
  readonly #keys: readonly PushKey[];
  readonly #byId: ReadonlyMap<string, PushKey>;

  constructor(secrets: readonly Buffer[]) {
    if (secrets.length === 0) throw new RangeError('a push key ring needs at least one key');
    this.#keys = secrets.map(deriveKey);
    this.#byId = new Map(this.#keys.map((k) => [k.id.toString('hex'), k]));
    if (this.#byId.size !== this.#keys.length) throw new RangeError('two push keys have the same id (the same key twice?)');
  }

  /** The key every new ticket is sealed with. */
  get current(): PushKey {
    return this.#keys[0]!;
  }

  /** The key with this id, if the ring still holds it. */
  byId(id: Buffer): PushKey | undefined {
    return this.#byId.get(id.toString('hex'));
  }

  get size(): number {
    return this.#keys.length;
  }

  // Keys are secrets: never print them.
  toString(): string {
    return `PushKeyRing(${this.#keys.length} keys)`;
  }
  toJSON(): string {
    return this.toString();
  }
  [inspect.custom](): string {
    return this.toString();
  }
}

function deriveKey(secret: Buffer): PushKey {
  if (secret.length !== KEY_BYTES) throw new RangeError(`a push key must be ${KEY_BYTES} bytes`);
  const derive = (info: string): Buffer => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32));
  return {
    id: createHmac('sha256', secret).update('a2a-egress push key id').digest().subarray(0, KEY_ID_BYTES),
    ticketKey: derive('a2a-egress push ticket v1'),
    credentialKey: derive('a2a-egress push credential v1'),
  };
}

export type ParsedKeys = { readonly ok: true; readonly ring: PushKeyRing } | { readonly ok: false; readonly problem: string };

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * Key text from an environment variable or a file: keys separated by commas
 * or whitespace, `#` starts a comment to the end of its line, newest first.
 * Problems name the key's position, never its value.
 */
export function parsePushKeys(text: string): ParsedKeys {
  const tokens = text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, ''))
    .join(' ')
    .split(/[\s,]+/)
    .filter((t) => t !== '');
  if (tokens.length === 0) return { ok: false, problem: 'no key given (each key: base64 of 32 random bytes, e.g. `openssl rand -base64 32`)' };
  if (tokens.length > MAX_KEYS) return { ok: false, problem: `more than ${MAX_KEYS} keys` };
  const secrets: Buffer[] = [];
  for (const [i, token] of tokens.entries()) {
    const bytes = BASE64.test(token) ? Buffer.from(token.replace(/-/g, '+').replace(/_/g, '/'), 'base64') : undefined;
    if (bytes?.length !== KEY_BYTES) return { ok: false, problem: `key ${i + 1} is not base64 of exactly ${KEY_BYTES} bytes` };
    if (secrets.some((s) => s.equals(bytes))) return { ok: false, problem: `key ${i + 1} is given twice` };
    secrets.push(bytes);
  }
  return { ok: true, ring: new PushKeyRing(secrets) };
}
