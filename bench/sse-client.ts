/**
 * The bench's SSE reader: just enough to count events, spot error events and
 * read the upstream's hrtime stamp. Both the upstream and the gateway write
 * each event as `data: <one line>\n\n`, so an event is one blank-line block.
 */
import type { Pool } from 'undici';
import { STREAM_REQUEST } from './bodies.js';

const HEADERS = { 'content-type': 'application/json', accept: 'text/event-stream' };
const NL = 0x0a;
const ERROR_MARK = Buffer.from('"error":{');

export interface StreamCount {
  readonly events: number;
  /** Chunks carrying a JSON-RPC error event (a healthy stream has none; an ended one has one). */
  readonly errorEvents: number;
  readonly reason?: string;
}

/** Reads one stream to its end, counting events without parsing them. */
export async function countEvents(pool: Pool, path: string): Promise<StreamCount> {
  const res = await pool.request({ path, method: 'POST', headers: HEADERS, body: STREAM_REQUEST });
  let events = 0;
  let errorEvents = 0;
  let lastWasNewline = false;
  let tail = '';
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(NL); i !== -1; i = chunk.indexOf(NL, i + 1)) {
      if (i === 0 ? lastWasNewline : chunk[i - 1] === NL) events++;
    }
    lastWasNewline = chunk[chunk.length - 1] === NL;
    if (chunk.includes(ERROR_MARK)) errorEvents++;
    tail = chunk.subarray(Math.max(0, chunk.length - 400)).toString('latin1');
  }
  const reason = /"reason":"([A-Z_]+)"/.exec(tail)?.[1];
  return reason ? { events, errorEvents, reason } : { events, errorEvents };
}

/** Reads one paced stream; for each event, the time since the upstream stamped it (ms). */
export async function eventLatencies(pool: Pool, path: string, into: number[]): Promise<{ events: number; errorEvents: number }> {
  const res = await pool.request({ path, method: 'POST', headers: HEADERS, body: STREAM_REQUEST });
  let pending = '';
  let events = 0;
  let errorEvents = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    const now = process.hrtime.bigint();
    pending += chunk.toString('utf8');
    let end = pending.indexOf('\n\n');
    while (end !== -1) {
      const event = pending.slice(0, end);
      pending = pending.slice(end + 2);
      end = pending.indexOf('\n\n');
      if (!event.startsWith('data:')) continue;
      events++;
      const stamp = /"t":"(\d+)"/.exec(event)?.[1];
      if (stamp) into.push(Number(now - BigInt(stamp)) / 1e6);
      else if (event.includes('"error":{')) errorEvents++;
    }
  }
  return { events, errorEvents };
}

/** Opens a stream and returns once its headers arrived; the body stays open until `close`. */
export async function openStream(pool: Pool, path: string): Promise<{ status: number; close: () => void }> {
  const res = await pool.request({ path, method: 'POST', headers: HEADERS, body: STREAM_REQUEST });
  res.body.on('error', () => {});
  // Keep reading (keep-alive comments) so backpressure never stalls the gateway side.
  res.body.resume();
  return { status: res.statusCode, close: () => res.body.destroy() };
}
