/**
 * gRPC message framing over HTTP/2 DATA (the "Length-Prefixed-Message" of
 * the gRPC HTTP/2 protocol): one flag byte (0 = uncompressed, 1 = compressed),
 * a 4-byte big-endian length, then the message. Pure and incremental: chunks
 * in any split, messages out; the length prefix is checked against the cap
 * before a byte of the message is held, so a hostile 4 GiB prefix costs nothing.
 */

export const PREFIX_BYTES = 5;

export type FramingProblem =
  /** The length prefix announces more than the cap. */
  | 'too-large'
  /** Flag 1: the gateway never offers an encoding (grpc-accept-encoding: identity), so none may be used. */
  | 'compressed'
  /** A flag byte other than 0 or 1. */
  | 'bad-flag';

export interface DecodeStep {
  readonly messages: Buffer[];
  /** Set once; the decoder accepts nothing after a problem. */
  readonly problem?: FramingProblem;
  /** The announced length, for 'too-large'. */
  readonly announced?: number;
}

export class GrpcMessageDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Length of the message being assembled, once its prefix is complete. */
  private need = -1;
  private failed = false;

  constructor(private readonly maxMessageBytes: number) {}

  /** Bytes of an incomplete message (or prefix) held: non-zero at the end of the stream means it was cut. */
  get buffered(): number {
    return this.pendingBytes;
  }

  push(chunk: Buffer): DecodeStep {
    if (this.failed) return { messages: [] };
    if (chunk.length > 0) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
    }
    const messages: Buffer[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.pendingBytes < PREFIX_BYTES) break;
        const prefix = this.take(PREFIX_BYTES);
        const flag = prefix[0]!;
        const length = prefix.readUInt32BE(1);
        if (flag === 1) return this.fail(messages, 'compressed');
        if (flag !== 0) return this.fail(messages, 'bad-flag');
        if (length > this.maxMessageBytes) return this.fail(messages, 'too-large', length);
        this.need = length;
      }
      if (this.pendingBytes < this.need) break;
      messages.push(this.take(this.need));
      this.need = -1;
    }
    return { messages };
  }

  private fail(messages: Buffer[], problem: FramingProblem, announced?: number): DecodeStep {
    this.failed = true;
    this.pending = [];
    this.pendingBytes = 0;
    return announced === undefined ? { messages, problem } : { messages, problem, announced };
  }

  /** Removes and returns the first `n` held bytes (copying only when they span chunks). */
  private take(n: number): Buffer {
    this.pendingBytes -= n;
    const first = this.pending[0];
    if (first && first.length >= n) {
      if (first.length === n) this.pending.shift();
      else this.pending[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const head = this.pending[0]!;
      const used = Math.min(head.length, n - filled);
      head.copy(out, filled, 0, used);
      filled += used;
      if (used === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(used);
    }
    return out;
  }
}

/** One uncompressed length-prefixed message. */
export function encodeMessage(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  out.set(message, PREFIX_BYTES);
  return out;
}
