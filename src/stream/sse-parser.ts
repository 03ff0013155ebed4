/**
 * A bounded Server-Sent Events reader (WHATWG HTML §9.2 "event stream
 * interpretation"), byte-level so every bound is exact.
 *
 * Why not eventsource-parser: it buffers a partial event without limit, and to
 * bound it we would have to find line and event boundaries ourselves anyway;
 * at that point the rest of the grammar is twenty lines. Framing works on
 * bytes (CR and LF never occur inside a UTF-8 multi-byte sequence), and each
 * complete line is decoded as a whole, so a character split across chunks is
 * joined before decoding, which is what a StringDecoder would give us, without
 * its per-chunk strings. A valid line is split at its colon as bytes (a colon
 * is one byte and never part of a longer character) and only the value of a
 * field we keep is decoded: one string per data line, nothing else.
 */

import { isUtf8 } from 'node:buffer';

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A dispatched event: at least one `data` line was seen before its blank line. */
export interface SseEvent {
  readonly kind: 'event';
  /** The `event:` field, or "message" when absent or empty. */
  readonly type: string;
  /** Every `data:` line of the event joined with "\n". */
  readonly data: string;
  /**
   * `data` as its UTF-8 bytes (the event's own copy), for the readers that work on bytes (envelope/json-recognizers.ts)
   * without encoding the text again; undefined when a line of the event was not valid UTF-8.
   */
  readonly dataBytes: Buffer | undefined;
  /** The last `id:` seen on the stream so far (SSE keeps it across events). */
  readonly lastEventId: string;
  /** Some line of the event was not valid UTF-8. */
  readonly invalidUtf8: boolean;
}

export type SseItem =
  | SseEvent
  | { readonly kind: 'comment' }
  /** The event in progress (or one line of it) grew past maxEventBytes; the parser stops. */
  | { readonly kind: 'too-large'; readonly bytes: number };

/** Return false to stop reading the rest of the chunk. */
export type SseSink = (item: SseItem) => boolean | void;

/** Field names as bytes, for the lines read without decoding their name. */
const DATA = Buffer.from('data');
const EVENT = Buffer.from('event');
const ID = Buffer.from('id');

/** A growable byte buffer for the line in progress; its size is bounded by the event bound. */
class LineBuffer {
  private buf = Buffer.alloc(0);
  length = 0;

  /** `cap` (the event bound) stops doubling from reserving twice what an event may hold. */
  constructor(private readonly cap: number) {}

  append(src: Buffer, start: number, end: number): void {
    if (end <= start) return;
    const need = this.length + (end - start);
    this.reserve(need);
    src.copy(this.buf, this.length, start, end);
    this.length = need;
  }

  appendByte(byte: number): void {
    this.reserve(this.length + 1);
    this.buf[this.length++] = byte;
  }

  private reserve(need: number): void {
    if (need <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(need, Math.min(this.buf.length * 2, this.cap), 256));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  view(): Buffer {
    return this.buf.subarray(0, this.length);
  }

  clear(): void {
    this.length = 0;
    // One giant event must not pin its buffer for the rest of a long stream.
    if (this.buf.length > 64 * 1024) this.buf = Buffer.alloc(0);
  }
}

export class SseParser {
  private readonly line: LineBuffer;
  /** Bytes of the current line so far (comment bytes are counted but not kept). */
  private lineBytes = 0;
  private lineIsComment = false;
  /** Bytes of the event in progress, line endings included, its closing blank line excluded. */
  private eventBytes = 0;
  /** A field line was seen since the last blank line. */
  private inEvent = false;
  /** Every `data` line of the event so far, joined with "\n"; undefined until the first. */
  private data: string | undefined;
  /**
   * The same lines' bytes joined the same way, while every one of them was valid UTF-8: the first line's copy, then
   * (from a second line on) a buffer that doubles, a new one for each event: copying the bytes so far for each line
   * would make an event of many short lines quadratic.
   */
  private dataBytes: Buffer | undefined;
  private moreDataBytes: LineBuffer | undefined;
  private eventType = '';
  private lastEventId = '';
  private invalidUtf8 = false;
  /** The previous chunk ended in CR: a leading LF belongs to it. */
  private pendingCR = false;
  /** ...and that CR ended a content line (so its LF counts toward the event). */
  private crEndedContent = false;
  /** Leading bytes held back while we cannot yet tell whether they are a BOM. */
  private bomHead: Buffer | undefined = Buffer.alloc(0);
  private stopped = false;

  constructor(private readonly maxEventBytes: number) {
    this.line = new LineBuffer(maxEventBytes);
  }

  /** Bytes held for the event being assembled (comment bytes are never kept). */
  get bufferedBytes(): number {
    return this.eventBytes + (this.lineIsComment ? 0 : this.lineBytes);
  }

  /** True when the stream stopped in the middle of a line or an event. */
  get pending(): boolean {
    return this.lineBytes > 0 || this.inEvent || (this.bomHead !== undefined && this.bomHead.length > 0);
  }

  push(input: Buffer, emit: SseSink): void {
    if (this.stopped) return;
    const chunk = this.stripBom(input);
    if (chunk === undefined) return;
    const n = chunk.length;
    let i = 0;
    if (this.pendingCR && n > 0) {
      this.pendingCR = false;
      if (chunk[0] === LF) {
        i = 1;
        if (this.crEndedContent && !this.count(1, emit)) return;
      }
    }
    let nextCR = -2;
    let nextLF = -2;
    while (i < n) {
      // Cache each search: re-scanning for a CR that never comes would make long chunks quadratic.
      if (nextCR !== -1 && nextCR < i) nextCR = chunk.indexOf(CR, i);
      if (nextLF !== -1 && nextLF < i) nextLF = chunk.indexOf(LF, i);
      const end = nextCR === -1 ? nextLF : nextLF === -1 ? nextCR : Math.min(nextCR, nextLF);
      if (end === -1) {
        // Counted before it is kept: a line past the bound is never copied.
        if (this.count(n - i, emit)) this.appendPartial(chunk, i, n);
        return;
      }
      let terminator = 1;
      if (chunk[end] === CR) {
        if (end + 1 < n) terminator = chunk[end + 1] === LF ? 2 : 1;
        else this.pendingCR = true;
      }
      const contentBytes = end - i;
      if (this.lineBytes + contentBytes === 0) {
        this.crEndedContent = false;
        if (!this.dispatch(emit)) return;
      } else {
        // A line wholly inside this chunk is read in place; a line built over chunks comes from the buffer.
        const wholeLineHere = this.lineBytes === 0;
        if (!this.count(contentBytes + terminator, emit)) return;
        if (wholeLineHere) this.lineIsComment = chunk[i] === COLON;
        else this.appendPartial(chunk, i, end);
        this.crEndedContent = true;
        if (!this.completeLine(wholeLineHere ? chunk.subarray(i, end) : this.line.view(), emit)) return;
      }
      i = end + terminator;
    }
  }

  /** Holds back up to 3 leading bytes until we know whether they are a BOM, then drops a BOM. */
  private stripBom(chunk: Buffer): Buffer | undefined {
    if (this.bomHead === undefined) return chunk;
    const joined = this.bomHead.length > 0 ? Buffer.concat([this.bomHead, chunk]) : chunk;
    if (joined.length < BOM.length && BOM.subarray(0, joined.length).equals(joined)) {
      this.bomHead = joined;
      return undefined;
    }
    this.bomHead = undefined;
    return joined.subarray(0, BOM.length).equals(BOM) ? joined.subarray(BOM.length) : joined;
  }

  private appendPartial(chunk: Buffer, start: number, end: number): void {
    if (end <= start) return;
    if (this.lineBytes === 0) this.lineIsComment = chunk[start] === COLON;
    // Comments are never forwarded, so their bytes are counted but not kept.
    if (!this.lineIsComment) this.line.append(chunk, start, end);
    this.lineBytes += end - start;
  }

  private count(bytes: number, emit: SseSink): boolean {
    this.eventBytes += bytes;
    if (this.eventBytes <= this.maxEventBytes) return true;
    this.stopped = true;
    emit({ kind: 'too-large', bytes: this.eventBytes });
    return false;
  }

  private completeLine(bytes: Buffer, emit: SseSink): boolean {
    const comment = this.lineIsComment;
    this.lineBytes = 0;
    this.lineIsComment = false;
    if (comment) {
      this.line.clear();
      // Comments between events are not part of any event: they must not add up to an "event too large".
      // Nor may the LF of their CRLF when it arrives in the next chunk (the output must not depend on chunking).
      if (!this.inEvent) {
        this.eventBytes = 0;
        this.crEndedContent = false;
      }
      return emit({ kind: 'comment' }) !== false;
    }
    this.inEvent = true;
    if (isUtf8(bytes)) this.fieldBytes(bytes);
    else {
      this.invalidUtf8 = true;
      this.field(bytes.toString('utf8'));
    }
    this.line.clear();
    return true;
  }

  /** A valid UTF-8 line: what field() does with its decoded text, reading the name as bytes. */
  private fieldBytes(bytes: Buffer): void {
    const n = bytes.length;
    let colon = 0;
    while (colon < n && bytes[colon] !== COLON) colon++;
    let start = colon + 1;
    if (start < n && bytes[start] === SPACE) start++;
    if (sameBytes(bytes, colon, DATA)) this.addData(valueOf(bytes, start), bytes.subarray(start));
    else if (sameBytes(bytes, colon, EVENT)) this.eventType = valueOf(bytes, start);
    else if (sameBytes(bytes, colon, ID)) this.setId(valueOf(bytes, start));
  }

  private field(line: string): void {
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (name === 'data') {
      this.addData(value);
    } else if (name === 'event') {
      this.eventType = value;
    } else if (name === 'id') {
      this.setId(value);
    }
    // `retry` and unknown fields are ignored, as the SSE rules say.
  }

  /** `bytes`: the value's bytes, valid UTF-8, in a buffer the parser reuses (copied here); absent for a line that was not. */
  private addData(value: string, bytes?: Buffer): void {
    const first = this.data === undefined;
    this.data = first ? value : `${this.data}\n${value}`;
    if (first) {
      this.dataBytes = bytes === undefined ? undefined : Buffer.from(bytes);
      this.moreDataBytes = undefined;
      return;
    }
    if (bytes === undefined || this.dataBytes === undefined) {
      this.dataBytes = undefined;
      this.moreDataBytes = undefined;
      return;
    }
    if (this.moreDataBytes === undefined) {
      this.moreDataBytes = new LineBuffer(this.maxEventBytes);
      this.moreDataBytes.append(this.dataBytes, 0, this.dataBytes.length);
    }
    this.moreDataBytes.appendByte(LF);
    this.moreDataBytes.append(bytes, 0, bytes.length);
  }

  private setId(value: string): void {
    if (!value.includes('\u0000')) this.lastEventId = value;
  }

  private dispatch(emit: SseSink): boolean {
    const data = this.data;
    const type = this.eventType === '' ? 'message' : this.eventType;
    const invalidUtf8 = this.invalidUtf8;
    const dataBytes = invalidUtf8 || this.dataBytes === undefined ? undefined : (this.moreDataBytes?.view() ?? this.dataBytes);
    this.data = undefined;
    this.dataBytes = undefined;
    this.moreDataBytes = undefined;
    this.eventType = '';
    this.invalidUtf8 = false;
    this.inEvent = false;
    this.eventBytes = 0;
    // An event without data is not dispatched (SSE rules); it was only fields.
    if (data === undefined) return true;
    return emit({ kind: 'event', type, data, dataBytes, lastEventId: this.lastEventId, invalidUtf8 }) !== false;
  }
}

function valueOf(line: Buffer, start: number): string {
  return start < line.length ? line.toString('utf8', start, line.length) : '';
}

/** The first `length` bytes of `line` are exactly `name`. */
function sameBytes(line: Buffer, length: number, name: Buffer): boolean {
  if (length !== name.length) return false;
  for (let i = 0; i < length; i++) if (line[i] !== name[i]) return false;
  return true;
}
