/**
 * The least a validating SSE relay does per event, as the yardstick for the
 * gateway's stream path: split the byte stream into events, parse each
 * event's data as JSON (that is the validation), and put the caller's id in
 * place of the upstream's. Nothing else: no schema, no bounds, no metrics.
 * Events are `data: <one line>\n\n` blocks, as the bench upstream (and most
 * A2A servers) write them; other fields and comments are dropped.
 */
import { StringDecoder } from 'node:string_decoder';

export class SpliceError extends Error {
  override readonly name = 'SpliceError';
}

const DATA = 'data: ';
const RESULT = ',"result":';

export class EventSplicer {
  readonly #decoder = new StringDecoder('utf8');
  readonly #callerId: unknown;
  readonly #prefix: string;
  #pending = '';
  /** Set at the first bad event; nothing after it is relayed. */
  error: SpliceError | undefined;

  constructor(callerId: unknown) {
    this.#callerId = callerId;
    this.#prefix = `${DATA}{"jsonrpc":"2.0","id":${JSON.stringify(callerId)}${RESULT}`;
  }

  /**
   * The events this chunk completes, rewritten; '' while the next event is
   * still partial. At a bad event it returns the good ones before it and sets
   * `error`; every later push returns ''.
   */
  push(chunk: Buffer): string {
    if (this.error) return '';
    // A StringDecoder holds back a multi-byte character split across chunks.
    const text = this.#pending + this.#decoder.write(chunk);
    let out = '';
    let start = 0;
    try {
      for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n', start)) {
        out += this.#event(text.slice(start, end));
        start = end + 2;
      }
    } catch (err) {
      if (!(err instanceof SpliceError)) throw err;
      this.error = err;
      this.#pending = '';
      return out;
    }
    this.#pending = start === 0 ? text : text.slice(start);
    return out;
  }

  #event(block: string): string {
    if (!block.startsWith(DATA)) return '';
    const data = block.slice(DATA.length);
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      throw new SpliceError('an event is not JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || !('result' in parsed)) throw new SpliceError('an event is not a JSON-RPC result');
    const upstreamId = (parsed as { id?: unknown }).id;
    // The splice: the upstream's own prefix, when it wrote the usual compact one, is swapped for the caller's.
    const upstreamPrefix = `{"jsonrpc":"2.0","id":${JSON.stringify(upstreamId ?? null)}${RESULT}`;
    if (upstreamId !== undefined && data.startsWith(upstreamPrefix)) return `${this.#prefix}${data.slice(upstreamPrefix.length)}\n\n`;
    return `${DATA}${JSON.stringify({ jsonrpc: '2.0', id: this.#callerId, result: (parsed as { result: unknown }).result })}\n\n`;
  }
}
