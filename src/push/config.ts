/**
 * `resolvePushConfig`: the validated `server.push` object (its schema and
 * defaults are src/config/push.ts) → the settings the push modules use (keys
 * read from the environment or a file, allowlist parsed).
 */
import { readFileSync } from 'node:fs';
import { builtinPush, type PushServerConfig, type PushServerFile } from '../config/push.js';
import { parsePushKeys, type PushKeyRing } from './keys.js';
import { parseTargetPolicy, type TargetPolicy } from './targets.js';

/** Everything the push modules need, resolved once: keys read, URLs parsed, defaults merged. */
export interface PushSettings extends Omit<PushServerConfig, 'publicBaseUrl' | 'keys' | 'allowedTargets'> {
  /** `publicBaseUrl` without a trailing slash; webhook URLs are `${webhookBase}/${ticket}`. */
  readonly webhookBase: string;
  /** The path part of `webhookBase` ('' at the root): the listener accepts POST `${basePath}/${ticket}`. */
  readonly basePath: string;
  readonly keys: PushKeyRing;
  readonly targets: TargetPolicy;
  readonly allowedTargets: readonly string[];
}

export class PushConfigError extends Error {
  override readonly name = 'PushConfigError';
}

export interface ResolveOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly readFile?: (path: string) => string;
}

/** The validated `server.push` object (schema checked by the config loader) → settings. Throws PushConfigError. */
export function resolvePushConfig(file: PushServerFile, opts: ResolveOptions = {}): PushSettings {
  const env = opts.env ?? process.env;
  const readFile = opts.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  if (!URL.canParse(file.publicBaseUrl)) throw new PushConfigError('server.push.publicBaseUrl is not a valid URL');
  const base = new URL(file.publicBaseUrl);
  if (base.username !== '' || base.password !== '') throw new PushConfigError('server.push.publicBaseUrl must not contain credentials');
  if (base.search !== '' || base.hash !== '') throw new PushConfigError('server.push.publicBaseUrl must have no query or fragment');
  const basePath = base.pathname.replace(/\/+$/, '');
  const webhookBase = `${base.origin}${basePath}`;

  let keyText: string;
  if ('env' in file.keys) {
    const value = env[file.keys.env];
    if (value === undefined || value.trim() === '') throw new PushConfigError(`server.push.keys: environment variable ${file.keys.env} is not set`);
    keyText = value;
  } else {
    try {
      keyText = readFile(file.keys.file);
    } catch (err) {
      throw new PushConfigError(`server.push.keys: cannot read ${file.keys.file}: ${(err as NodeJS.ErrnoException).code ?? 'unknown error'}`);
    }
  }
  const keys = parsePushKeys(keyText);
  if (!keys.ok) throw new PushConfigError(`server.push.keys: ${keys.problem}`);

  const allowedTargets = file.allowedTargets ?? builtinPush.allowedTargets;
  const targets = parseTargetPolicy(allowedTargets, file.allowPrivateTargets ?? builtinPush.allowPrivateTargets);
  if (!targets.ok) throw new PushConfigError(`server.push.allowedTargets: ${targets.problem}`);

  return {
    host: file.host ?? builtinPush.host,
    port: file.port,
    webhookBase,
    basePath,
    keys: keys.ring,
    targets: targets.policy,
    allowedTargets,
    allowPrivateTargets: file.allowPrivateTargets ?? builtinPush.allowPrivateTargets,
    maxBodyBytes: file.maxBodyBytes ?? builtinPush.maxBodyBytes,
    maxJsonDepth: file.maxJsonDepth ?? builtinPush.maxJsonDepth,
    maxConcurrent: file.maxConcurrent ?? builtinPush.maxConcurrent,
    maxConnections: file.maxConnections ?? builtinPush.maxConnections,
    requestTimeoutMs: file.requestTimeoutMs ?? builtinPush.requestTimeoutMs,
    maxConfigAgeSeconds: file.maxConfigAgeSeconds ?? builtinPush.maxConfigAgeSeconds,
    maxWebhookUrlBytes: file.maxWebhookUrlBytes ?? builtinPush.maxWebhookUrlBytes,
    rate: { ...builtinPush.rate, ...file.rate },
    dedupe: { ...builtinPush.dedupe, ...file.dedupe },
    delivery: { ...builtinPush.delivery, ...file.delivery },
  };
}
