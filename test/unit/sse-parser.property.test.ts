/**
 * The SSE parser against a plain reading of the SSE rules (split into lines,
 * decode each line, split it at its first colon): whatever the bytes (field
 * names near the real ones, invalid UTF-8, characters of every length, every
 * line ending, a BOM) and wherever the chunks are cut, the parser gives
 * exactly the items the plain reading gives.
 */
import fc from 'fast-check';
import t from 'tap';
import { SseParser, type SseItem } from '../../src/stream/sse-parser.js';
import { cutAt } from '../support/envelope-invariants.js';

const numRuns = Number.parseInt(process.env.FUZZ_RUNS ?? '', 10) || 1500;
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The rules written out plainly, over the whole stream at once (no bounds: the parser's bound is set out of reach). */
function reference(stream: Buffer): SseItem[] {
  let bytes = stream;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
  const items: SseItem[] = [];
  let data: string[] = [];
  let type = '';
  let lastEventId = '';
  let invalidUtf8 = false;
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c !== 0x0a && c !== 0x0d) continue;
    const line = bytes.subarray(start, i);
    if (c === 0x0d && bytes[i + 1] === 0x0a) i++;
    start = i + 1;
    if (line.length === 0) {
      if (data.length > 0) {
        const text = data.join('\n');
        // The bytes of the data lines, kept beside the text when every line of the event was valid UTF-8.
        items.push({ kind: 'event', type: type === '' ? 'message' : type, data: text, dataBytes: invalidUtf8 ? undefined : Buffer.from(text), lastEventId, invalidUtf8 });
      }
      data = [];
      type = '';
      invalidUtf8 = false;
      continue;
    }
    if (line[0] === 0x3a) {
      items.push({ kind: 'comment' });
      continue;
    }
    let text: string;
    try {
      text = strict.decode(line);
    } catch {
      invalidUtf8 = true;
      text = line.toString('utf8');
    }
    const colon = text.indexOf(':');
    const name = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') data.push(value);
    else if (name === 'event') type = value;
    else if (name === 'id' && !value.includes('\u0000')) lastEventId = value;
  }
  return items;
}

const nameArb = fc.constantFrom('data', 'data', 'data', 'event', 'id', 'retry', 'dat', 'datax', 'Data', 'ev\u00e9nt', '', 'd\u00ff');
const valueArb = fc.array(
  fc.oneof(
    fc.constantFrom('{"jsonrpc":"2.0","id":1,"result":{}}', 'x', ' ', ':', 'é', '€', '😀', '\u0000', '\ufeff', 'status'),
    fc.string({ maxLength: 12 }),
  ),
  { maxLength: 4 },
);
const rawArb = fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xe2, 0x82]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf0, 0x9f, 0x98]));
const eolArb = fc.constantFrom('\n', '\r\n', '\r');

const lineArb: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(nameArb, fc.constantFrom(': ', ':', '', ':  '), valueArb, eolArb).map(([n, sep, v, eol]) => Buffer.from(`${n}${sep}${v.join('')}${eol}`)) },
  { weight: 2, arbitrary: fc.tuple(nameArb, fc.constantFrom(': ', ':'), valueArb, rawArb, valueArb, eolArb).map(([n, sep, a, raw, b, eol]) => Buffer.concat([Buffer.from(`${n}${sep}${a.join('')}`), raw, Buffer.from(`${b.join('')}${eol}`)])) },
  { weight: 1, arbitrary: fc.tuple(rawArb, eolArb).map(([raw, eol]) => Buffer.concat([Buffer.from('da'), raw, Buffer.from(`ta: x${eol}`)])) },
  { weight: 6, arbitrary: eolArb.map((eol) => Buffer.from(eol)) },
  { weight: 1, arbitrary: fc.tuple(valueArb, eolArb).map(([v, eol]) => Buffer.from(`:${v.join('')}${eol}`)) },
);

const streamArb = fc
  .tuple(fc.boolean(), fc.array(lineArb, { maxLength: 30 }))
  .map(([bom, lines]) => Buffer.concat([Buffer.from(bom ? '\ufeff' : ''), ...lines]));

function parse(chunks: Buffer[]): SseItem[] {
  const parser = new SseParser(1 << 24);
  const items: SseItem[] = [];
  for (const c of chunks) parser.push(c, (item) => void items.push(item));
  return items;
}

t.test('property: any bytes, any chunking: the items the SSE rules give', async (t) => {
  let events = 0;
  fc.assert(
    fc.property(streamArb, fc.array(fc.nat(), { maxLength: 20 }), (stream, cuts) => {
      const want = JSON.stringify(reference(stream));
      const whole = JSON.stringify(parse([stream]));
      if (whole !== want) throw new Error(`whole stream differs:\n  got  ${whole}\n  want ${want}\n  for  ${JSON.stringify(stream.toString('latin1'))}`);
      const pieces = JSON.stringify(parse(cutAt(stream, cuts)));
      if (pieces !== want) throw new Error(`chunked (${cuts.join(',')}) differs:\n  got  ${pieces}\n  want ${want}`);
      const bytewise = JSON.stringify(parse([...stream].map((b) => Buffer.from([b]))));
      if (bytewise !== want) throw new Error(`byte by byte differs:\n  got  ${bytewise}\n  want ${want}`);
      events += reference(stream).filter((i) => i.kind === 'event').length;
    }),
    { numRuns },
  );
  t.ok(events > numRuns / 6, `${events} events dispatched over ${numRuns} streams`);
});
