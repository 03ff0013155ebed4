/**
 * Per-remote credentials the gateway adds to upstream requests: a bearer
 * token from an environment variable or a file, or a named header from an
 * environment variable. The secret lives only in a closure: printing,
 * logging or JSON-serialising a source shows where the secret comes from,
 * never the secret. `secrets()` hands the values to the gateway's redactor
 * (never to a log): a caller must never get them back from the remote.
 * Values shorter than MIN_SECRET_BYTES are refused: they cannot be removed
 * from a remote's text without mangling it.
 *
 * Token files are re-read when they change (rotation, Kubernetes secret
 * mounts). We poll with fs.statSync from `headers()`, at most once per
 * `checkIntervalMs` (1 s), instead of fs.watchFile: no background timer to
 * unref or stop at shutdown, no I/O at all while the remote is idle, the
 * same behaviour on every filesystem, and a stat follows the symlink swap a
 * secret mount does. The cost is one stat per second on the request path.
 */
import fs from 'node:fs';
import { inspect } from 'node:util';
import { MIN_SECRET_BYTES } from '../envelope/redact.js';
import { CREDENTIAL_HEADER_NAME_PATTERN, type AuthConfig } from '../config/auth.js';

const CREDENTIAL_HEADER_NAME = new RegExp(CREDENTIAL_HEADER_NAME_PATTERN, 'u');

export class CredentialError extends Error {
  override readonly name = 'CredentialError';
}

export interface CredentialSource {
  /** The header(s) to add to each upstream request; a fresh object every call. */
  headers(): Record<string, string>;
  /**
   * The values a caller must never get back: the current one and, after a
   * token file rotated, the previous one too. The same frozen array until a
   * rotation, so a cache keyed by it knows when to rebuild. Internal: never logged.
   */
  secrets(): readonly string[];
  /** Where the secret comes from, e.g. "bearer from env API_TOKEN"; never the secret. */
  readonly description: string;
  toString(): string;
  toJSON(): { readonly credential: string };
}

export interface CredentialSourceOptions {
  /** Problems after creation (token file gone or invalid); the last good value stays in use. */
  readonly onError?: (err: CredentialError) => void;
  /** Monotonic ms; injectable for tests. */
  readonly now?: () => number;
  /** Minimum time between stat checks of a token file. */
  readonly checkIntervalMs?: number;
  /** The remote's name: creation errors then name the config key (`remotes.<name>.auth.tokenEnv: ...`). */
  readonly remote?: string;
}

// Visible ASCII and space only: CR/LF would split the request, NUL and other
// controls make undici throw, and real tokens and API keys are ASCII.
const VALID_SECRET = /^[\x20-\x7e]+$/;

/** Builds the source for one remote; throws CredentialError when the secret is missing, invalid or too short. */
export function createCredentialSource(
  auth: AuthConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
  opts: CredentialSourceOptions = {},
): CredentialSource {
  try {
    return buildSource(auth, env, opts);
  } catch (err) {
    if (!(err instanceof CredentialError) || opts.remote === undefined) throw err;
    const key = auth.type === 'header' ? (CREDENTIAL_HEADER_NAME.test(auth.name.toLowerCase()) ? 'valueEnv' : 'name') : 'tokenEnv' in auth ? 'tokenEnv' : 'tokenFile';
    throw new CredentialError(`remotes.${opts.remote}.auth.${key}: ${err.message}`);
  }
}

function buildSource(auth: AuthConfig, env: Readonly<Record<string, string | undefined>>, opts: CredentialSourceOptions): CredentialSource {
  if (auth.type === 'header') {
    const name = auth.name.toLowerCase();
    if (!CREDENTIAL_HEADER_NAME.test(name)) {
      throw new CredentialError(`credential header name "${auth.name}" is not allowed`);
    }
    const value = readEnv(env, auth.valueEnv);
    const secrets = Object.freeze([value]);
    return makeSource(`header ${name} from env ${auth.valueEnv}`, () => ({ [name]: value }), () => secrets);
  }
  if ('tokenEnv' in auth) {
    const token = readEnv(env, auth.tokenEnv);
    const secrets = Object.freeze([token]);
    return makeSource(`bearer from env ${auth.tokenEnv}`, () => ({ authorization: `Bearer ${token}` }), () => secrets);
  }
  const file = watchTokenFile(auth.tokenFile, opts);
  return makeSource(`bearer from file ${auth.tokenFile}`, () => ({ authorization: `Bearer ${file.current()}` }), () => file.secrets());
}

/** Why a value is refused, or undefined when it is a usable credential. */
function valueProblem(value: string): string | undefined {
  if (!VALID_SECRET.test(value)) return 'contains characters not allowed in a header value';
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes < MIN_SECRET_BYTES) {
    return `holds ${bytes} bytes; a credential must be at least ${MIN_SECRET_BYTES} bytes so that the gateway can keep it out of what callers receive`;
  }
  return undefined;
}

function readEnv(env: Readonly<Record<string, string | undefined>>, name: string): string {
  const value = env[name]?.trim();
  if (value === undefined || value === '') {
    throw new CredentialError(`environment variable ${name} is not set or is empty`);
  }
  const problem = valueProblem(value);
  if (problem) throw new CredentialError(`environment variable ${name} ${problem}`);
  return value;
}

function makeSource(description: string, headers: () => Record<string, string>, secrets: () => readonly string[]): CredentialSource {
  const shown = `CredentialSource(${description})`;
  const source: CredentialSource = {
    headers,
    secrets,
    description,
    toString: () => shown,
    toJSON: () => ({ credential: description }),
  };
  // Without this, inspect() would list `headers` as a function only, but a
  // future field holding a value must not appear by accident either.
  Object.defineProperty(source, inspect.custom, { value: () => shown, enumerable: false });
  return source;
}

interface FileSignature {
  readonly mtimeMs: number;
  readonly size: number;
  readonly ino: number;
}

interface TokenFile {
  current(): string;
  secrets(): readonly string[];
}

function watchTokenFile(path: string, opts: CredentialSourceOptions): TokenFile {
  const now = opts.now ?? (() => performance.now());
  const interval = opts.checkIntervalMs ?? 1000;
  const first = readTokenFile(path);
  if (first instanceof CredentialError) throw first;
  let token = first.token;
  let secrets: readonly string[] = Object.freeze([token]);
  let seen: FileSignature = first.signature;
  let checkedAt = now();
  // Report a failure once, not every second, until the file is good again.
  let reported = false;

  const report = (err: CredentialError): void => {
    if (reported) return;
    reported = true;
    opts.onError?.(err);
  };

  return {
    secrets: () => secrets,
    current(): string {
      const at = now();
      if (at - checkedAt < interval) return token;
      checkedAt = at;
      let signature: FileSignature;
      try {
        signature = signatureOf(fs.statSync(path));
      } catch (err) {
        report(new CredentialError(`token file ${path} cannot be read (${errorCode(err)}); keeping the last good token`));
        return token;
      }
      if (sameSignature(signature, seen)) return token;
      const next = readTokenFile(path);
      if (next instanceof CredentialError) {
        // Remember the bad version so it is not re-read until it changes again.
        seen = signature;
        report(new CredentialError(`${next.message}; keeping the last good token`));
        return token;
      }
      // The previous token stays redacted: replies to calls that carried it may still be on their way.
      if (next.token !== token) secrets = Object.freeze([next.token, token]);
      token = next.token;
      seen = next.signature;
      reported = false;
      return token;
    },
  };
}

function readTokenFile(path: string): { token: string; signature: FileSignature } | CredentialError {
  let text: string;
  let signature: FileSignature;
  try {
    // Open once so the stat and the content describe the same file even mid-rotation.
    const fd = fs.openSync(path, 'r');
    try {
      signature = signatureOf(fs.fstatSync(fd));
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    return new CredentialError(`token file ${path} cannot be read (${errorCode(err)})`);
  }
  const token = text.trim();
  if (token === '') return new CredentialError(`token file ${path} is empty`);
  const problem = valueProblem(token);
  if (problem) return new CredentialError(`token file ${path} ${problem}`);
  return { token, signature };
}

function signatureOf(stat: fs.Stats): FileSignature {
  return { mtimeMs: stat.mtimeMs, size: stat.size, ino: stat.ino };
}

function sameSignature(a: FileSignature, b: FileSignature): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

/** Only the OS error code (ENOENT, EACCES): OS messages can carry more than we want in a log. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? code : 'error';
}
