/**
 * Reads a caller's request body as raw bytes, bounded by the *current*
 * config's `maxRequestBytes` for the remote named in the URL, so a reload
 * that raises or lowers the limit applies to the next request. Nothing past
 * the limit is buffered: a Content-Length over it is refused before reading,
 * and a chunked body is cut as soon as it crosses it.
 */
import type { IncomingMessage } from 'node:http';
import type { GatewayConfig } from '../config/schema.js';

export class RequestTooLarge extends Error {
  override readonly name = 'RequestTooLarge';
  readonly code = 'FST_ERR_CTP_BODY_TOO_LARGE';
  readonly statusCode = 413;
  constructor() {
    super('request body too large');
  }
}

export function limitFor(config: GatewayConfig, name: string | undefined): number {
  const remote = name === undefined ? undefined : config.remotes.get(name);
  if (remote) return remote.limits.maxRequestBytes;
  // An unknown remote still gets its JSON-RPC error (with the caller's id when it fits).
  return Math.min(...[...config.remotes.values()].map((r) => r.limits.maxRequestBytes));
}

export function readRequestBody(payload: IncomingMessage, limit: number, done: (err: Error | null, body?: Buffer) => void): void {
  const declared = Number(payload.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    payload.resume();
    return done(new RequestTooLarge());
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: Error | null, body?: Buffer) => {
    if (finished) return;
    finished = true;
    payload.off('data', onData);
    done(err, body);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      // Stop buffering; drain the rest so the reply can still be written on this socket.
      payload.off('data', onData);
      payload.resume();
      return finish(new RequestTooLarge());
    }
    chunks.push(chunk);
  };
  // `on`, not `once`: finish() answers only the first of them, and once's wrapper is not made twice per call.
  payload.on('data', onData);
  payload.on('end', () => finish(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
  payload.on('error', (err) => finish(err));
}
