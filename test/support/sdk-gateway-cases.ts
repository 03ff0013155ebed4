/**
 * The same @a2a-js/sdk client call made against one hostile case twice:
 * directly (the "before") and through the gateway (the "after"). Used by
 * scripts/sdk-gateway-findings.ts (the README table) and by
 * test/integration/interop-hostile.test.ts (the assertions).
 *
 * Through the gateway every case is its own remote: the gateway's card route
 * is `/remotes/<name>/.well-known/agent-card.json`, so a case with its
 * parameters as path segments (`/big-body/bytes=5000`) becomes the remote URL
 * `http://127.0.0.1:P/big-body/bytes=5000`, and the client is given
 * `http://gw/remotes/<remote>/` exactly as a real caller would be.
 */
import { isJsonRpcError } from '@a2a-js/sdk/errors';
import type { Message, StreamResponse } from '@a2a-js/sdk';
import { HOSTILE_CASE_NAMES, type HostileUpstream } from './hostile-upstream.js';
import { clientFromBaseUrl, collect, userMessage } from './sdk-client.js';

export type CaseParams = Record<string, string | number>;

export interface CaseRun {
  /** The hostile case (first path segment). */
  readonly name: string;
  readonly params?: CaseParams;
  /** The gateway remote this run is served as: a valid remote name. */
  readonly remote: string;
  /** `name (k=v...)`: how the tables name the run. */
  readonly label: string;
  readonly streaming: boolean;
}

/** Runs beyond one-per-case: does a reply with someone else's id get through? */
export const WRONG_ID_RUNS: ReadonlyArray<[string, CaseParams]> = [
  ['ok', { wrongId: 1 }],
  ['error-extra', { wrongId: 1 }],
  ['sse-ok', { wrongId: 1 }],
];

/** One run per hostile case (with `params[name]` where given), then the wrong-id runs. */
export function caseRuns(params: Readonly<Record<string, CaseParams>> = {}): CaseRun[] {
  const runs: Array<[string, CaseParams | undefined]> = [...HOSTILE_CASE_NAMES.map((n): [string, CaseParams | undefined] => [n, params[n]]), ...WRONG_ID_RUNS];
  return runs.map(([name, p]) => {
    const suffix = p ? Object.entries(p).map(([k, v]) => `${k}=${v}`).join(' ') : '';
    return {
      name,
      ...(p ? { params: p } : {}),
      remote: p?.wrongId === 1 ? `${name}-wrongid` : name,
      label: suffix ? `${name} (${suffix})` : name,
      streaming: name.startsWith('sse-'),
    };
  });
}

/** Indents a block of YAML lines under a key. */
const indent = (text: string, by: string): string =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => `${by}${l}`)
    .join('\n');

/**
 * Gateway config serving every run as its own remote. `defaultsYaml` goes
 * under `defaults:` (e.g. small limits and timeouts), as YAML lines.
 */
export function gatewayYamlFor(up: HostileUpstream, runs: readonly CaseRun[], defaultsYaml = ''): string {
  const remotes = runs.map((run) => {
    const base = up.caseBaseUrl(run.name, run.params);
    return [`  ${run.remote}:`, `    url: ${base.slice(0, -1)}`, `    agentCardUrl: ${base}.well-known/agent-card.json`].join('\n');
  });
  return [
    'server:',
    '  logLevel: warn',
    'defaults:',
    '  allowPrivateNetwork: true',
    indent(defaultsYaml, '  '),
    'remotes:',
    ...remotes,
  ]
    .filter((l) => l !== '')
    .join('\n');
}

export interface CaseOutcome {
  readonly outcome: 'returns' | 'throws' | 'throws when the caller aborts' | 'never settles';
  /** Constructor name, with `err.name` when it differs, and `; cause X` when there is one. */
  readonly errorClass: string;
  /** The error message, or a summary of what came back. */
  readonly text: string;
  /** UTF-8 bytes of the message, or of the value's JSON. */
  readonly bytes: number;
  readonly ms: number;
  /** The thrown value itself (undefined on success), for assertions. */
  readonly error?: unknown;
  readonly value?: unknown;
}

/** What came back, briefly: a message's first part, or a stream's event kinds. */
export function summarize(value: unknown): string {
  if (Array.isArray(value)) return `${value.length} events: ${value.map((e: StreamResponse) => e.payload?.$case).join(', ')}`;
  const m = value as Message;
  const part = m.parts?.[0]?.content;
  const shown = part === undefined ? JSON.stringify(value) : part.$case === 'text' ? part.value : JSON.stringify(part.value);
  return `${part?.$case ?? 'value'} (${shown.length} chars): ${shown}`;
}

export function errorClassOf(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const cls = err.constructor.name === err.name ? err.name : `${err.constructor.name} (name ${err.name})`;
  const cause = err.cause instanceof Error ? `; cause ${err.cause.constructor.name}` : '';
  return cls + cause;
}

/**
 * The SDK's own wrapping of a stream's error event: it always throws a plain
 * `Error("SSE event contained an error: ...")` whose `cause` is the typed
 * error, whatever the server sends. That is the best any server can get it to do.
 */
export function isWrappedStreamError(err: unknown): err is Error & { cause: Error } {
  return err instanceof Error && err.message.startsWith('SSE event contained an error:') && isJsonRpcError(err.cause);
}

/** The typed SDK error a caller can branch on: the error itself, or the cause of a wrapped stream error. */
export function typedErrorOf(err: unknown): Error | undefined {
  if (isJsonRpcError(err)) return err;
  if (isWrappedStreamError(err)) return err.cause;
  return undefined;
}

/**
 * One SDK call: card from `baseUrl`, then sendMessage (or sendMessageStream
 * for a streaming run). `abortMs` is the caller's own AbortSignal; a call
 * still unsettled `watchdogMs` after that is reported as "never settles".
 */
export async function callWithSdk(baseUrl: string, run: CaseRun, abortMs: number, watchdogMs = 5000): Promise<CaseOutcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(abortMs);
  const ms = () => Math.round(performance.now() - started);
  let watchdog: NodeJS.Timeout | undefined;
  const stuck = new Promise<'stuck'>((resolve) => {
    watchdog = setTimeout(() => resolve('stuck'), abortMs + watchdogMs);
  });
  try {
    const client = await clientFromBaseUrl(baseUrl);
    const call = run.streaming
      ? collect(client.sendMessageStream(userMessage('hello'), { signal }))
      : client.sendMessage(userMessage('hello'), { signal });
    const value = await Promise.race([call, stuck]);
    if (value === 'stuck') return { outcome: 'never settles', errorClass: '', text: '', bytes: 0, ms: ms() };
    return { outcome: 'returns', errorClass: '', text: summarize(value), bytes: Buffer.byteLength(JSON.stringify(value)), ms: ms(), value };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return {
      outcome: signal.aborted ? 'throws when the caller aborts' : 'throws',
      errorClass: errorClassOf(err),
      text: message,
      bytes: Buffer.byteLength(message),
      ms: ms(),
      error: err,
    };
  } finally {
    clearTimeout(watchdog);
  }
}

/** `http://gw/remotes/<remote>/`: the base URL a caller is given for one run. */
export const gatewayBaseUrl = (gatewayUrl: string, run: CaseRun): string => `${gatewayUrl}/remotes/${run.remote}/`;

/** C0/C1 controls, DEL, and the bidi/zero-width characters sanitizeText strips. */
export const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
