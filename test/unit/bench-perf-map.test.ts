/**
 * bench/perf-map.ts: when V8 reuses the address of dead code, the newest map
 * line for an address is the live code and every older overlapping line goes;
 * lines that overlap nothing are kept in their order.
 */
import fc from 'fast-check';
import t from 'tap';
import { cleanPerfMap } from '../../bench/perf-map.js';

const line = (start: number, size: number, name: string) => `${start.toString(16)} ${size.toString(16)} ${name}`;

t.test('a reused address keeps the newest name; untouched lines stay, in order', async (t) => {
  const map = [
    line(0x1000, 0x100, 'JS:~ file:///app/node_modules/ajv/dist/refs/jtd-schema.js:1:1'),
    line(0x2000, 0x40, 'Builtin:ArrayMap'),
    line(0x1080, 0x40, 'JS:*unaryCall file:///app/dist/proxy/unary.js:11:3'),
    line(0x3000, 0x10, 'JS:^older /a.js:1:1'),
    line(0x3000, 0x10, 'JS:*newer /a.js:1:1'),
  ].join('\n');
  const cleaned = cleanPerfMap(`${map}\n`);
  t.equal(cleaned.dropped, 2);
  t.equal(
    cleaned.text,
    `${[line(0x2000, 0x40, 'Builtin:ArrayMap'), line(0x1080, 0x40, 'JS:*unaryCall file:///app/dist/proxy/unary.js:11:3'), line(0x3000, 0x10, 'JS:*newer /a.js:1:1')].join('\n')}\n`,
  );
});

t.test('whatever the map, what is left never overlaps and every newest line for its range survives', async (t) => {
  const entryArb = fc.record({ start: fc.integer({ min: 0, max: 4000 }), size: fc.integer({ min: 1, max: 300 }) });
  fc.assert(
    fc.property(fc.array(entryArb, { maxLength: 60 }), (entries) => {
      const text = entries.map((e, i) => line(e.start, e.size, `f${i}`)).join('\n');
      const kept = cleanPerfMap(text)
        .text.split('\n')
        .filter(Boolean)
        .map((l) => {
          const [start, size, name] = l.split(' ');
          return { start: parseInt(start!, 16), end: parseInt(start!, 16) + parseInt(size!, 16), order: Number(name!.slice(1)) };
        });
      const sorted = [...kept].sort((a, b) => a.start - b.start);
      const disjoint = sorted.every((e, i) => i === 0 || sorted[i - 1]!.end <= e.start);
      const inOrder = kept.every((e, i) => i === 0 || kept[i - 1]!.order < e.order);
      // The newest line of all is live code by definition.
      const newest = entries.length === 0 || kept.some((e) => e.order === entries.length - 1);
      return disjoint && inOrder && newest;
    }),
    { numRuns: 500 },
  );
  t.pass('500 random maps');
});
