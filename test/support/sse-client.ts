/**
 * Reads an SSE reply the way a caller would: the raw text, split into events
 * and comments, each event's data parsed as JSON.
 */
import { request } from 'undici';
import { findGatewayErrorInfo } from '../../src/envelope/envelope.js';

export interface SseReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly raw: string;
  readonly comments: string[];
  /** Each event's data parsed as JSON (a parse failure is a test failure: the gateway must never send one). */
  readonly events: Record<string, unknown>[];
  /** The one JSON-RPC envelope, when no stream started (the reply is application/json, not an event stream). */
  readonly json?: Record<string, unknown>;
}

export function parseSse(raw: string): { comments: string[]; events: Record<string, unknown>[] } {
  const comments: string[] = [];
  const events: Record<string, unknown>[] = [];
  for (const block of raw.split('\n\n')) {
    if (block === '') continue;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else throw new Error(`unexpected SSE line from the gateway: ${JSON.stringify(line.slice(0, 80))}`);
    }
    if (data.length > 0) events.push(JSON.parse(data.join('\n')) as Record<string, unknown>);
  }
  return { comments, events };
}

export async function streamRpc(url: string, body: unknown, headers: Record<string, string> = {}): Promise<SseReply> {
  const res = await request(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
  });
  const raw = await res.body.text();
  if (String(res.headers['content-type']).startsWith('application/json')) {
    return { status: res.statusCode, headers: res.headers, raw, comments: [], events: [], json: JSON.parse(raw) as Record<string, unknown> };
  }
  return { status: res.statusCode, headers: res.headers, raw, ...parseSse(raw) };
}

/** The gateway's ErrorInfo reason in an event (or a JSON reply), found by its domain. */
export const reasonOfEvent = (event: Record<string, unknown> | undefined): string | undefined =>
  findGatewayErrorInfo((event?.error as { data?: unknown } | undefined)?.data)?.reason;
