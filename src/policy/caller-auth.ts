/**
 * Optional authentication of local callers to the gateway itself
 * (`server.auth`), for deployments that do not bind loopback only. Tokens come
 * from one env var (comma-separated, so they can be rotated by listing the
 * old and the new one); comparison is constant-time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServerConfig } from '../config/schema.js';
import { CredentialError } from './credentials.js';

export type CallerCheck = (authorization: string | undefined) => boolean;

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

export function createCallerAuth(auth: ServerConfig['auth'], env: Readonly<Record<string, string | undefined>> = process.env): CallerCheck | undefined {
  if (!auth) return undefined;
  const raw = env[auth.tokensEnv];
  const tokens = (raw ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
  if (tokens.length === 0) throw new CredentialError(`server.auth: environment variable ${auth.tokensEnv} is not set or is empty`);
  // Hashing first makes every comparison the same length, so timingSafeEqual applies.
  const accepted = tokens.map(digest);
  return (authorization) => {
    const match = /^Bearer ([\x21-\x7e]+)$/i.exec(authorization ?? '');
    if (!match?.[1]) return false;
    const given = digest(match[1]);
    let ok = false;
    for (const token of accepted) ok = timingSafeEqual(token, given) || ok;
    return ok;
  };
}
