/**
 * server.requestTimeoutMs holds for the whole request, within a small margin:
 * a raw-socket caller that trickles its headers, its Content-Length body or
 * its chunked body slower than the bound is answered HTTP 408 with a
 * REQUEST_TIMEOUT envelope (id null, Connection: close) and disconnected
 * shortly after the bound; the same sender finishing just under the bound is
 * served normally. Node checks for expired requests every tenth of the bound
 * here (150 ms for 1500 ms), so "shortly" is at most that plus scheduling.
 */
import { connect } from 'node:net';
import t, { type Test } from 'tap';
import { startHeldUpstream, type HeldUpstream } from '../support/held-upstream.js';
import { rpcRequest, startGateway, type RunningGateway } from '../support/gateway.js';

const BOUND_MS = 1500;
const GAP_MS = 50;
// Generous for a loaded 2-core machine; the check interval itself is 150 ms.
const LATE_MS = 1000;

let upstream: HeldUpstream;
let gw: RunningGateway;
t.before(async () => {
  upstream = await startHeldUpstream();
  gw = await startGateway(`
server: { requestTimeoutMs: ${BOUND_MS}, maxEventLoopDelayMs: 0 }
remotes:
  a: { url: '${upstream.url}/', allowPrivateNetwork: true, retries: { attempts: 1 } }
`);
});
t.teardown(async () => {
  await gw.close();
  await upstream.close();
});

interface Trickled {
  readonly text: string;
  readonly elapsedMs: number;
}

/** Writes `head` then `pieces` one every GAP_MS (forever when `endless`), until the gateway answers and closes or `stopAfterMs` passes. */
function trickle(pieces: readonly string[], opts: { endless?: boolean; stopAfterMs?: number } = {}): Promise<Trickled> {
  const port = Number(new URL(gw.url).port);
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const started = performance.now();
    let text = '';
    let i = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(stop);
      socket.destroy();
      resolve({ text, elapsedMs: performance.now() - started });
    };
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      // A complete keep-alive answer (the gateway does not close after a normal reply).
      const end = text.indexOf('\r\n\r\n');
      const length = Number(/content-length: *(\d+)/i.exec(text)?.[1] ?? -1);
      if (end !== -1 && length >= 0 && text.length >= end + 4 + length && !/connection: close/i.test(text)) finish();
    });
    socket.on('close', finish);
    const timer = setInterval(() => {
      if (socket.destroyed) return;
      const piece = i < pieces.length ? pieces[i] : opts.endless ? 'x' : undefined;
      i++;
      if (piece !== undefined) socket.write(piece);
    }, GAP_MS);
    const stop = setTimeout(finish, opts.stopAfterMs ?? BOUND_MS + 5000);
  });
}

const body = JSON.stringify(rpcRequest('GetTask', 'slow-1', { id: 'task-1' }));
const head = (framing: string) => `POST /remotes/a/ok HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n${framing}\r\n`;
/** `text` cut into `n` roughly equal pieces. */
const pieces = (text: string, n: number): string[] => {
  const size = Math.ceil(text.length / n);
  return Array.from({ length: Math.ceil(text.length / size) }, (_, k) => text.slice(k * size, (k + 1) * size));
};
const chunked = (text: string, n: number): string[] => [...pieces(text, n).map((p) => `${p.length.toString(16)}\r\n${p}\r\n`), '0\r\n\r\n'];

function assertTimedOut(t: Test, got: Trickled, what: string): void {
  const [status = '', rest = ''] = got.text.split('\r\n\r\n');
  t.match(status, /^HTTP\/1\.1 408 /, `${what}: HTTP 408`);
  t.match(status, /\r\nconnection: close/i, 'Connection: close');
  t.match(status, /\r\ncontent-type: application\/json/i);
  const envelope = JSON.parse(rest) as { jsonrpc: string; id: unknown; error: { code: number; data: { reason: string; domain: string }[] } };
  t.equal(envelope.jsonrpc, '2.0');
  t.equal(envelope.id, null, 'id null: the request never arrived whole');
  t.equal(envelope.error.code, -32600);
  t.equal(envelope.error.data[0]?.reason, 'REQUEST_TIMEOUT');
  t.equal(envelope.error.data[0]?.domain, 'a2a-egress');
  t.ok(got.elapsedMs >= BOUND_MS - 50, `not before the bound (${Math.round(got.elapsedMs)} ms)`);
  t.ok(got.elapsedMs < BOUND_MS + LATE_MS, `soon after the bound of ${BOUND_MS} ms (${Math.round(got.elapsedMs)} ms)`);
}

function assertServed(t: Test, got: Trickled, what: string): void {
  t.match(got.text, /^HTTP\/1\.1 200 /, `${what}: served`);
  t.match(got.text, /"id":"slow-1","result"/, 'the call went through');
  t.ok(got.elapsedMs < BOUND_MS, `finished within the bound (${Math.round(got.elapsedMs)} ms)`);
}

t.test('headers trickled: just under the bound is served, just over is 408 REQUEST_TIMEOUT', async (t) => {
  const framing = `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  // ~8 pieces × 50 ms ≈ 400 ms of headers, then the body at once.
  const under = await trickle([...pieces(head(framing), 8), body]);
  assertServed(t, under, 'headers in ~400 ms');
  // The same rate, but a header that never ends.
  const over = await trickle([...pieces(head(framing).slice(0, -2), 12), 'X-Slow: '], { endless: true });
  assertTimedOut(t, over, 'headers still arriving at the bound');
});

t.test('Content-Length body trickled: just under is served, just over is 408', async (t) => {
  const framing = `Content-Length: ${Buffer.byteLength(body)}\r\n`;
  const under = await trickle([head(framing), ...pieces(body, 8)]);
  assertServed(t, under, 'body in ~400 ms');
  // Declares 10 times the bytes it then sends at the same rate.
  const long = body.padEnd(body.length * 10, ' ');
  const over = await trickle([head(`Content-Length: ${Buffer.byteLength(long)}\r\n`), ...pieces(long, 120)]);
  assertTimedOut(t, over, 'body still arriving at the bound');
});

t.test('chunked body trickled: just under is served, just over is 408', async (t) => {
  const framing = 'Transfer-Encoding: chunked\r\n';
  const under = await trickle([head(framing), ...chunked(body, 7)]);
  assertServed(t, under, 'chunks in ~400 ms');
  const over = await trickle([head(framing), ...chunked(body.padEnd(body.length * 10, ' '), 120)]);
  assertTimedOut(t, over, 'chunks still arriving at the bound');
});

t.test('a connection that sends nothing is closed at the bound with the same 408', async (t) => {
  const silent = await trickle([]);
  assertTimedOut(t, silent, 'silent connection');
});

t.test('each timeout is one call line and one calls_total sample; none is an internal error', async (t) => {
  const lines = gw.logs.filter((l) => (l.call as { outcome?: string } | undefined)?.outcome === 'REQUEST_TIMEOUT');
  // headers + silent (no route yet: remote unknown), Content-Length + chunked (remote a).
  t.equal(lines.length, 4, 'four timed-out requests, four lines');
  t.same(lines.map((l) => (l.call as { remote: string }).remote).sort(), ['a', 'a', 'unknown', 'unknown']);
  const metrics = await gw.app.inject({ method: 'GET', url: '/metrics' });
  t.match(metrics.body, /a2a_egress_calls_total\{remote="a",method="other",outcome="REQUEST_TIMEOUT"\} 2/);
  t.match(metrics.body, /a2a_egress_calls_total\{remote="unknown",method="other",outcome="REQUEST_TIMEOUT"\} 2/);
  t.notMatch(metrics.body, /a2a_egress_internal_errors_total\{/, 'no internal error counted');
  t.notOk(gw.logs.some((l) => l.level === 50), 'nothing logged at error level');
});
