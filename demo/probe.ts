/**
 * One POST as a plain caller makes it, with a stopwatch: status, headers,
 * bytes on the wire, bytes after decoding (a naive client inflates gzip, so
 * the demo does too, counting rather than keeping), the first few KiB, and
 * whether the reply ever finished.
 */
import { request } from 'node:http';
import type { Readable } from 'node:stream';
import { decoderFor, headerValue } from '../src/upstream/read-body.js';

export interface Exchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly wireBytes: number;
  readonly decodedBytes: number;
  /** The first `keepBytes` decoded bytes. */
  readonly head: Buffer;
  /** False when the reply was still arriving at the deadline (or the connection broke). */
  readonly complete: boolean;
  readonly elapsedMs: number;
  /** Set when no response arrived at all. */
  readonly failure?: string;
}

export interface ProbeOptions {
  readonly timeoutMs: number;
  readonly keepBytes?: number;
  /** Stop counting decoded bytes past this: a bomb must not cost the demo itself. */
  readonly maxDecodedBytes?: number;
}

const DEFAULT_KEEP = 64 * 1024;
const DEFAULT_MAX_DECODED = 256 * 1024 * 1024;

export function probe(url: string, body: string, options: ProbeOptions): Promise<Exchange> {
  const keep = options.keepBytes ?? DEFAULT_KEEP;
  const maxDecoded = options.maxDecodedBytes ?? DEFAULT_MAX_DECODED;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    let status = 0;
    let headers: Exchange['headers'] = {};
    let wireBytes = 0;
    let decodedBytes = 0;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const finish = (complete: boolean, failure?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      const head = Buffer.concat(kept, keptBytes);
      resolve({ status, headers, wireBytes, decodedBytes, head, complete, elapsedMs: elapsed(), ...(failure ? { failure } : {}) });
    };
    const onDecoded = (chunk: Buffer) => {
      decodedBytes += chunk.length;
      if (keptBytes < keep) {
        const part = chunk.subarray(0, keep - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      if (decodedBytes > maxDecoded) finish(false);
    };
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'accept-encoding': 'gzip', 'a2a-version': '1.0' },
    });
    const timer = setTimeout(() => finish(false, status === 0 ? 'no response before the deadline' : undefined), options.timeoutMs);
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      headers = res.headers;
      res.on('data', (chunk: Buffer) => (wireBytes += chunk.length));
      const decoder = decoderForDemo(res.headers['content-encoding']);
      const decoded: Readable = decoder ? res.pipe(decoder) : res;
      decoded.on('data', onDecoded);
      decoded.on('end', () => finish(true));
      decoded.on('error', () => finish(false));
      res.on('error', () => finish(false));
    });
    req.on('error', (err) => finish(false, status === 0 ? (err as NodeJS.ErrnoException).code ?? err.message : undefined));
    req.end(body);
  });
}

/** The gateway's own decoder table: the demo's direct caller decodes what a browser-like client would. */
function decoderForDemo(encoding: string | string[] | undefined) {
  const decoder = decoderFor(headerValue(encoding));
  return decoder === null || decoder === 'unsupported' ? undefined : decoder;
}
