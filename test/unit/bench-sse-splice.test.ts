/**
 * The bench's minimal validating relay (bench/sse-splice.ts) is a yardstick
 * for the gateway's stream path, so it must really do its job: however the
 * network cuts the bytes (mid-event, mid-character), every data event comes
 * out once, parsed, with the caller's id in place of the upstream's, and a
 * bad event is refused.
 */
import fc from 'fast-check';
import t from 'tap';
import { EventSplicer, SpliceError } from '../../bench/sse-splice.js';
import { cutAt } from '../support/envelope-invariants.js';

const idArb = fc.oneof(fc.integer(), fc.string({ maxLength: 12 }), fc.constant(null));

/** One SSE block: a JSON-RPC result event (compact, or members in another order) or a comment the relay drops. */
const blockArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ id: idArb, result: fc.jsonValue({ maxDepth: 3 }), reordered: fc.boolean() }).map(({ id, result, reordered }) => ({
      text: `data: ${reordered ? JSON.stringify({ result, id, jsonrpc: '2.0' }) : JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`,
      result: result as unknown,
    })),
  },
  { weight: 1, arbitrary: fc.constant({ text: ': keep-alive\n\n', result: undefined as unknown }) },
);

function relay(callerId: unknown, chunks: Buffer[]): string {
  const splicer = new EventSplicer(callerId);
  return chunks.map((c) => splicer.push(c)).join('');
}

t.test('every data event comes out once with the caller id, whatever the chunking', async (t) => {
  fc.assert(
    fc.property(idArb, fc.array(blockArb, { maxLength: 10 }), fc.array(fc.nat(), { maxLength: 12 }), (callerId, blocks, cuts) => {
      const bytes = Buffer.from(blocks.map((b) => b.text).join(''), 'utf8');
      const expected = blocks
        .filter((b) => b.text.startsWith('data: '))
        .map((b) => `data: ${JSON.stringify({ jsonrpc: '2.0', id: callerId, result: JSON.parse(JSON.stringify(b.result)) })}\n\n`)
        .join('');
      return relay(callerId, cutAt(bytes, cuts)) === expected;
    }),
    { numRuns: 500 },
  );
});

t.test('a multi-byte character cut between two chunks is decoded whole', async (t) => {
  const bytes = Buffer.from('data: {"jsonrpc":"2.0","id":1,"result":{"text":"café — ✓"}}\n\n', 'utf8');
  const cut = bytes.indexOf(0xa9); // the second byte of "é"
  t.equal(relay('c', [bytes.subarray(0, cut), bytes.subarray(cut)]), 'data: {"jsonrpc":"2.0","id":"c","result":{"text":"café — ✓"}}\n\n');
});

t.test('an event whose data is not JSON, or not a result, stops the relay after the good events before it', async (t) => {
  const good = 'data: {"jsonrpc":"2.0","id":1,"result":true}\n\n';
  for (const bad of ['data: {"jsonrpc":"2.0","id":1,"result":\n\n', 'data: {"jsonrpc":"2.0","id":1,"error":{"code":-1}}\n\n', 'data: [1,2]\n\n']) {
    const splicer = new EventSplicer('c');
    t.equal(splicer.push(Buffer.from(good + bad + good)), 'data: {"jsonrpc":"2.0","id":"c","result":true}\n\n', bad);
    t.type(splicer.error, SpliceError, bad);
    t.equal(splicer.push(Buffer.from(good)), '', 'nothing after a bad event');
  }
});

t.test('a partial event waits for its end', async (t) => {
  const splicer = new EventSplicer(7);
  t.equal(splicer.push(Buffer.from('data: {"jsonrpc":"2.0","id":1,"result":1}\n')), '');
  t.equal(splicer.push(Buffer.from('\n')), 'data: {"jsonrpc":"2.0","id":7,"result":1}\n\n');
});
