/**
 * sendUnary (src/upstream/unary-exchange.ts) against real HTTP servers on
 * 127.0.0.1: the decoded cap just under and just over, the buffer budget,
 * aborts before the head, after it and while the request waits in the pool,
 * and a property test over bodies, chunkings, encodings and caps.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync, gzipSync, brotliCompressSync } from 'node:zlib';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { Pool } from 'undici';
import { CallAbort } from '../../src/upstream/call-abort.js';
import { CallAborted } from '../../src/upstream/errors.js';
import { sendUnary } from '../../src/upstream/unary-exchange.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(t: Test, handler: Handler): Promise<{ pool: Pool; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 });
  t.teardown(async () => {
    await pool.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { pool, requests: () => requests };
}

/** Writes `body` in the given chunk sizes (chunked transfer coding), with `encoding` as Content-Encoding. */
const chunked = (body: Buffer, sizes: number[], encoding?: string): Handler => (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', ...(encoding ? { 'content-encoding': encoding } : {}) });
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    res.write(body.subarray(at, at + size));
    at += size;
  }
  if (at < body.length) res.write(body.subarray(at));
  res.end();
};

const REQUEST = { path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}') };

t.test('identity body: at the cap it is read whole, one byte over it is RESPONSE_TOO_LARGE', async (t) => {
  const body = Buffer.from('x'.repeat(1000));
  const { pool } = await serve(t, chunked(body, [100, 300, 600]));
  const at = await sendUnary(pool, REQUEST, { maxBytes: 1000 }, new CallAbort());
  t.equal(at.statusCode, 200);
  const read = await at.readBody();
  t.ok(read.ok && read.body.equals(body), 'just at the cap: the whole body');
  const over = await sendUnary(pool, REQUEST, { maxBytes: 999 }, new CallAbort());
  const refused = await over.readBody();
  t.same(refused.ok ? 'ok' : refused.reason, 'RESPONSE_TOO_LARGE', 'one byte over');
});

t.test('gzip body: the cap is on decoded bytes', async (t) => {
  const body = Buffer.from('y'.repeat(5000));
  const { pool } = await serve(t, chunked(gzipSync(body), [7, 20], 'gzip'));
  const at = await (await sendUnary(pool, REQUEST, { maxBytes: 5000 }, new CallAbort())).readBody();
  t.ok(at.ok && at.body.equals(body), 'decoded size at the cap');
  const over = await (await sendUnary(pool, REQUEST, { maxBytes: 4999 }, new CallAbort())).readBody();
  t.equal(over.ok ? 'ok' : over.reason, 'RESPONSE_TOO_LARGE');
});

t.test('an unknown coding is UNSUPPORTED_ENCODING, a broken one INVALID_ENCODING', async (t) => {
  const { pool: zstd } = await serve(t, chunked(Buffer.from('{}'), [2], 'zstd'));
  const unsupported = await (await sendUnary(zstd, REQUEST, { maxBytes: 100 }, new CallAbort())).readBody();
  t.equal(unsupported.ok ? 'ok' : unsupported.reason, 'UNSUPPORTED_ENCODING');
  const { pool: broken } = await serve(t, chunked(Buffer.from('not gzip at all'), [5], 'gzip'));
  const invalid = await (await sendUnary(broken, REQUEST, { maxBytes: 100 }, new CallAbort())).readBody();
  t.equal(invalid.ok ? 'ok' : invalid.reason, 'INVALID_ENCODING');
});

t.test('the buffer budget refusing a chunk is GATEWAY_OVERLOADED', async (t) => {
  const { pool } = await serve(t, chunked(Buffer.from('z'.repeat(300)), [100, 100, 100]));
  let taken = 0;
  const hold = { take: (n: number) => (taken += n) <= 200 };
  const read = await (await sendUnary(pool, REQUEST, { maxBytes: 10_000, hold }, new CallAbort())).readBody();
  t.equal(read.ok ? 'ok' : read.reason, 'GATEWAY_OVERLOADED');
});

t.test('aborted before the head: the promise rejects with the CallAborted', async (t) => {
  const { pool } = await serve(t, () => {});
  const abort = new CallAbort();
  const pending = sendUnary(pool, REQUEST, { maxBytes: 100 }, abort);
  setTimeout(() => abort.abort('UPSTREAM_TIMEOUT'), 20);
  const err = await pending.then(() => undefined, (e: unknown) => e);
  t.ok(err instanceof CallAborted);
  t.equal((err as CallAborted).reason, 'UPSTREAM_TIMEOUT');
});

t.test('aborted after the head: the body read fails with the reason', async (t) => {
  const { pool } = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"partial":');
  });
  const abort = new CallAbort();
  const res = await sendUnary(pool, REQUEST, { maxBytes: 100 }, abort);
  abort.abort('CALLER_CLOSED');
  const read = await res.readBody();
  t.equal(read.ok ? 'ok' : read.reason, 'CALLER_CLOSED');
});

t.test('aborted while waiting in the pool: settles at once and is never sent', async (t) => {
  let release: (() => void) | undefined;
  const { pool, requests } = await serve(t, (_req, res) => {
    release = () => res.end('{}');
  });
  const first = sendUnary(pool, REQUEST, { maxBytes: 100 }, new CallAbort());
  // One connection: the second request waits for the first to finish.
  await new Promise((r) => setTimeout(r, 50));
  const abort = new CallAbort();
  const queued = sendUnary(pool, REQUEST, { maxBytes: 100 }, abort);
  abort.abort('GATEWAY_SHUTDOWN');
  const err = await queued.then(() => undefined, (e: unknown) => e);
  t.equal((err as CallAborted).reason, 'GATEWAY_SHUTDOWN', 'rejected before the connection was free');
  release!();
  t.ok((await (await first).readBody()).ok);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(requests(), 1, 'the aborted request never reached the upstream');
});

t.test('already aborted: nothing is dispatched', async (t) => {
  const { pool, requests } = await serve(t, chunked(Buffer.from('{}'), [2]));
  const abort = new CallAbort();
  abort.abort('UPSTREAM_TIMEOUT');
  const err = await sendUnary(pool, REQUEST, { maxBytes: 100 }, abort).then(() => undefined, (e: unknown) => e);
  t.equal((err as CallAborted).reason, 'UPSTREAM_TIMEOUT');
  t.equal(requests(), 0);
});

t.test('property: any body, chunking, encoding and cap: ok with the same bytes iff the decoded size fits', async (t) => {
  let next: { wire: Buffer; sizes: number[]; encoding: string | undefined } | undefined;
  const { pool } = await serve(t, (req, res) => chunked(next!.wire, next!.sizes, next!.encoding)(req, res));
  const encoders: Record<string, (b: Buffer) => Buffer> = { identity: (b) => b, gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
  await fc.assert(
    fc.asyncProperty(
      fc.uint8Array({ maxLength: 4096 }),
      fc.array(fc.integer({ min: 1, max: 700 }), { maxLength: 8 }),
      fc.constantFrom('identity', 'gzip', 'deflate', 'br'),
      fc.integer({ min: 0, max: 5000 }),
      async (bytes, sizes, encoding, maxBytes) => {
        const body = Buffer.from(bytes);
        next = { wire: encoders[encoding]!(body), sizes, encoding: encoding === 'identity' ? undefined : encoding };
        const read = await (await sendUnary(pool, REQUEST, { maxBytes }, new CallAbort())).readBody();
        if (body.length <= maxBytes) return read.ok && read.body.equals(body);
        return !read.ok && read.reason === 'RESPONSE_TOO_LARGE';
      },
    ),
    { numRuns: 60 },
  );
  t.pass();
});
