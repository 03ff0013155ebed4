/**
 * Hostile upstreams at the socket level, part 3: Content-Encoding. The cap
 * (maxResponseBytes) is on decoded bytes, so a small compressed body that
 * inflates past it must stop early, and an endless one must cost the remote
 * only what fits in the socket buffers before the gateway hangs up.
 */
import { Readable } from 'node:stream';
import { brotliCompressSync, constants as zlibConstants, createBrotliCompress, createGzip, deflateSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { MARK, MAX_RESPONSE_BYTES, runCase, startRawSuite, waitFor, type CaseSpec } from '../support/raw-socket-harness.js';
import { httpResponse } from '../support/raw-upstream.js';

/** A valid JSON-RPC reply of exactly `size` bytes. */
function replyOfSize(size: number): Buffer {
  const shell = '{"jsonrpc":"2.0","id":1,"result":{"pad":""}}';
  return Buffer.from(shell.replace('""', `"${'a'.repeat(size - shell.length)}"`));
}

function encoded(body: Buffer, encoding: string): Buffer {
  return httpResponse(body, { 'content-encoding': encoding });
}

/** Zeros forever, compressed on the fly: an endless bomb, read until the gateway closes. */
function endlessBomb(compressor: () => NodeJS.ReadWriteStream): Readable {
  const zeros = Buffer.alloc(64 * 1024);
  const source = Readable.from((function* () {
    for (;;) yield zeros;
  })());
  return source.pipe(compressor()) as unknown as Readable;
}

const closeDelimited = (encoding: string) => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: ${encoding}\r\nx-raw: ${MARK}\r\n\r\n`;

const jsonBody = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"task-1"}}`);
const markedJson = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"${MARK}"}}`);
const gz = gzipSync(markedJson);

const cases: CaseSpec[] = [
  { name: 'gzip-decodes-to-the-cap', script: [{ write: encoded(gzipSync(replyOfSize(MAX_RESPONSE_BYTES)), 'gzip') }], expect: 'ok', connection: 'may-reuse' },
  {
    name: 'gzip-decodes-one-byte-over-the-cap',
    script: [{ write: encoded(gzipSync(replyOfSize(MAX_RESPONSE_BYTES + 1)), 'gzip') }],
    expect: 'RESPONSE_TOO_LARGE',
    httpStatus: 200,
    // The compressed body was whole and well framed: reuse is safe either way.
    connection: 'may-reuse',
  },
  { name: 'gzip-bomb-finite', script: [{ write: encoded(gzipSync(Buffer.alloc(16 * 2 ** 20)), 'gzip') }], expect: 'RESPONSE_TOO_LARGE', httpStatus: 200, connection: 'may-reuse' },
  { name: 'br-decodes', script: [{ write: encoded(brotliCompressSync(jsonBody), 'br') }], expect: 'ok', connection: 'may-reuse' },
  { name: 'br-decodes-one-byte-over-the-cap', script: [{ write: encoded(brotliCompressSync(replyOfSize(MAX_RESPONSE_BYTES + 1)), 'br') }], expect: 'RESPONSE_TOO_LARGE', httpStatus: 200, connection: 'may-reuse' },
  { name: 'deflate-decodes', script: [{ write: encoded(deflateSync(jsonBody), 'deflate') }], expect: 'ok', connection: 'may-reuse' },
  { name: 'unknown-encoding-zstd', script: [{ write: encoded(markedJson, 'zstd') }], expect: 'UNSUPPORTED_ENCODING', httpStatus: 200, connection: 'may-reuse' },
  { name: 'unknown-encoding-compress', script: [{ write: encoded(markedJson, 'compress') }], expect: 'UNSUPPORTED_ENCODING', httpStatus: 200, connection: 'may-reuse' },
  // read-body.ts accepts one coding only, by design: stacking is how bombs hide.
  { name: 'double-gzip', script: [{ write: encoded(gzipSync(gz), 'gzip, gzip') }], expect: 'UNSUPPORTED_ENCODING', httpStatus: 200, connection: 'may-reuse' },
  { name: 'gzip-then-br', script: [{ write: encoded(brotliCompressSync(gz), 'gzip, br') }], expect: 'UNSUPPORTED_ENCODING', httpStatus: 200, connection: 'may-reuse' },
  { name: 'corrupt-gzip', script: [{ write: encoded(Buffer.concat([gz.subarray(0, 10), Buffer.from(`garbage ${MARK} garbage`)]), 'gzip') }], expect: 'INVALID_ENCODING', httpStatus: 200, connection: 'may-reuse' },
  { name: 'truncated-gzip', script: [{ write: encoded(gz.subarray(0, gz.length - 12), 'gzip') }], expect: 'INVALID_ENCODING', httpStatus: 200, connection: 'may-reuse' },
  { name: 'plain-json-labelled-gzip', script: [{ write: encoded(markedJson, 'gzip') }], expect: 'INVALID_ENCODING', httpStatus: 200, connection: 'may-reuse' },
  { name: 'corrupt-br', script: [{ write: encoded(Buffer.from(`\u00ff\u00ff${MARK}`, 'latin1'), 'br') }], expect: 'INVALID_ENCODING', httpStatus: 200, connection: 'may-reuse' },
];

t.test('content-encoding cases', async (t) => {
  const suite = await startRawSuite(t);
  for (const spec of cases) await t.test(spec.name, async (t) => void (await runCase(t, suite, spec)));
});

t.test('an endless compression bomb costs the remote little and is cut at the cap', async (t) => {
  const suite = await startRawSuite(t);
  const bombs = {
    gzip: () => createGzip(),
    br: () => createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } }),
  };
  for (const [encoding, compressor] of Object.entries(bombs)) {
    await t.test(encoding, async (t) => {
      const { reply, elapsedMs } = await runCase(t, suite, {
        name: `endless-${encoding}-bomb`,
        script: [{ write: closeDelimited(encoding) }, { pipe: () => endlessBomb(compressor) }],
        expect: 'RESPONSE_TOO_LARGE',
        httpStatus: 200,
      });
      t.ok(elapsedMs < 2_000, `cut after ${Math.round(elapsedMs)} ms`);
      t.notMatch(reply.text, /aaaa|\u0000/, 'no decoded bytes in the reply');
      const conn = suite.raw.connectionOf(suite.raw.requests.find((r) => r.path.startsWith(`/endless-${encoding}`))!.path)!;
      await waitFor(() => conn.closed, 1_000);
      // What the remote managed to push before the gateway hung up: socket buffers, not the bomb.
      t.ok(conn.bytesWritten < 4 * 2 ** 20, `remote wrote ${conn.bytesWritten} compressed bytes`);
    });
  }
});
