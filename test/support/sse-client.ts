/**
 * Reads an SSE reply the way a caller would: the raw text, split into events
 * and comments, each event's data parsed as JSON.
 */
import { request } from 'undici';

export interface SseReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly raw: string;
  readonly comments: string[];
  /** Each event's data parsed as JSON (a parse failure is a test failure: the gateway must never send one). */
  readonly events: Record<string, unknown>[];
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
  return { status: res.statusCode, headers: res.headers, raw, ...parseSse(raw) };
}

export const reasonOfEvent = (event: Record<string, unknown> | undefined): string | undefined =>
  (event?.error as { data?: { reason?: string }[] } | undefined)?.data?.[0]?.reason;
