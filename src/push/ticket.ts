/**
 * Push tickets: the mapping from a gateway webhook URL to the local agent's
 * own webhook, carried in the URL itself instead of in shared storage, so
 * it survives restarts and works on every replica that holds the keys.
 *
 * A ticket is AES-256-GCM over a small JSON object (the caller's webhook
 * URL, its authentication and token, remote, task id, config id, both
 * generations, issue time) under the ring's current key:
 *
 *   base64url( version(1) | keyId(4) | iv(12) | ciphertext | tag(16) )
 *
 * with version and key id as additional authenticated data. The remote
 * holding the URL learns nothing of what is inside (not the local URL,
 * not the caller's credentials), only its length; it cannot make or alter
 * one (GCM's tag). The overhead is 33 bytes before base64 (+44 characters),
 * plus 4/3 of the JSON.
 *
 * The credential the gateway gives the remote for that config is derived,
 * not stored: HMAC-SHA-256 of the ticket text under the key's credential
 * key, base64url (43 characters). The ticket alone (it sits in URLs, and
 * URLs end up in access logs) does not let anyone push: the credential is
 * checked too, in constant time.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ProtocolGeneration } from '../a2a/operations.js';
import { KEY_ID_BYTES, type PushKey, type PushKeyRing } from './keys.js';

export const TICKET_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES;
/** Longer ticket text is not opened at all (the config bound keeps real ones far below). */
export const MAX_TICKET_CHARS = 65_536;

/** The caller's authentication for its own webhook, in a form both generations can be written from. */
export interface CallerAuth {
  /** 1.0 has one scheme, 0.3 a list; a 1.0 scheme is a list of one. */
  readonly schemes: readonly string[];
  readonly credentials?: string;
}

export interface PushTicket {
  /** The caller's webhook URL: where pushes are delivered. */
  readonly target: string;
  readonly auth?: CallerAuth;
  /** The caller's `token` (sent to its webhook as X-A2A-Notification-Token). */
  readonly token?: string;
  readonly remote: string;
  /** The task the config belongs to; absent for a config given in SendMessage for a new task. */
  readonly taskId?: string;
  /** The config id the caller gave; absent when the remote assigns it. */
  readonly configId?: string;
  /** The generation the local agent speaks (what it is delivered). */
  readonly callerGeneration: ProtocolGeneration;
  /** The generation the remote speaks (what it pushes). */
  readonly remoteGeneration: ProtocolGeneration;
  /** Seconds since the epoch. */
  readonly issuedAt: number;
}

export type OpenedTicket =
  | {
      readonly ok: true;
      readonly ticket: PushTicket;
      readonly key: PushKey;
      /** Short, stable, non-secret name of this config (rate buckets, dedupe, logs): 16 hex digits of the ticket's hash. */
      readonly ref: string;
    }
  | { readonly ok: false; readonly problem: 'malformed' | 'unknown-key' | 'forged' };

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function sealTicket(ring: PushKeyRing, ticket: PushTicket, random: (n: number) => Buffer = randomBytes): string {
  const key = ring.current;
  const header = Buffer.concat([Buffer.from([TICKET_VERSION]), key.id]);
  const iv = random(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.ticketKey, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(JSON.stringify(toWire(ticket)), 'utf8'), cipher.final()]);
  return Buffer.concat([header, iv, body, cipher.getAuthTag()]).toString('base64url');
}

export function openTicket(ring: PushKeyRing, text: string): OpenedTicket {
  if (text.length === 0 || text.length > MAX_TICKET_CHARS || !BASE64URL.test(text)) return { ok: false, problem: 'malformed' };
  const bytes = Buffer.from(text, 'base64url');
  // One text per ticket: base64 with unused trailing bits (or extra characters) decodes to the same bytes.
  if (bytes.toString('base64url') !== text) return { ok: false, problem: 'malformed' };
  if (bytes.length < HEADER_BYTES + IV_BYTES + TAG_BYTES + 2 || bytes[0] !== TICKET_VERSION) return { ok: false, problem: 'malformed' };
  const key = ring.byId(bytes.subarray(1, HEADER_BYTES));
  if (!key) return { ok: false, problem: 'unknown-key' };
  const iv = bytes.subarray(HEADER_BYTES, HEADER_BYTES + IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  let plain: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.ticketKey, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(bytes.subarray(0, HEADER_BYTES));
    decipher.setAuthTag(tag);
    plain = Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES + IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return { ok: false, problem: 'forged' };
  }
  const ticket = fromWire(plain);
  if (!ticket) return { ok: false, problem: 'forged' };
  return { ok: true, ticket, key, ref: createHash('sha256').update(text).digest('hex').slice(0, 16) };
}

/** The credential the gateway mints for the config a ticket names (what the remote must present). */
export function mintCredential(key: PushKey, ticketText: string): string {
  return createHmac('sha256', key.credentialKey).update(ticketText).digest('base64url');
}

/**
 * Does `presented` equal `expected`? Constant time in the content: both are
 * hashed first, so even their lengths only decide a fixed-size comparison.
 */
export function credentialMatches(expected: string, presented: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b);
}

/** Too old, or issued implausibly far in the future (a replica's clock may run ahead by up to `skewSeconds`). */
export function ticketExpired(ticket: PushTicket, nowMs: number, maxAgeSeconds: number, skewSeconds = 300): boolean {
  const now = Math.floor(nowMs / 1000);
  return ticket.issuedAt + maxAgeSeconds < now || ticket.issuedAt > now + skewSeconds;
}

interface WireTicket {
  u: string;
  a?: { s: string[]; c?: string };
  k?: string;
  r: string;
  t?: string;
  i?: string;
  g: ProtocolGeneration;
  rg: ProtocolGeneration;
  iat: number;
}

function toWire(t: PushTicket): WireTicket {
  const wire: WireTicket = { u: t.target, r: t.remote, g: t.callerGeneration, rg: t.remoteGeneration, iat: t.issuedAt };
  if (t.auth) wire.a = t.auth.credentials === undefined ? { s: [...t.auth.schemes] } : { s: [...t.auth.schemes], c: t.auth.credentials };
  if (t.token !== undefined) wire.k = t.token;
  if (t.taskId !== undefined) wire.t = t.taskId;
  if (t.configId !== undefined) wire.i = t.configId;
  return wire;
}

const isGeneration = (v: unknown): v is ProtocolGeneration => v === '0.3' || v === '1.0';
const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** Authenticated bytes of a shape this version never writes are treated as forged: never trusted half-way. */
function fromWire(text: string): PushTicket | undefined {
  let w: Partial<WireTicket>;
  try {
    w = JSON.parse(text) as Partial<WireTicket>;
  } catch {
    return undefined;
  }
  if (typeof w !== 'object' || w === null) return undefined;
  if (typeof w.u !== 'string' || typeof w.r !== 'string' || !isGeneration(w.g) || !isGeneration(w.rg)) return undefined;
  if (typeof w.iat !== 'number' || !Number.isSafeInteger(w.iat)) return undefined;
  if (!optionalString(w.k) || !optionalString(w.t) || !optionalString(w.i)) return undefined;
  let auth: CallerAuth | undefined;
  if (w.a !== undefined) {
    if (typeof w.a !== 'object' || w.a === null || !Array.isArray(w.a.s) || !w.a.s.every((s) => typeof s === 'string') || !optionalString(w.a.c)) return undefined;
    auth = w.a.c === undefined ? { schemes: w.a.s } : { schemes: w.a.s, credentials: w.a.c };
  }
  return {
    target: w.u,
    ...(auth ? { auth } : {}),
    ...(w.k === undefined ? {} : { token: w.k }),
    remote: w.r,
    ...(w.t === undefined ? {} : { taskId: w.t }),
    ...(w.i === undefined ? {} : { configId: w.i }),
    callerGeneration: w.g,
    remoteGeneration: w.rg,
    issuedAt: w.iat,
  };
}
