/**
 * Hostile upstreams at the socket level, part 2: response heads (size and
 * count bounds, forbidden bytes in values) and slow remotes that dribble
 * bytes before or after the head.
 */
import t from 'tap';
import { HEADERS_MS, MARK, SLOW_TOTAL_MS, runCase, startRawSuite, type CaseSpec } from '../support/raw-socket-harness.js';

/** Clean: in the cases that succeed it reaches the caller verbatim; the markers live in the headers. */
const body = `{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"task-1"}}`;
const len = Buffer.byteLength(body);

/** undici's bound (pools.ts sets maxHeaderSize 32 KiB): the sum of every header name and value, refused at >= the bound. */
const MAX_HEADER_BYTES = 32 * 1024;
const BASE_HEADERS = ['content-type: application/json', `content-length: ${len}`];
/** What undici counts for the two framing headers every case here sends. */
const BASE_COUNTED = 'content-type'.length + 'application/json'.length + 'content-length'.length + String(len).length;

function response(extra: readonly string[]): string {
  return `HTTP/1.1 200 OK\r\n${[...BASE_HEADERS, ...extra].map((l) => `${l}\r\n`).join('')}\r\n${body}`;
}

/** One filler header sized so the counted total is exactly `total`. */
function filler(total: number): string {
  const name = 'x-raw-fill';
  return `${name}: ${MARK}${'f'.repeat(total - BASE_COUNTED - name.length - MARK.length)}`;
}

/** The most 2-byte headers ("a: 1") that fit under the size bound: undici has no count bound of its own. */
const MAX_TINY_HEADERS = Math.floor((MAX_HEADER_BYTES - 1 - BASE_COUNTED) / 2);
const tiny = (n: number) => Array.from({ length: n }, () => 'a: 1');

const cases: CaseSpec[] = [
  { name: 'headers-one-byte-under-32k', script: [{ write: response([filler(MAX_HEADER_BYTES - 1)]) }], expect: 'ok', connection: 'may-reuse' },
  { name: 'headers-at-32k', script: [{ write: response([filler(MAX_HEADER_BYTES)]) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'headers-far-over-32k', script: [{ write: response([filler(200_000)]) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  {
    name: 'two-thousand-headers',
    script: [{ write: response([`x-raw: ${MARK}`, ...Array.from({ length: 1_999 }, (_, i) => `x-${i}: v`)]) }],
    expect: 'ok',
    connection: 'may-reuse',
  },
  { name: 'most-headers-under-the-size-bound', script: [{ write: response(tiny(MAX_TINY_HEADERS)) }], expect: 'ok', connection: 'may-reuse' },
  { name: 'one-header-more', script: [{ write: response(tiny(MAX_TINY_HEADERS + 1)) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'twenty-thousand-headers', script: [{ write: response(tiny(20_000)) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },

  // --- bytes a header value must not hold
  { name: 'value-with-bare-cr', script: [{ write: response([`x-raw: a\r${MARK}`]) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'value-with-bare-lf', script: [{ write: response([`x-raw: a\n${MARK}: injected`]) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'value-with-nul', script: [{ write: response([`x-raw: a\u0000${MARK}`]) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'obs-fold-continuation', script: [{ write: response(['x-raw: a', ` ${MARK}`]) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'space-before-colon', script: [{ write: response([`x-raw : ${MARK}`]) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  {
    name: 'value-with-8bit-bytes',
    // obs-text is legal in a value; the point is that none of it reaches the caller.
    script: [{ write: Buffer.from(response([`x-raw: \u00e9\u00ff${MARK}`]), 'latin1') }],
    expect: 'ok',
    connection: 'may-reuse',
  },
];

t.test('response head cases', async (t) => {
  const suite = await startRawSuite(t);
  for (const spec of cases) await t.test(spec.name, async (t) => void (await runCase(t, suite, spec)));
});

t.test('slow remotes', async (t) => {
  const suite = await startRawSuite(t);
  const full = response([]);
  const headEnd = full.indexOf('\r\n\r\n') + 4;

  await t.test(`the head just inside headersMs (${HEADERS_MS} ms) is fine`, async (t) => {
    // undici's headers timer ticks every ~500 ms and can fire that much early: stay clear of it.
    await runCase(t, suite, { name: 'head-in-time', remote: 'slowhead', script: [{ wait: HEADERS_MS - 500 }, { write: full }], expect: 'ok', connection: 'may-reuse' });
  });
  await t.test('one byte per 200 ms before the head ends at headersMs', async (t) => {
    const { elapsedMs } = await runCase(t, suite, { name: 'drip-before-head', remote: 'slowhead', script: [{ drip: full, everyMs: 200 }], expect: 'UPSTREAM_TIMEOUT' });
    // undici's headers timer has ~500 ms resolution (it fires 2 ticks after it is armed): the point is that it fires.
    t.ok(elapsedMs >= HEADERS_MS - 500 && elapsedMs < HEADERS_MS + 1_000, `ended after ${Math.round(elapsedMs)} ms`);
  });
  await t.test(`a body that completes inside totalMs (${SLOW_TOTAL_MS} ms) is fine`, async (t) => {
    await runCase(t, suite, {
      name: 'body-in-time',
      remote: 'slowbody',
      script: [{ write: full.slice(0, headEnd + 10) }, { wait: SLOW_TOTAL_MS / 2 }, { write: full.slice(headEnd + 10) }],
      expect: 'ok',
      connection: 'may-reuse',
    });
  });
  await t.test('one byte per 200 ms after the head ends at totalMs', async (t) => {
    const { elapsedMs } = await runCase(t, suite, {
      name: 'drip-after-head',
      remote: 'slowbody',
      script: [{ write: full.slice(0, headEnd) }, { drip: full.slice(headEnd), everyMs: 200 }],
      expect: 'UPSTREAM_TIMEOUT',
      httpStatus: 200,
    });
    t.ok(elapsedMs >= SLOW_TOTAL_MS - 50 && elapsedMs < SLOW_TOTAL_MS + 500, `ended after ${Math.round(elapsedMs)} ms`);
  });
});
