/**
 * The streamed read of the upstream exchange (src/upstream/exchange.ts)
 * against real HTTP servers on 127.0.0.1: a reader that stops reading
 * pauses the transfer itself (bytes counted on both sockets: the gateway
 * holds what undici's parser and the socket's buffer keep, a read or two,
 * not the stream), nothing is read
 * before the relay starts the flow, an ending or an abort that comes before
 * the start is delivered at the start, and the head chooses buffered or
 * streamed. Outcomes and byte counts only: no durations are asserted.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import t, { type Test } from 'tap';
import { Pool, buildConnector } from 'undici';
import { CallAbort } from '../../src/upstream/call-abort.js';
import { sendExchange, type StreamSink, type StreamSource, type UpstreamResponse } from '../../src/upstream/exchange.js';
import { delay } from '../support/servers.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Served {
  readonly pool: Pool;
  /** The client sockets the pool opened (to count the bytes the gateway side read). */
  readonly sockets: Socket[];
}

async function serve(t: Test, handler: Handler): Promise<Served> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets: Socket[] = [];
  const connect = buildConnector({});
  const pool = new Pool(`http://127.0.0.1:${(server.address() as { port: number }).port}`, {
    connections: 1,
    connect: (options, callback) =>
      connect(options, (err, socket) => {
        if (socket) sockets.push(socket as Socket);
        // buildConnector's callback is typed as two overloads; forward whichever this is.
        (callback as (err: Error | null, socket: unknown) => void)(err, socket);
      }),
  });
  t.teardown(async () => {
    await pool.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { pool, sockets };
}

const SSE = { 'content-type': 'text/event-stream' };
const REQUEST = { path: '/', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
const LIMITS = { maxBytes: 1024 };
const streamIfSse = (_status: number, headers: Record<string, unknown>) => headers['content-type'] === 'text/event-stream';

function open(pool: Pool, abort = new CallAbort()): Promise<UpstreamResponse> {
  return sendExchange(pool, REQUEST, { limits: LIMITS, streamIf: streamIfSse }, abort);
}

/** A sink that records what it is handed. */
function recorder(onData?: (received: number) => void): StreamSink & { received: number; hash: ReturnType<typeof createHash>; ended: Promise<'end' | Error> } {
  let settle!: (how: 'end' | Error) => void;
  const sink = {
    received: 0,
    hash: createHash('sha256'),
    ended: new Promise<'end' | Error>((resolve) => (settle = resolve)),
    data(chunk: Buffer) {
      sink.received += chunk.length;
      sink.hash.update(chunk);
      onData?.(sink.received);
    },
    end: () => settle('end'),
    error: (err: Error) => settle(err),
  };
  return sink;
}

async function waitFor(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  for (const until = Date.now() + ms; !check(); await delay(10)) if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
}

/** Bytes of a deterministic pattern, so what arrives can be checked whole. */
const PIECE = Buffer.alloc(16 * 1024, 'data: {"n":0123456789}\n\n');
const TOTAL_PIECES = 2048; // 32 MiB: more than the kernel buffers on both ends of a loopback socket can hold

t.test('a reader that stops: the transfer pauses, the gateway side holds a socket read or two (counted on the socket), then it all arrives', async (t) => {
  // The upstream writes as fast as its socket takes bytes and waits for 'drain' when it does not.
  let offered = 0;
  let blocked = false;
  const { pool, sockets } = await serve(t, (_req, res) => {
    res.writeHead(200, SSE);
    let sent = 0;
    const pump = () => {
      while (sent < TOTAL_PIECES) {
        sent++;
        offered += PIECE.length;
        if (!res.write(PIECE)) {
          blocked = true;
          res.once('drain', () => {
            blocked = false;
            pump();
          });
          return;
        }
      }
      res.end();
    };
    pump();
  });
  const res = await open(pool);
  const source = res.stream as StreamSource;
  t.ok(source, 'an event stream head chooses the streamed read');

  // The reader stops once, after its first 64 KiB, as the relay does when its caller stops reading.
  let stopped = false;
  const sink = recorder((received) => {
    if (received >= 64 * 1024 && !stopped) {
      stopped = true;
      source.pause();
    }
  });
  source.start(sink);
  await waitFor('the reader to stop', () => stopped);
  await waitFor('the upstream to be blocked', () => blocked);
  const socket = sockets[0]!;
  // The socket may finish a read already under way after the upstream blocks (it stops reading once its own buffer
  // is full): take the count once it has held still for 50 ms. A pause that did not hold never settles (time-out).
  let lastRead = -1;
  let stillSince = Date.now();
  await waitFor('the socket to stop reading', () => {
    if (socket.bytesRead !== lastRead) {
      lastRead = socket.bytesRead;
      stillSince = Date.now();
    }
    return Date.now() - stillSince >= 50;
  });
  const readAtBlock = socket.bytesRead;
  const receivedAtBlock = sink.received;
  // Nothing moves while the reader is stopped: a wait, not a timing assertion.
  await delay(200);
  t.equal(socket.bytesRead, readAtBlock, 'no byte was read from the socket while paused');
  t.equal(sink.received, receivedAtBlock, 'nothing was handed on while paused');
  t.ok(blocked, 'the upstream is still blocked');
  t.ok(sink.received >= 64 * 1024, 'the reader got what it read before it stopped');
  // The bytes read from the socket but not handed on: what the gateway side holds. undici's parser keeps the rest of
  // the read it was executing (one libuv read, at most 64 KiB) and the socket's readable buffer its high-water mark
  // (plus at most one read that crossed it); the head is counted in bytesRead too.
  const held = socket.bytesRead - sink.received;
  const bound = 2 * 64 * 1024 + socket.readableHighWaterMark + 1024;
  t.ok(held <= bound, `held ${held} bytes (bound ${bound}): a socket read or two, not the stream`);
  t.ok(offered < (TOTAL_PIECES * PIECE.length) / 2, `the upstream could offer only ${offered} of ${TOTAL_PIECES * PIECE.length} bytes (kernel buffers)`);

  source.resume();
  t.equal(await sink.ended, 'end', 'resumed: the stream ends');
  t.equal(sink.received, TOTAL_PIECES * PIECE.length, 'every byte arrived');
  const expected = createHash('sha256');
  for (let i = 0; i < TOTAL_PIECES; i++) expected.update(PIECE);
  t.equal(sink.hash.digest('hex'), expected.digest('hex'), 'the same bytes in the same order');
});

t.test('nothing is read before the start; an end that came first is delivered at the start', async (t) => {
  let finished = false;
  const { pool, sockets } = await serve(t, (_req, res) => {
    res.writeHead(200, SSE);
    res.end('data: {"n":1}\n\n', () => (finished = true));
  });
  const res = await open(pool);
  await waitFor('the upstream to finish writing', () => finished);
  await delay(50);
  const sink = recorder();
  t.ok(sockets[0]!.bytesRead > 0, 'the head was read');
  t.equal(sink.received, 0);
  res.stream!.start(sink);
  t.equal(await sink.ended, 'end');
  t.equal(sink.received, Buffer.byteLength('data: {"n":1}\n\n'), 'the whole body, once started');
});

t.test('an abort after the head and before the start reaches the sink as the transfer failing', async (t) => {
  let closed = false;
  const { pool } = await serve(t, (_req, res) => {
    res.writeHead(200, SSE);
    res.write('data: {"n":1}\n\n');
    res.once('close', () => (closed = true));
  });
  const abort = new CallAbort();
  const res = await open(pool, abort);
  abort.abort('CALLER_CLOSED');
  await waitFor('the upstream request to be cut', () => closed);
  const sink = recorder();
  res.stream!.start(sink);
  const ended = await sink.ended;
  t.type(ended, Error, 'the sink hears an error, not an end');
  abort.finish();
});

t.test('a stream cut mid-event: the bytes before the cut, then an error', async (t) => {
  const { pool } = await serve(t, (_req, res) => {
    res.writeHead(200, SSE);
    res.write('data: {"n":1}\n\ndata: {"n":', () => setImmediate(() => res.socket?.destroy()));
  });
  const res = await open(pool);
  const sink = recorder();
  res.stream!.start(sink);
  const ended = await sink.ended;
  t.type(ended, Error, 'the cut is an error, not an end');
  t.equal(sink.received, Buffer.byteLength('data: {"n":1}\n\ndata: {"n":'), 'every byte before the cut');
});

t.test('destroy: the sink hears nothing more and the upstream request is cut', async (t) => {
  let closed = false;
  const { pool } = await serve(t, (_req, res) => {
    res.writeHead(200, SSE);
    res.write('data: {"n":1}\n\n');
    res.once('close', () => (closed = true));
  });
  const res = await open(pool);
  const sink = recorder();
  let after = false;
  res.stream!.start({ data: (c) => sink.data(c), end: () => (after = true), error: () => (after = true) });
  await waitFor('the first bytes', () => sink.received > 0);
  res.stream!.destroy();
  await waitFor('the upstream request to be cut', () => closed);
  await delay(20);
  t.notOk(after, 'no end or error after destroy');
});

t.test('the head chooses: a JSON head is read buffered (capped), a stream head has no buffered body', async (t) => {
  const { pool } = await serve(t, (req, res) => {
    if (req.url === '/json') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    res.writeHead(200, SSE).end('data: {}\n\n');
  });
  const json = await sendExchange(pool, { ...REQUEST, path: '/json' }, { limits: LIMITS, streamIf: streamIfSse }, new CallAbort());
  t.equal(json.stream, undefined, 'no stream');
  const read = await json.readBody();
  t.ok(read.ok && read.body.toString() === '{"ok":true}', 'the body, read whole');
  const over = await sendExchange(pool, { ...REQUEST, path: '/json' }, { limits: { maxBytes: 10 }, streamIf: streamIfSse }, new CallAbort());
  const refused = await over.readBody();
  t.equal(refused.ok ? 'ok' : refused.reason, 'RESPONSE_TOO_LARGE', 'the buffered read keeps its cap');
  const sse = await open(pool);
  t.ok(sse.stream, 'a stream');
  const none = await sse.readBody();
  t.equal(none.ok ? 'ok' : none.reason, 'GATEWAY_ERROR', 'asking a streamed head for a buffered body is a bug, said as one');
  sse.stream!.destroy();
});

t.test('readBodyNow: the body at once when it came with the head, nothing while it is still arriving', async (t) => {
  let finish: (() => void) | undefined;
  const { pool } = await serve(t, (req, res) => {
    if (req.url === '/whole') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    // The head and half the body now, the rest when the test says.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
    res.write('{"ok":');
    finish = () => res.end('true}');
  });
  const whole = await sendExchange(pool, { ...REQUEST, path: '/whole' }, { limits: LIMITS }, new CallAbort());
  await waitFor('the whole body', () => whole.readBodyNow() !== undefined);
  const now = whole.readBodyNow()!;
  t.ok(now.ok && now.body.toString() === '{"ok":true}', 'the body, read whole');
  t.same(await whole.readBody(), now, 'the same read readBody hands over');

  const partial = await sendExchange(pool, { ...REQUEST, path: '/partial' }, { limits: LIMITS }, new CallAbort());
  await delay(50);
  t.equal(partial.readBodyNow(), undefined, 'half a body: not yet');
  const later = partial.readBody();
  finish!();
  const read = await later;
  t.ok(read.ok && read.body.toString() === '{"ok":true}', 'then the whole body, by readBody');
  t.same(partial.readBodyNow(), read, 'and at once from then on');

  const over = await sendExchange(pool, { ...REQUEST, path: '/whole' }, { limits: { maxBytes: 10 } }, new CallAbort());
  await waitFor('the refusal', () => over.readBodyNow() !== undefined);
  const refused = over.readBodyNow()!;
  t.equal(refused.ok ? 'ok' : refused.reason, 'RESPONSE_TOO_LARGE', 'a refused read is there at once too');
});
