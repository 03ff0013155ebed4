import t from 'tap';
import { SseParser, type SseItem } from '../../src/stream/sse-parser.js';

/** Feeds `chunks` (strings are UTF-8, or raw Buffers) and returns every item. */
function parse(chunks: Array<string | Buffer>, maxEventBytes = 1024): { items: SseItem[]; pending: boolean } {
  const parser = new SseParser(maxEventBytes);
  const items: SseItem[] = [];
  for (const c of chunks) parser.push(typeof c === 'string' ? Buffer.from(c) : c, (item) => void items.push(item));
  return { items, pending: parser.pending };
}

const events = (chunks: Array<string | Buffer>, max = 1024) =>
  parse(chunks, max).items.flatMap((i) => (i.kind === 'event' ? [{ type: i.type, data: i.data }] : []));

/** Every way of splitting `text` into single bytes. */
const bytewise = (text: string | Buffer): Buffer[] => [...Buffer.from(text)].map((b) => Buffer.from([b]));

t.test('one event per blank line; data lines joined with LF', async (t) => {
  t.same(events(['data: a\n\ndata: b\ndata: c\n\n']), [
    { type: 'message', data: 'a' },
    { type: 'message', data: 'b\nc' },
  ]);
});

t.test('LF, CRLF and CR line endings give the same events, whole or byte by byte', async (t) => {
  const want = [{ type: 'message', data: 'x\ny' }, { type: 'status', data: 'z' }];
  for (const eol of ['\n', '\r\n', '\r']) {
    const text = `data: x${eol}data: y${eol}${eol}event: status${eol}data: z${eol}${eol}`;
    t.same(events([text]), want, `${JSON.stringify(eol)} whole`);
    t.same(events(bytewise(text)), want, `${JSON.stringify(eol)} byte by byte`);
  }
});

t.test('CR at the end of one chunk and LF at the start of the next are one line ending', async (t) => {
  t.same(events(['data: a\r', '\n\r', '\ndata: b\r\n\r\n']), [
    { type: 'message', data: 'a' },
    { type: 'message', data: 'b' },
  ]);
});

t.test('field rules: one leading space stripped, no colon means empty value, unknown fields ignored', async (t) => {
  t.same(events(['data:  two spaces\n\n']), [{ type: 'message', data: ' two spaces' }]);
  t.same(events(['data:nospace\n\n']), [{ type: 'message', data: 'nospace' }]);
  t.same(events(['data\n\n']), [{ type: 'message', data: '' }]);
  t.same(events(['retry: 10\nfoo: bar\ndata: x\n\n']), [{ type: 'message', data: 'x' }]);
  t.same(events(['event: only\n\n']), [], 'an event without data is not dispatched');
  t.same(events(['event: error\n\ndata: after\n\n']), [{ type: 'message', data: 'after' }], 'event type resets per event');
});

t.test('id field: the last event id is kept across events, ids with NUL ignored', async (t) => {
  const { items } = parse(['id: 7\ndata: a\n\ndata: b\n\nid: x\u0000y\ndata: c\n\n']);
  const ids = items.flatMap((i) => (i.kind === 'event' ? [i.lastEventId] : []));
  t.same(ids, ['7', '7', '7']);
});

t.test('comments are reported, never become data', async (t) => {
  const { items } = parse([': keep-alive\n\n:\ndata: a\n: inside\ndata: b\n\n']);
  t.same(
    items.map((i) => i.kind),
    ['comment', 'comment', 'comment', 'event'],
  );
  t.same(events([': keep-alive\n\n:\ndata: a\n: inside\ndata: b\n\n']), [{ type: 'message', data: 'a\nb' }]);
});

t.test('a leading BOM is dropped, even split over chunks; a later one is kept', async (t) => {
  t.same(events(['\ufeffdata: a\n\n']), [{ type: 'message', data: 'a' }]);
  t.same(events(bytewise('\ufeffdata: a\n\n')), [{ type: 'message', data: 'a' }]);
  t.same(events(['\ufeff\ndata: a\n\n']), [{ type: 'message', data: 'a' }], 'BOM then a blank line');
  t.same(events(['data: a\n\ndata: \ufeffb\n\n']), [
    { type: 'message', data: 'a' },
    { type: 'message', data: '\ufeffb' },
  ]);
  t.equal(parse([Buffer.from([0xef, 0xbb])]).pending, true, 'half a BOM then the end is a partial line');
});

t.test('UTF-8 split across chunks is joined before decoding', async (t) => {
  const text = 'data: {"t":"é€😀"}\n\n';
  t.same(events(bytewise(text)), [{ type: 'message', data: '{"t":"é€😀"}' }]);
  const { items } = parse(bytewise(text));
  t.equal(items[0]?.kind === 'event' && items[0].invalidUtf8, false);
});

t.test('invalid UTF-8 in a data line marks the event', async (t) => {
  const { items } = parse([Buffer.concat([Buffer.from('data: '), Buffer.from([0xff, 0xfe]), Buffer.from('\n\n')])]);
  t.equal(items.length, 1);
  t.equal(items[0]?.kind === 'event' && items[0].invalidUtf8, true);
});

t.test('pending: a partial line or an event without its blank line', async (t) => {
  t.equal(parse(['data: a\n\n']).pending, false);
  t.equal(parse(['data: a\n']).pending, true, 'event without its blank line');
  t.equal(parse(['data: {"jsonrpc"']).pending, true, 'line without its newline');
  t.equal(parse([': comment\n']).pending, false, 'a whole comment between events is not an event');
  t.equal(parse([': partial comm']).pending, true, 'a partial line of any kind');
  t.equal(parse(['']).pending, false);
});

// Event size = bytes of its lines with their line endings, its closing blank line excluded.
t.test('maxEventBytes: an event of exactly the bound passes, one byte more does not', async (t) => {
  const max = 100;
  const line = (n: number) => `data: ${'x'.repeat(n - 'data: \n'.length)}\n`;
  t.equal(Buffer.byteLength(line(max)), max);
  for (const chunks of [[`${line(max)}\n`], bytewise(`${line(max)}\n`)]) {
    const { items } = parse(chunks, max);
    t.same(items.map((i) => i.kind), ['event'], 'just under');
  }
  for (const chunks of [[`${line(max + 1)}\n`], bytewise(`${line(max + 1)}\n`)]) {
    const { items } = parse(chunks, max);
    t.same(items.map((i) => i.kind), ['too-large'], 'just over');
  }
});

t.test("dataBytes: the data's UTF-8 bytes beside the text, for many lines up to the bound; none after invalid UTF-8", async (t) => {
  // Many short data lines: the bytes are appended (not the event's bytes so far copied per line), up to the bound.
  const max = 64 * 1024;
  const lines = Math.floor(max / Buffer.byteLength('data: é\n'));
  const text = `${'data: é\n'.repeat(lines)}\n`;
  t.ok(Buffer.byteLength(text) - 1 <= max, 'within the bound (its closing blank line not counted)');
  const { items } = parse([text], max);
  const event = items[0];
  t.equal(event?.kind, 'event');
  if (event?.kind !== 'event') return;
  t.equal(event.data, Array.from({ length: lines }, () => 'é').join('\n'));
  t.same(event.dataBytes, Buffer.from(event.data), `${lines} lines`);
  const split = parse(bytewise('data: a\ndata:\ndata: é\n\n')).items[0];
  t.same(split?.kind === 'event' && split.dataBytes, Buffer.from('a\n\né'), 'byte by byte, an empty line among them');
  const bad = parse([Buffer.from('data: a\n'), Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a])]).items[0];
  t.equal(bad?.kind === 'event' && bad.dataBytes, undefined, 'a data line that is not UTF-8: no bytes');
  const badName = parse([Buffer.from('data: a\n'), Buffer.from([0x65, 0xff, 0x3a, 0x0a, 0x0a])]).items[0];
  t.equal(badName?.kind === 'event' && badName.dataBytes, undefined, 'any line of the event not UTF-8: no bytes');
});

t.test('maxEventBytes counts every line of the event and CRLF as two bytes', async (t) => {
  // "data: a\r\n" is 9 bytes; two of them are 18.
  t.same(parse(['data: a\r\ndata: a\r\n\r\n'], 18).items.map((i) => i.kind), ['event']);
  t.same(parse(['data: a\r\ndata: a\r\n\r\n'], 17).items.map((i) => i.kind), ['too-large']);
  t.same(parse(['data: a\r', '\ndata: a\r', '\n\r\n'], 17).items.map((i) => i.kind), ['too-large'], 'CR and LF split');
});

t.test('maxEventBytes: a line that never ends trips the bound as its bytes arrive', async (t) => {
  const parser = new SseParser(64);
  const items: SseItem[] = [];
  parser.push(Buffer.from('data: '), (i) => void items.push(i));
  for (let k = 0; k < 100 && items.length === 0; k++) parser.push(Buffer.from('x'), (i) => void items.push(i));
  t.same(items, [{ kind: 'too-large', bytes: 65 }], 'reported at byte 65, without a newline');
  parser.push(Buffer.from('data: more\n\n'), (i) => void items.push(i));
  t.equal(items.length, 1, 'nothing after the parser stopped');
});

t.test('maxEventBytes: one giant comment line is bounded too; comments between events are not summed', async (t) => {
  t.same(parse([`:${'c'.repeat(64)}`], 64).items.map((i) => i.kind), ['too-large']);
  const many = ': 0123456789\n'.repeat(20);
  t.same(parse([`${many}data: a\n\n`], 64).items.filter((i) => i.kind !== 'comment').map((i) => i.kind), ['event']);
});

t.test('the sink can stop the parser mid-chunk', async (t) => {
  const parser = new SseParser(1024);
  const seen: string[] = [];
  parser.push(Buffer.from('data: 1\n\ndata: 2\n\ndata: 3\n\n'), (i) => {
    if (i.kind === 'event') seen.push(i.data);
    return i.kind === 'event' && i.data === '2' ? false : true;
  });
  t.same(seen, ['1', '2']);
});
