/**
 * Start-up check of every secret a config reads: each credential env var is
 * set (and holds something a header can carry), each token file is readable
 * and not empty. Reported like any config problem, with the file, line and
 * key that names the secret:
 *   config.yaml:12: remotes.x.auth.tokenEnv: environment variable API_TOKEN is not set
 * The gateway checks again when it builds each remote's credentials; this
 * check only makes the first report point at the config.
 */
import { readFileSync } from 'node:fs';
import type { ConfigFile } from './schema.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** Where a key path is written in the file, as `source:line` (or just `source`). */
export type Locate = (path: readonly string[]) => string;

// Visible ASCII and space only, as the credential source requires (src/policy/credentials.ts).
const HEADER_SAFE = /^[\x20-\x7e]+$/;

function envProblem(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return `environment variable ${name} is not set`;
  if (value.trim() === '') return `environment variable ${name} is empty`;
  if (!HEADER_SAFE.test(value.trim())) return `environment variable ${name} contains characters not allowed in a header value`;
  return undefined;
}

function tokenFileProblem(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return `cannot read token file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`;
  }
  if (text.trim() === '') return `token file ${path} is empty`;
  if (!HEADER_SAFE.test(text.trim())) return `token file ${path} contains characters not allowed in a header value`;
  return undefined;
}

/** One line per missing or unusable secret; [] when every one is there. */
export function secretProblems(file: ConfigFile, env: Env, locate: Locate): string[] {
  const problems: string[] = [];
  const report = (path: string[], problem: string | undefined) => {
    if (problem !== undefined) problems.push(`${locate(path)}: ${path.join('.')}: ${problem}`);
  };
  const callerAuth = file.server?.auth;
  if (callerAuth) {
    const tokens = (env[callerAuth.tokensEnv] ?? '').split(',').filter((t) => t.trim() !== '');
    const missing = env[callerAuth.tokensEnv] === undefined ? 'is not set' : 'holds no token';
    if (tokens.length === 0) report(['server', 'auth', 'tokensEnv'], `environment variable ${callerAuth.tokensEnv} ${missing}`);
  }
  for (const [name, remote] of Object.entries(file.remotes)) {
    const auth = remote.auth;
    if (!auth) continue;
    const at = (key: string) => ['remotes', name, 'auth', key];
    if ('tokenEnv' in auth) report(at('tokenEnv'), envProblem(env, auth.tokenEnv));
    else if ('valueEnv' in auth) report(at('valueEnv'), envProblem(env, auth.valueEnv));
    else if ('tokenFile' in auth) report(at('tokenFile'), tokenFileProblem(auth.tokenFile));
  }
  return problems;
}
