/**
 * Hostile upstreams at the socket level, part 1: HTTP/1.1 framing and the
 * connection itself (bad status lines, Content-Length and Transfer-Encoding
 * games, truncation, smuggled extra bytes, resets, 1xx lines, redirects).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { MARK, MARKED_BODY, SLOW_TOTAL_MS, head, runCase, startRawSuite, waitFor, type CaseSpec } from '../support/raw-socket-harness.js';
import { httpResponse, jsonRpcResult } from '../support/raw-upstream.js';
import { rpc, rpcRequest } from '../support/gateway.js';

// A real collection lets the storm test measure live heap, not garbage waiting for the collector.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const body = MARKED_BODY;
const len = Buffer.byteLength(body);

const cases: CaseSpec[] = [
  // --- not HTTP at all
  { name: 'garbage-instead-of-http', script: [{ write: `SSH-2.0-OpenSSH_9.6 ${MARK}\r\n\r\n` }, { wait: 20 }, 'end'], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'json-without-status-line', script: [{ write: body }, 'end'], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'bad-status-code', script: [{ write: `HTTP/1.1 2OO OK\r\ncontent-length: ${len}\r\n\r\n${body}` }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'bad-http-version', script: [{ write: `HTTP/9.9 200 OK\r\ncontent-length: ${len}\r\n\r\n${body}` }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'status-line-lf-only', script: [{ write: `HTTP/1.1 200 OK\ncontent-length: ${len}\n\n${body}` }], expect: 'UPSTREAM_PROTOCOL_ERROR' },

  // --- Content-Length games
  {
    name: 'duplicate-equal-content-length',
    script: [{ write: head('200 OK', `content-length: ${len}`, `content-length: ${len}`) + body }],
    expect: 'UPSTREAM_PROTOCOL_ERROR',
  },
  {
    name: 'conflicting-content-length',
    script: [{ write: head('200 OK', `content-length: ${len}`, 'content-length: 5') + body }],
    expect: 'UPSTREAM_PROTOCOL_ERROR',
  },
  { name: 'content-length-list', script: [{ write: head('200 OK', `content-length: ${len}, ${len}`) + body }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'content-length-abc', script: [{ write: head('200 OK', 'content-length: abc') + body }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'content-length-negative', script: [{ write: head('200 OK', 'content-length: -1') + body }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'content-length-overflow', script: [{ write: head('200 OK', 'content-length: 99999999999999999999999') + body }], expect: 'UPSTREAM_PROTOCOL_ERROR' },

  // --- Transfer-Encoding games
  {
    name: 'content-length-and-chunked',
    script: [{ write: head('200 OK', `content-length: ${len}`, 'transfer-encoding: chunked') + chunked(body) }],
    expect: 'UPSTREAM_PROTOCOL_ERROR',
  },
  { name: 'unknown-transfer-coding', script: [{ write: head('200 OK', 'transfer-encoding: gzip') + body }, 'end'], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'made-up-transfer-coding', script: [{ write: head('200 OK', 'transfer-encoding: rot13') + body }, 'end'], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'doubled-chunked', script: [{ write: head('200 OK', 'transfer-encoding: chunked, chunked') + chunked(body) }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'chunked-not-last', script: [{ write: head('200 OK', 'transfer-encoding: chunked, identity') + chunked(body) }, 'end'], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'chunk-size-not-hex', script: [{ write: `${head('200 OK', 'transfer-encoding: chunked')}zz\r\n${body}\r\n0\r\n\r\n` }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'chunk-size-overflow', script: [{ write: `${head('200 OK', 'transfer-encoding: chunked')}fffffffffffffffff1\r\n${body}` }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  { name: 'chunk-size-negative', script: [{ write: `${head('200 OK', 'transfer-encoding: chunked')}-5\r\n${body}\r\n0\r\n\r\n` }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  {
    name: 'chunk-longer-than-size',
    script: [{ write: `${head('200 OK', 'transfer-encoding: chunked')}4\r\n${body}\r\n0\r\n\r\n` }],
    expect: 'UPSTREAM_PROTOCOL_ERROR',
  },

  // --- truncation and resets
  { name: 'body-shorter-then-close', script: [{ write: head('200 OK', `content-length: ${len + 100}`) + body }, { wait: 20 }, 'end'], expect: 'TRUNCATED_RESPONSE', httpStatus: 200 },
  {
    name: 'connection-close-short-body',
    script: [{ write: head('200 OK', 'connection: close', `content-length: ${len + 100}`) + body }, { wait: 20 }, 'end'],
    expect: 'TRUNCATED_RESPONSE',
    httpStatus: 200,
  },
  { name: 'head-then-close-no-body', script: [{ write: head('200 OK', `content-length: ${len}`) }, { wait: 20 }, 'end'], expect: 'TRUNCATED_RESPONSE', httpStatus: 200 },
  { name: 'connection-close-head-then-close', script: [{ write: head('200 OK', 'connection: close', `content-length: ${len}`) }, { wait: 20 }, 'end'], expect: 'TRUNCATED_RESPONSE', httpStatus: 200 },
  { name: 'chunked-never-terminated', script: [{ write: head('200 OK', 'transfer-encoding: chunked') + chunked(body).replace('0\r\n\r\n', '') }, { wait: 20 }, 'end'], expect: 'TRUNCATED_RESPONSE', httpStatus: 200 },
  { name: 'reset-mid-body', script: [{ write: head('200 OK', `content-length: ${len}`) + body.slice(0, 20) }, { wait: 20 }, 'reset'], expect: 'TRUNCATED_RESPONSE', httpStatus: 200 },
  { name: 'reset-mid-headers', script: [{ write: `HTTP/1.1 200 OK\r\nx-raw: ${MARK}` }, { wait: 20 }, 'reset'], expect: 'UPSTREAM_RESET' },
  { name: 'close-before-any-byte', script: ['end'], expect: 'UPSTREAM_RESET' },
  { name: 'destroy-before-any-byte', script: ['destroy'], expect: 'UPSTREAM_RESET' },
  { name: 'reset-before-any-byte', script: ['reset'], expect: 'UPSTREAM_RESET' },

  // --- informational responses and redirects
  { name: 'one-102-then-response', script: [{ write: head('102 Processing') + jsonRpcResult('{"ok":1}').toString('latin1') }], expect: 'ok', connection: 'may-reuse' },
  {
    name: 'unsolicited-100-continue',
    script: [{ write: head('100 Continue') + jsonRpcResult('{"ok":1}').toString('latin1') }],
    // undici never sends Expect, so it treats an unasked-for 100 as a broken peer and drops the socket.
    expect: 'UPSTREAM_PROTOCOL_ERROR',
  },
  { name: 'unsolicited-101-upgrade', script: [{ write: head('101 Switching Protocols', 'connection: upgrade', 'upgrade: websocket') + MARK }], expect: 'UPSTREAM_PROTOCOL_ERROR' },
  {
    name: 'redirect-302-to-metadata',
    script: [{ write: httpResponse(body, { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' }, '302 Found') }],
    expect: 'UPSTREAM_HTTP_ERROR',
    httpStatus: 302,
    forbidden: ['169.254', 'meta-data'],
    connection: 'may-reuse',
  },
];

/** Frames `text` as one chunk plus the last-chunk. */
function chunked(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n0\r\n\r\n`;
}

t.test('framing and connection cases', async (t) => {
  const suite = await startRawSuite(t);
  for (const spec of cases) await t.test(spec.name, async (t) => void (await runCase(t, suite, spec)));
});

t.test('a 307 to a loopback metadata-style path is not followed', async (t) => {
  const suite = await startRawSuite(t);
  const canary = '/latest/meta-data/iam/security-credentials/';
  suite.raw.route(canary, [{ write: jsonRpcResult(`"${MARK}-credentials"`) }]);
  await runCase(t, suite, {
    name: 'redirect-307-loopback',
    script: [{ write: httpResponse(body, { location: `${suite.raw.url}${canary}` }, '307 Temporary Redirect') }],
    expect: 'UPSTREAM_HTTP_ERROR',
    httpStatus: 307,
    forbidden: ['meta-data', 'credentials'],
    connection: 'may-reuse',
  });
  t.equal(suite.raw.requests.filter((r) => r.path === canary).length, 0, 'the redirect target was never contacted');
});

t.test('extra bytes after the body are never read as the next response', async (t) => {
  const suite = await startRawSuite(t);
  const smuggled = jsonRpcResult(`"SMUGGLED-${MARK}"`).toString('latin1');
  // Same write: the extra bytes arrive with the first response.
  const same = await runCase(t, suite, {
    name: 'extra-bytes-same-packet',
    script: [{ write: jsonRpcResult('{"first":true}').toString('latin1') + smuggled }],
    expect: 'ok',
    forbidden: ['SMUGGLED'],
  });
  t.same(same.reply.json.result, { first: true });
  // Later: the extra bytes arrive while the connection sits idle in the pool.
  const { raw, gw } = suite;
  raw.route('/idle-extra', [{ write: jsonRpcResult('{"first":2}') }, { wait: 30 }, { write: smuggled }]);
  const first = await rpc(`${gw.url}/remotes/raw/idle-extra`, rpcRequest('GetTask', 'idle-1', { id: 't' }));
  t.same(first.json.result, { first: 2 });
  const idleConn = raw.connectionOf('/idle-extra')!;
  await waitFor(() => idleConn.closed, 1_000);
  t.ok(idleConn.closed, 'the gateway dropped the connection that spoke out of turn');
  raw.route('/after-idle', [{ write: jsonRpcResult('{"second":true}') }]);
  const second = await rpc(`${gw.url}/remotes/raw/after-idle`, rpcRequest('GetTask', 'idle-2', { id: 't' }));
  t.same(second.json, { jsonrpc: '2.0', id: 'idle-2', result: { second: true } });
  t.not(raw.connectionOf('/after-idle')?.id, idleConn.id);
});

t.test('a 1xx storm ends in a bounded time and bounded memory', async (t) => {
  const suite = await startRawSuite(t);
  const line = head('102 Processing', `x-raw: ${MARK}`);
  // 10,000 interim responses, then the real one: undici skips each without keeping it.
  await runCase(t, suite, {
    name: '1xx-storm-then-response',
    script: [{ write: line.repeat(10_000) }, { write: jsonRpcResult('{"afterStorm":true}') }],
    expect: 'ok',
    connection: 'may-reuse',
  });
  // Endless interim responses refresh undici's headers timer; the gateway's total deadline still ends the call.
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  // Measured live (after a full collection) while the storm is still running: anything kept per line would show.
  const heapDuring = new Promise<number>((resolve) => setTimeout(() => (gc(), resolve(process.memoryUsage().heapUsed)), SLOW_TOTAL_MS * 0.8));
  const endless = await runCase(t, suite, { name: '1xx-storm-endless', remote: 'slowbody', script: [{ writeForever: line.repeat(100) }], expect: 'UPSTREAM_TIMEOUT' });
  t.ok(endless.elapsedMs < 2_500, `ended by the total deadline (${Math.round(endless.elapsedMs)} ms)`);
  const stormConn = suite.raw.connections.find((c) => c.requests.some((r) => r.path.startsWith('/1xx-storm-endless')))!;
  const pushedMiB = stormConn.bytesWritten / 2 ** 20;
  const grownMiB = ((await heapDuring) - heapBefore) / 2 ** 20;
  t.ok(pushedMiB > 2, `the storm pushed ${pushedMiB.toFixed(0)} MiB of 102 lines`);
  // Each kept interim response would cost more heap than its ~40 wire bytes (buffers, arrays).
  t.ok(grownMiB < Math.min(8, pushedMiB / 2), `live heap grew ${grownMiB.toFixed(1)} MiB during the storm`);
});
