/**
 * The stream relay between real sockets: a hostile SSE upstream, a small
 * gateway-like server that calls the upstream with undici and hands the
 * response to relayStream, and a real HTTP client reading the caller's side.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { Agent, request } from 'undici';
import { parseConfig } from '../../src/loader/load.js';
import type { Limits, RemoteConfig, Timeouts } from '../../src/config/schema.js';
import { findGatewayErrorInfo } from '../../src/envelope/envelope.js';
import { relayStream, type StreamOutcome } from '../../src/stream/relay.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';
import { REMOTE_ID, eventsBody, sizedEvent, startSseUpstream, type SseUpstream } from '../support/sse-upstream.js';

const CALLER_ID = 'caller-7';
/** Timeouts long enough never to fire unless a test means them to. */
const CALM: Partial<Timeouts> = { streamIdleMs: 5_000, streamNoDataMs: 5_000, maxStreamMs: 10_000, keepAliveMs: 60_000 };

let upstream: SseUpstream;
t.before(async () => {
  upstream = await startSseUpstream();
});
t.teardown(() => upstream.close());

function remoteConfig(origin: string, limits: Partial<Limits>, timeouts: Partial<Timeouts>): RemoteConfig {
  const file = { remotes: { weather: { url: origin, allowPrivateNetwork: true, limits, timeouts: { ...CALM, ...timeouts } } } };
  const remote = parseConfig(JSON.stringify(file)).remotes.get('weather');
  if (!remote) throw new Error('no remote');
  return remote;
}

interface Gateway {
  url(path: string): string;
  /** Resolves with the relay's outcome for the next finished call. */
  nextOutcome(): Promise<StreamOutcome>;
}

/** A gateway-like server: undici to the upstream, relayStream to the caller. Closed at the test's teardown. */
async function startGateway(
  t: Test,
  cfg: { limits?: Partial<Limits>; timeouts?: Partial<Timeouts>; shutdown?: AbortSignal; origin?: string } = {},
): Promise<Gateway> {
  const remote = remoteConfig(cfg.origin ?? upstream.origin, cfg.limits ?? {}, cfg.timeouts ?? {});
  const agent = new Agent();
  const outcomes: StreamOutcome[] = [];
  const waiters: Array<(o: StreamOutcome) => void> = [];
  const record = (o: StreamOutcome): void => {
    const w = waiters.shift();
    if (w) w(o);
    else outcomes.push(o);
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const callerId = (JSON.parse(body.toString()) as { id: string }).id;
    const base = { callerId, remote, out: res, headers: { 'x-request-id': 'req-1', 'content-length': '999' }, ...(cfg.shutdown ? { shutdown: cfg.shutdown } : {}) };
    const controller = new AbortController();
    let up;
    try {
      up = await request(`${remote.url.origin}${req.url ?? '/'}`, {
        method: 'POST',
        dispatcher: agent,
        signal: controller.signal,
        body: JSON.stringify({ jsonrpc: '2.0', id: REMOTE_ID, method: 'message/stream', params: {} }),
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'accept-encoding': 'identity' },
      });
    } catch {
      // Not this file's subject: a gateway answers an unreachable remote with one JSON envelope (stream-json-first.test.ts).
      res.destroy();
      return;
    }
    record(await relayStream({ statusCode: up.statusCode, headers: up.headers, body: up.body }, { ...base, abortUpstream: () => controller.abort() }));
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  t.teardown(async () => {
    await closeServer(server, tracker);
    await agent.destroy();
  });
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    nextOutcome: () => {
      const o = outcomes.shift();
      return o ? Promise.resolve(o) : new Promise((r) => waiters.push(r));
    },
  };
}

/** The caller: a plain HTTP client reading the SSE stream block by block. */
interface CallerStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The next `\n\n`-terminated block, or null at the end of the stream; rejects after `ms`. */
  next(ms?: number): Promise<string | null>;
  /** Every remaining block until the end. */
  rest(): Promise<string[]>;
  destroy(): void;
  /** Stop / start reading from the socket (a slow caller). */
  pause(): void;
  resume(): void;
}

function openStream(url: string): Promise<CallerStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      const blocks: string[] = [];
      let buffered = '';
      let ended = false;
      let wake: (() => void) | undefined;
      res.setEncoding('utf8');
      res.on('data', (text: string) => {
        buffered += text;
        let cut: number;
        while ((cut = buffered.indexOf('\n\n')) !== -1) {
          blocks.push(buffered.slice(0, cut + 2));
          buffered = buffered.slice(cut + 2);
        }
        wake?.();
      });
      const finish = (): void => {
        ended = true;
        if (buffered !== '') blocks.push(buffered);
        buffered = '';
        wake?.();
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
      const next = async (ms = 3_000): Promise<string | null> => {
        const deadline = Date.now() + ms;
        while (blocks.length === 0 && !ended) {
          const left = deadline - Date.now();
          if (left <= 0) throw new Error('timed out waiting for an event');
          await new Promise<void>((r) => {
            const timer = setTimeout(r, left);
            wake = () => {
              clearTimeout(timer);
              r();
            };
          });
        }
        return blocks.shift() ?? null;
      };
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        next,
        rest: async () => {
          const all: string[] = [];
          for (let b = await next(); b !== null; b = await next()) all.push(b);
          return all;
        },
        destroy: () => req.destroy(),
        pause: () => res.pause(),
        resume: () => res.resume(),
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify({ jsonrpc: '2.0', id: CALLER_ID, method: 'message/stream', params: {} }));
  });
}

const dataOf = (block: string): Record<string, any> => {
  if (!/^data: [^\r\n]*\n\n$/.test(block)) throw new Error(`not a well-formed data event: ${JSON.stringify(block.slice(0, 200))}`);
  return JSON.parse(block.slice('data: '.length)) as Record<string, any>;
};

/** Runs one call to the end: status, headers, the data events (comments apart) and the relay's outcome. */
async function call(gw: Gateway, path: string) {
  const caller = await openStream(gw.url(path));
  const blocks = await caller.rest();
  const comments = blocks.filter((b) => b.startsWith(':'));
  const events = blocks.filter((b) => !b.startsWith(':')).map(dataOf);
  const raw = blocks.join('');
  return { status: caller.status, headers: caller.headers, events, comments, raw, outcome: await gw.nextOutcome() };
}

const reasons = (events: Array<Record<string, any>>) => events.map((e) => (e.error ? findGatewayErrorInfo(e.error.data)?.reason : 'ok'));
const allCallerIds = (t: Test, events: Array<Record<string, any>>) =>
  t.ok(events.every((e) => e.id === CALLER_ID && e.jsonrpc === '2.0'), "every event carries the caller's id");

async function eventually(check: () => boolean, ms = 1_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

t.test('a well-behaved stream: 200 text/event-stream, the gateway’s headers only, caller id on every event', async (t) => {
  const gw = await startGateway(t);
  const r = await call(gw, '/events?n=3');
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'text/event-stream');
  t.equal(r.headers['cache-control'], 'no-cache');
  t.equal(r.headers['x-accel-buffering'], 'no');
  t.equal(r.headers['x-request-id'], 'req-1');
  t.equal(r.headers['x-remote-secret'], undefined, 'no upstream header passes');
  t.equal(r.headers['content-length'], undefined, 'no length on a stream');
  t.same(r.events.map((e) => e.result.n), [1, 2, 3]);
  allCallerIds(t, r.events);
  t.notMatch(r.raw, REMOTE_ID);
  t.same(r.outcome, { outcome: 'ok', events: 3, bytesIn: Buffer.byteLength(eventsBody(3)), bytesOut: Buffer.byteLength(r.raw), callerClosed: false });
});

t.test('one byte at a time: the same events', async (t) => {
  const gw = await startGateway(t);
  const r = await call(gw, '/bytewise?n=2');
  t.same(r.events.map((e) => e.result.n), [1, 2]);
  allCallerIds(t, r.events);
  t.equal(r.outcome.outcome, 'ok');
});

t.test('maxEventBytes: an event of exactly the bound passes, one byte more ends the stream', async (t) => {
  const gw = await startGateway(t, { limits: { maxEventBytes: 4096 } });
  t.equal(Buffer.byteLength(sizedEvent(4096)), 4096 + 1, 'the helper sizes the event as the relay counts it');
  const under = await call(gw, '/sized?bytes=4096');
  t.same(reasons(under.events), ['ok', 'ok', 'ok']);
  const over = await call(gw, '/sized?bytes=4097');
  t.same(reasons(over.events), ['ok', 'EVENT_TOO_LARGE']);
  t.equal(over.events[1]?.error.code, -32006);
  t.equal(over.outcome.outcome, 'EVENT_TOO_LARGE');
});

t.test('a line that never ends: EVENT_TOO_LARGE at the bound, upstream closed', async (t) => {
  const gw = await startGateway(t, { limits: { maxEventBytes: 64 * 1024 } });
  const r = await call(gw, '/endless-line');
  t.same(reasons(r.events), ['EVENT_TOO_LARGE']);
  t.ok(r.outcome.bytesIn < 64 * 1024 + 64 * 1024, `read ${r.outcome.bytesIn} bytes, not much past the bound`);
  t.ok(await eventually(() => upstream.activeRequests() === 0), 'upstream request closed');
});

t.test('endless comments: STREAM_NO_DATA, and no remote comment reaches the caller', async (t) => {
  const gw = await startGateway(t, { timeouts: { streamNoDataMs: 200, streamIdleMs: 150 } });
  const started = Date.now();
  const r = await call(gw, '/comments?ms=20');
  const took = Date.now() - started;
  t.same(reasons(r.events), ['STREAM_NO_DATA']);
  t.equal(r.events[0]?.error.code, -32603);
  t.ok(took >= 190 && took < 1_000, `ended after ${took} ms`);
  t.notMatch(r.raw, 'remote-comment-text');
});

t.test('silence: STREAM_IDLE; the gateway’s own keep-alive comments keep the caller company', async (t) => {
  const gw = await startGateway(t, { timeouts: { streamIdleMs: 250, keepAliveMs: 60 } });
  const r = await call(gw, '/silence');
  t.same(reasons(r.events), ['STREAM_IDLE']);
  t.ok(r.comments.length >= 2, `${r.comments.length} keep-alive comments`);
  t.ok(r.comments.every((c) => c === ': keep-alive\n\n'));
});

t.test('streamIdleMs: bytes arriving just often enough keep the stream open', async (t) => {
  const gw = await startGateway(t, { timeouts: { streamIdleMs: 200, streamNoDataMs: 5_000, maxStreamMs: 400 } });
  const r = await call(gw, '/comments?ms=50');
  t.same(reasons(r.events), ['STREAM_TOO_LONG'], 'comments every 50 ms never trip a 200 ms idle bound');
});

t.test('maxStreamMs: a stream that never ends is cut at its lifetime', async (t) => {
  const gw = await startGateway(t, { timeouts: { maxStreamMs: 300 } });
  const started = Date.now();
  const r = await call(gw, '/drip?ms=30');
  const took = Date.now() - started;
  const kinds = reasons(r.events);
  t.equal(kinds.at(-1), 'STREAM_TOO_LONG');
  // How many arrive in 300 ms depends on the machine's load: at least one, and all of them good.
    t.ok(kinds.slice(0, -1).length >= 1 && kinds.slice(0, -1).every((k) => k === 'ok'), `${kinds.length - 1} good events first`);
  t.ok(took >= 290 && took < 1_000, `ended after ${took} ms`);
  t.ok(await eventually(() => upstream.activeRequests() === 0), 'upstream request closed');
});

t.test('maxStreamBytes: exactly the bound passes, one byte less ends the stream', async (t) => {
  const size = Buffer.byteLength(eventsBody(3));
  const exact = await call(await startGateway(t, { limits: { maxStreamBytes: size } }), '/events?n=3');
  t.same(reasons(exact.events), ['ok', 'ok', 'ok']);
  const over = await call(await startGateway(t, { limits: { maxStreamBytes: size - 1 } }), '/events?n=3');
  t.same(reasons(over.events), ['ok', 'ok', 'STREAM_TOO_LARGE']);
});

t.test('maxStreamEvents: exactly the bound passes, one more ends the stream', async (t) => {
  const exact = await call(await startGateway(t, { limits: { maxStreamEvents: 3 } }), '/events?n=3');
  t.same(reasons(exact.events), ['ok', 'ok', 'ok']);
  const over = await call(await startGateway(t, { limits: { maxStreamEvents: 2 } }), '/events?n=3');
  t.same(reasons(over.events), ['ok', 'ok', 'STREAM_TOO_MANY_EVENTS']);
});

t.test('broken data mid-stream: the good events with the caller’s id, then one INVALID_EVENT', async (t) => {
  const r = await call(await startGateway(t), '/broken-mid');
  t.same(reasons(r.events), ['ok', 'ok', 'INVALID_EVENT']);
  t.equal(r.events[2]?.error.code, -32006);
  allCallerIds(t, r.events);
  t.notMatch(r.raw, 'BROKEN-MARKER');
});

t.test('event: error with extra members: code kept, text sanitized, extras dropped, stream ended', async (t) => {
  const r = await call(await startGateway(t), '/error-event');
  t.same(reasons(r.events), ['ok', 'REMOTE_ERROR']);
  const error = r.events[1]?.error;
  t.equal(error.code, -32001);
  t.equal(error.message, 'Task gone');
  t.same(Object.keys(error).sort(), ['code', 'data', 'message']);
  t.notMatch(r.raw, 'EXTRA-MARKER');
  allCallerIds(t, r.events);
});

t.test('the remote closing mid-event: STREAM_TRUNCATED', async (t) => {
  const r = await call(await startGateway(t), '/mid-event-close');
  t.same(reasons(r.events), ['ok', 'STREAM_TRUNCATED']);
});

t.test('the upstream connection dying: UPSTREAM_RESET between events, STREAM_TRUNCATED inside one', async (t) => {
  const gw = await startGateway(t);
  t.same(reasons((await call(gw, '/reset')).events), ['ok', 'UPSTREAM_RESET']);
  t.same(reasons((await call(gw, '/reset?mid=1')).events), ['ok', 'STREAM_TRUNCATED']);
});

t.test('a body that already failed before the relay got it: one final event, no hang', async (t) => {
  const remote = remoteConfig(upstream.origin, {}, {});
  const server = createServer((_req, res) => {
    const body = new PassThrough();
    body.on('error', () => {});
    body.destroy(new Error('gone'));
    setImmediate(() => {
      void relayStream(
        { statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body },
        { callerId: CALLER_ID, remote, out: res, abortUpstream: () => {} },
      );
    });
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  t.teardown(() => closeServer(server, tracker));
  const caller = await openStream(`http://127.0.0.1:${port}/`);
  t.same(reasons((await caller.rest()).map(dataOf)), ['UPSTREAM_RESET']);
});

t.test('content-encoding other than identity: one UNSUPPORTED_ENCODING event', async (t) => {
  const r = await call(await startGateway(t), '/gzip');
  t.same(reasons(r.events), ['UNSUPPORTED_ENCODING']);
});

t.test('no buffering: the first event reaches the caller before the upstream sends the second', async (t) => {
  const gw = await startGateway(t);
  const caller = await openStream(gw.url('/gated'));
  const first = await caller.next(2_000);
  t.equal(dataOf(first ?? '').result.n, 1, 'event 1 arrived while the upstream was still waiting');
  upstream.release();
  t.equal(dataOf((await caller.next()) ?? '').result.n, 2);
  t.equal(await caller.next(), null);
  t.equal((await gw.nextOutcome()).outcome, 'ok');
});

t.test('a caller that stops reading stops the relay reading the upstream, without tripping streamIdleMs', async (t) => {
  const gw = await startGateway(t, { timeouts: { streamIdleMs: 150, streamNoDataMs: 150 } });
  const caller = await openStream(gw.url('/flood'));
  caller.pause();
  t.ok(await eventually(() => upstream.floodBytes() > 0), 'upstream started');
  // Stalled = unchanged over 150 ms (a single drain wait is far shorter).
  let stalledFor = 0;
  for (let before = -1, i = 0; i < 40 && stalledFor < 3; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const now = upstream.floodBytes();
    stalledFor = now === before ? stalledFor + 1 : 0;
    before = now;
  }
  t.equal(stalledFor, 3, 'the upstream stalls once the buffers between are full');
  const stalled = upstream.floodBytes();
  await new Promise((r) => setTimeout(r, 400));
  // Kernel socket buffers may still open up a little (TCP autotuning); without backpressure this grows by tens of MB.
  const grew = upstream.floodBytes() - stalled;
  t.ok(grew < 4 * 1024 * 1024, `${grew} more bytes read from the upstream in 400 ms paused`);
  t.ok(stalled < 32 * 1024 * 1024, `${stalled} bytes in flight, bounded by socket buffers`);
  caller.resume();
  const block = await caller.next();
  t.equal(dataOf(block ?? '').id, CALLER_ID, 'events flow again after 400 ms paused: no STREAM_IDLE');
  for (let i = 0; i < 20; i++) t.notOk(dataOf((await caller.next()) ?? '').error, 'still good events');
  caller.destroy();
  const outcome = await gw.nextOutcome();
  t.equal(outcome.callerClosed, true, JSON.stringify(outcome));
});

t.test('the caller disconnecting aborts the upstream at once', async (t) => {
  const gw = await startGateway(t);
  t.ok(await eventually(() => upstream.openConnections() === 0), 'no upstream connections before');
  const caller = await openStream(gw.url('/comments?ms=20'));
  t.ok(await eventually(() => upstream.activeRequests() === 1), 'upstream stream is open');
  caller.destroy();
  const outcome = await gw.nextOutcome();
  t.equal(outcome.callerClosed, true);
  t.ok(await eventually(() => upstream.openConnections() === 0, 500), 'upstream connection closed soon after');
});

t.test('gateway shutdown ends the stream with one GATEWAY_SHUTDOWN event', async (t) => {
  const shutdown = new AbortController();
  const gw = await startGateway(t, { shutdown: shutdown.signal });
  const caller = await openStream(gw.url('/drip?ms=30'));
  t.equal(dataOf((await caller.next()) ?? '').result.n, 1);
  shutdown.abort();
  const rest = (await caller.rest()).map(dataOf);
  t.equal(reasons(rest).at(-1), 'GATEWAY_SHUTDOWN');
  t.equal((await gw.nextOutcome()).outcome, 'GATEWAY_SHUTDOWN');
});
