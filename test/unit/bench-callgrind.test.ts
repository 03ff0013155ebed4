import t from 'tap';
import { LOOK_BACK, instructionsByFunction, nameAt, parsePerfMapEntries, totalInstructions } from '../../bench/callgrind.js';

const MAP = [
  '7f0000001000 40 JS:*stringEnd file:///work/main/dist/envelope/json-recognizers.js:391:19',
  '7f0000000000 100 JS:^handleCall file:///work/main/dist/routes/jsonrpc.js:109:27',
  // A second entry over part of the first one: V8 wrote it later, for code that replaced what was there.
  '7f0000000080 20 JS:*unaryCall file:///work/main/dist/proxy/unary.js:20:32',
  'not a line',
  '7f0000002000 10 Builtins_LoadIC',
].join('\n');

t.test('the perf map is read sorted by address, lines that are not entries skipped', async (t) => {
  const entries = parsePerfMapEntries(MAP);
  t.same(
    entries.map((e) => [e.start.toString(16), e.size]),
    [
      ['7f0000000000', 0x100],
      ['7f0000000080', 0x20],
      ['7f0000001000', 0x40],
      ['7f0000002000', 0x10],
    ],
  );
});

t.test('an address is named by the last entry that holds it, and by none past every entry', async (t) => {
  const entries = parsePerfMapEntries(MAP);
  t.match(nameAt(entries, 0x7f0000000000), /handleCall/);
  t.match(nameAt(entries, 0x7f0000000090), /unaryCall/, 'inside the later entry');
  t.match(nameAt(entries, 0x7f00000000a0), /handleCall/, 'just past the later entry: the one around it again');
  t.match(nameAt(entries, 0x7f000000103f), /stringEnd/, 'the last byte of an entry');
  t.equal(nameAt(entries, 0x7f0000001040), undefined, 'just past an entry');
  t.equal(nameAt(entries, 0x7effffffffff), undefined, 'before every entry');
  t.equal(nameAt([], 0x1000), undefined);
});

t.test('an entry holding an address is found among the last LOOK_BACK entries that start at or below it, not further', async (t) => {
  // One large entry, then small ones starting inside it; the address is past the small ones, inside the large one.
  const withInside = (count: number) =>
    parsePerfMapEntries(['1000 10000 JS:*outer file:///a.js:1:1', ...Array.from({ length: count }, (_, i) => `${(0x2000 + i * 0x10).toString(16)} 8 JS:*inner${i} file:///b.js:1:1`)].join('\n'));
  t.match(nameAt(withInside(LOOK_BACK - 1), 0x9000), /outer/, 'the outer entry within reach');
  t.equal(nameAt(withInside(LOOK_BACK), 0x9000), undefined, 'one entry more between: out of reach');
});

t.test('callgrind_annotate lines become instructions by function: JIT code named from the map, tiers merged', async (t) => {
  const annotated = [
    '--------------------------------------------------------------------------------',
    '1,029,472,346 (100.0%)  PROGRAM TOTALS',
    '53,364,000 ( 5.18%)  ???:0x00007f0000001010 [???]',
    '30,000 ( 0.01%)  ???:0x00007f0000001020\'2 [???]',
    '35,435,775 ( 3.44%)  ???:Builtins_LoadIC [/usr/bin/node]',
    '7,733,434 ( 0.75%)  ./malloc/./malloc/malloc.c:_int_malloc [/usr/lib/x86_64-linux-gnu/libc.so.6]',
    '17,707,590 ( 1.72%)  ???:v8::internal::compiler::GraphReducer::Reduce(v8::internal::compiler::Node*) [/usr/bin/node]',
    '1,000 ( 0.00%)  ???:0x0000000000000010 [???]',
    'Ir                   file:function',
  ].join('\n');
  const by = instructionsByFunction(annotated, parsePerfMapEntries(MAP));
  t.same(Object.fromEntries(by), {
    'stringEnd dist/envelope/json-recognizers.js:391': 53_394_000,
    Builtins_LoadIC: 35_435_775,
    _int_malloc: 7_733_434,
    'v8::internal::compiler::GraphReducer::Reduce': 17_707_590,
    '(JIT code, unnamed)': 1_000,
  });
});

t.test('a dump says its total, or the reading fails loudly', async (t) => {
  t.equal(totalInstructions('events: Ir\nsummary: 1234\n\ntotals: 1234\n'), 1234);
  t.equal(totalInstructions('events: Ir\nsummary: 77\n'), 77);
  t.throws(() => totalInstructions('events: Ir\n'), /no totals/);
});
