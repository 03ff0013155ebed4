/**
 * One soak call and the check of its reply. A unary reply must be one
 * JSON-RPC 2.0 envelope; a stream must be `data:` events that are each such
 * an envelope, at least one, errors only last. Every id must be the one the
 * call sent. A call that gets no reply (a transport error, or nothing within
 * the caller's own generous deadline) is lost.
 */
import { Agent, request } from 'undici';
import { findGatewayErrorInfo } from '../src/envelope/envelope.js';

export type Verdict =
  | { readonly kind: 'ok'; readonly outcome: string; readonly events: number }
  | { readonly kind: 'wrong-id' | 'invalid'; readonly problem: string }
  | { readonly kind: 'lost'; readonly problem: string };

export interface CallSpec {
  /** Gateway path after the base URL, e.g. /remotes/good/ or /remotes/hostile/html-502. */
  readonly path: string;
  readonly method: string;
  readonly streaming: boolean;
  readonly id: string | number;
}

/** Far beyond every bound the soak config sets: a reply later than this means the gateway hung. */
const CALLER_DEADLINE_MS = 20_000;

const body = (spec: CallSpec): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: spec.id,
    method: spec.method,
    params: spec.method.includes('Task') || spec.method.startsWith('tasks/')
      ? { id: 'soak-task' }
      : { message: { messageId: `m-${spec.id}`, role: 'ROLE_USER', parts: [{ text: 'soak' }] } },
  });

export async function soakCall(dispatcher: Agent, baseUrl: string, spec: CallSpec): Promise<Verdict> {
  let status: number;
  let contentType: string;
  let text: string;
  try {
    const res = await request(`${baseUrl}${spec.path}`, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'x-request-id': `soak-${spec.id}` },
      body: body(spec),
      signal: AbortSignal.timeout(CALLER_DEADLINE_MS),
    });
    status = res.statusCode;
    contentType = String(res.headers['content-type'] ?? '');
    text = await res.body.text();
  } catch (err) {
    return { kind: 'lost', problem: `${(err as Error).name}: ${(err as Error).message}` };
  }
  if (status !== 200) return { kind: 'invalid', problem: `HTTP ${status}: ${text.slice(0, 120)}` };
  if (spec.streaming && contentType.startsWith('text/event-stream')) return checkStream(text, spec.id);
  if (!contentType.startsWith('application/json')) return { kind: 'invalid', problem: `content-type ${contentType}` };
  const verdict = checkEnvelope(text, spec.id);
  return verdict.kind === 'ok' ? { ...verdict, events: 0 } : verdict;
}

type EnvelopeVerdict = { kind: 'ok'; outcome: string; isError: boolean } | { kind: 'wrong-id' | 'invalid'; problem: string };

export function checkEnvelope(text: string, id: string | number): EnvelopeVerdict {
  let env: unknown;
  try {
    env = JSON.parse(text);
  } catch {
    return { kind: 'invalid', problem: `not JSON: ${text.slice(0, 80)}` };
  }
  if (typeof env !== 'object' || env === null || Array.isArray(env)) return { kind: 'invalid', problem: 'not an object' };
  const e = env as Record<string, unknown>;
  if (e.id !== id) return { kind: 'wrong-id', problem: `id ${JSON.stringify(e.id)} for ${JSON.stringify(id)}` };
  if (e.jsonrpc !== '2.0') return { kind: 'invalid', problem: 'jsonrpc is not 2.0' };
  const keys = Object.keys(e).sort().join();
  if (keys !== 'id,jsonrpc,result' && keys !== 'error,id,jsonrpc') return { kind: 'invalid', problem: `members ${keys}` };
  if (!('error' in e)) return { kind: 'ok', outcome: 'ok', isError: false };
  const error = e.error as { code?: unknown; message?: unknown; data?: unknown } | null;
  if (typeof error !== 'object' || error === null) return { kind: 'invalid', problem: 'error is not an object' };
  if (!Number.isSafeInteger(error.code) || typeof error.message !== 'string') return { kind: 'invalid', problem: 'error code/message' };
  const reason = findGatewayErrorInfo(error.data)?.reason;
  if (typeof reason !== 'string') return { kind: 'invalid', problem: 'no ErrorInfo reason' };
  return { kind: 'ok', outcome: reason, isError: true };
}

export function checkStream(text: string, id: string | number): Verdict {
  const blocks = text.split('\n\n');
  if (blocks.at(-1) !== '') return { kind: 'invalid', problem: 'stream does not end with a complete event' };
  let events = 0;
  let outcome = 'ok';
  for (const block of blocks.slice(0, -1)) {
    const lines = block.split('\n').filter((l) => !l.startsWith(':'));
    if (lines.length === 0) continue; // the gateway's keep-alive comment
    if (lines.length !== 1 || !lines[0]!.startsWith('data: ')) return { kind: 'invalid', problem: `not one data line: ${block.slice(0, 80)}` };
    if (outcome !== 'ok') return { kind: 'invalid', problem: 'an event after the error event' };
    const verdict = checkEnvelope(lines[0]!.slice('data: '.length), id);
    if (verdict.kind !== 'ok') return verdict;
    events++;
    if (verdict.isError) outcome = verdict.outcome;
  }
  if (events === 0) return { kind: 'invalid', problem: 'a stream without events' };
  return { kind: 'ok', outcome, events };
}
