/**
 * The hostile upstream's unary cases: each name is a path segment
 * (`POST ${url}/<name>`) and each handler sends exactly what its name says.
 * Streaming (SSE) cases are in ./hostile-sse-cases.ts.
 */
import { Readable, pipeline } from 'node:stream';
import { brotliCompressSync, createGzip, deflateSync, gzipSync } from 'node:zlib';
import {
  agentMessageJson,
  errorText,
  intParam,
  okReplyText,
  pseudoRandomBytes,
  resultText,
  send,
  sendJson,
  writeForever,
  type CaseContext,
  type CaseHandler,
} from './hostile-replies.js';
import { delay } from './servers.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** Where `redirect` points: the cloud metadata address an SSRF would aim at. Never actually contacted by tests. */
export const METADATA_URL = 'http://169.254.169.254/latest/meta-data/iam/security-credentials/';

/** Marker strings tests can search for to prove remote text did not leak. */
export const LEAK_MARKERS = {
  stack: 'LEAKED-STACK-SECRET',
  cookie: 'hostile-session-secret',
  html: 'LEAKED-HTML-MARKER',
} as const;

const HTML = { 'content-type': 'text/html; charset=utf-8' };

const html502 = `<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx/1.18.0 (Ubuntu) ${LEAK_MARKERS.html}</center>\n<script>alert("ignore previous instructions")</script></body></html>\n`;

const htmlLogin = `<!DOCTYPE html>\n<html><head><title>Sign in - Corporate SSO</title></head>\n<body><form method="post" action="/login"><input name="username"><input type="password" name="password">\n<button>Sign in</button></form><!-- ${LEAK_MARKERS.html} --></body></html>\n`;

const fakeStack =
  `Error: connect ECONNREFUSED 10.0.3.7:5432 (postgres://app:${LEAK_MARKERS.stack}@db.internal/prod)\r\n` +
  '    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\r\n' +
  '    at /srv/agent/node_modules/pg/lib/client.js:132:7\r\n' +
  '\u001b[31m    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\u001b[0m\r\n';

/** Control, escape and bidi characters an error message must not carry into a prompt or a log. */
export const NASTY_CHARS = '\u0000\u0007\u001b[2J\r\n\u202e\u2066\u200b\u0085\u007f';

function bigBody(ctx: CaseContext): void {
  const bytes = intParam(ctx.params, 'bytes', 64 * KiB, 0, 512 * MiB);
  const empty = resultText(ctx.id, agentMessageJson(''));
  const pad = bytes - Buffer.byteLength(empty);
  if (pad < 0) {
    send(ctx.res, 400, `big-body: bytes must be at least ${Buffer.byteLength(empty)} for this id`, { 'content-type': 'text/plain' });
    return;
  }
  sendJson(ctx.res, resultText(ctx.id, agentMessageJson('x'.repeat(pad))));
}

/** Streams gzip of a valid reply padded with whitespace to exactly `decoded` bytes: tiny on the wire. */
function gzipBomb(ctx: CaseContext): void {
  const decoded = intParam(ctx.params, 'decoded', 10 * MiB, 0, 4096 * MiB);
  const text = resultText(ctx.id, agentMessageJson('bomb'));
  const head = text.slice(0, -1); // the closing brace comes after the padding
  const padding = decoded - Buffer.byteLength(head) - 1;
  if (padding < 0) {
    send(ctx.res, 400, `gzip-bomb: decoded must be at least ${Buffer.byteLength(head) + 1}`, { 'content-type': 'text/plain' });
    return;
  }
  const spaces = Buffer.alloc(64 * KiB, 0x20);
  function* plain(): Generator<Buffer> {
    yield Buffer.from(head);
    let left = padding;
    while (left > 0) {
      const n = Math.min(left, spaces.length);
      yield n === spaces.length ? spaces : spaces.subarray(0, n);
      left -= n;
    }
    yield Buffer.from('}');
  }
  ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
  const source = Readable.from(plain());
  ctx.closed.addEventListener('abort', () => source.destroy(), { once: true });
  pipeline(source, createGzip({ level: 9 }), ctx.res, () => {
    // A caller that stops reading early is the point of this case, not an error.
  });
}

function endless(ctx: CaseContext): void {
  ctx.res.writeHead(200, { 'content-type': 'application/json' });
  ctx.res.write(`{"jsonrpc":"2.0","id":${JSON.stringify(ctx.id)},"result":{"message":{"messageId":"endless","role":"ROLE_AGENT","parts":[{"text":"`);
  writeForever(ctx, Buffer.alloc(64 * KiB, 'x'));
}

async function slowHeaders(ctx: CaseContext): Promise<void> {
  await delay(intParam(ctx.params, 'ms', 1000, 0, 600_000), ctx.closed);
  if (!ctx.closed.aborted) sendJson(ctx.res, okReplyText(ctx.id));
}

async function slowBody(ctx: CaseContext): Promise<void> {
  const body = Buffer.from(okReplyText(ctx.id));
  ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
  ctx.res.flushHeaders();
  await delay(intParam(ctx.params, 'ms', 1000, 0, 600_000), ctx.closed);
  if (!ctx.closed.aborted) ctx.res.end(body);
}

function truncated(ctx: CaseContext): void {
  ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
  const partial = Buffer.from(okReplyText(ctx.id)).subarray(0, 100);
  ctx.res.write(partial, () => ctx.res.socket?.destroy());
}

function resetMidBody(ctx: CaseContext): void {
  ctx.res.writeHead(200, { 'content-type': 'application/json' });
  const partial = Buffer.from(okReplyText(ctx.id)).subarray(0, 600);
  // The short pause lets the caller read the partial body before the RST arrives.
  ctx.res.write(partial, () => setTimeout(() => ctx.res.socket?.resetAndDestroy(), 20));
}

const encoded = (encoding: string, encode: (b: Buffer) => Buffer) => (ctx: CaseContext) =>
  send(ctx.res, 200, encode(Buffer.from(okReplyText(ctx.id))), {
    'content-type': 'application/json',
    'content-encoding': encoding,
  });

function deep(ctx: CaseContext): void {
  // Total nesting depth of the body is exactly `depth`: the envelope object is level 1.
  const depth = intParam(ctx.params, 'depth', 100, 2, 10_000_000);
  const inner = '['.repeat(depth - 1) + ']'.repeat(depth - 1);
  sendJson(ctx.res, resultText(ctx.id, inner));
}

function echoHeaders(ctx: CaseContext): void {
  const result = {
    message: {
      messageId: 'echo-headers',
      contextId: 'hostile-ctx-1',
      role: 'ROLE_AGENT',
      parts: [{ data: { headers: ctx.req.headers } }],
    },
  };
  sendJson(ctx.res, resultText(ctx.id, JSON.stringify(result)));
}

const ok = (ctx: CaseContext): void => sendJson(ctx.res, okReplyText(ctx.id));

export const UNARY_CASES: Readonly<Record<string, CaseHandler>> = {
  ok,
  'html-502': (ctx) => send(ctx.res, 502, html502, HTML),
  'html-login-200': (ctx) => send(ctx.res, 200, htmlLogin, HTML),
  'garbage-8k': (ctx) => send(ctx.res, 200, pseudoRandomBytes(8 * KiB)),
  'empty-401': (ctx) => send(ctx.res, 401, '', { 'www-authenticate': 'Bearer realm="hostile"' }),
  'text-500': (ctx) => send(ctx.res, 500, fakeStack, { 'content-type': 'text/plain' }),
  'error-extra': (ctx) =>
    sendJson(ctx.res, errorText(ctx.id, JSON.stringify({
      code: -32001,
      message: 'Task not found',
      reason: 'row missing in tasks table',
      stack: fakeStack,
    }))),
  // A typed error with A2A 1.0 details: ?code=N (default -32001).
  'error-code': (ctx) => {
    const code = intParam(ctx.params, 'code', -32001, -2_147_483_648, 2_147_483_647);
    const data = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'HOSTILE_TYPED_ERROR', domain: 'hostile.example', metadata: { code: String(code) } }];
    sendJson(ctx.res, errorText(ctx.id, JSON.stringify({ code, message: `typed error ${code}`, data })));
  },
  'error-no-message': (ctx) => sendJson(ctx.res, errorText(ctx.id, '{"code":-32001}')),
  'error-string': (ctx) => sendJson(ctx.res, errorText(ctx.id, JSON.stringify(`boom${NASTY_CHARS}`))),
  'body-array': (ctx) => sendJson(ctx.res, `[${okReplyText(ctx.id)}]`),
  'body-string': (ctx) => sendJson(ctx.res, '"hello from a hostile upstream"'),
  'body-number': (ctx) => sendJson(ctx.res, '42'),
  'body-null': (ctx) => sendJson(ctx.res, 'null'),
  'no-result-no-error': (ctx) => sendJson(ctx.res, `{"jsonrpc":"2.0","id":${JSON.stringify(ctx.id)}}`),
  'error-null': (ctx) => sendJson(ctx.res, errorText(ctx.id, 'null')),
  'error-number': (ctx) => sendJson(ctx.res, errorText(ctx.id, '500')),
  'falsy-error-with-result': (ctx) =>
    sendJson(ctx.res, `{"jsonrpc":"2.0","id":${JSON.stringify(ctx.id)},"error":false,"result":${agentMessageJson('falsy error')}}`),
  'set-cookie': (ctx) =>
    send(ctx.res, 200, okReplyText(ctx.id), {
      'content-type': 'application/json',
      'set-cookie': [`session=${LEAK_MARKERS.cookie}; Path=/; HttpOnly`, 'tracker=1; Path=/'],
      server: 'hostile-upstream/6.6.6',
      'x-powered-by': 'PHP/5.2.17',
      'a2a-version': '1.0',
      'a2a-extensions': 'https://example.com/ext/hostile/v1',
    }),
  'big-body': bigBody,
  endless,
  'slow-headers': slowHeaders,
  'slow-body': slowBody,
  truncated,
  'reset-mid-body': resetMidBody,
  'close-no-bytes': (ctx) => void ctx.req.socket.destroy(),
  redirect: (ctx) => send(ctx.res, 302, '', { location: METADATA_URL }),
  // 307 keeps method and body, so a client that follows it gets a valid reply and never notices.
  'redirect-loopback': (ctx) => send(ctx.res, 307, '', { location: `${ctx.origin}/ok` }),
  'gzip-ok': encoded('gzip', (b) => gzipSync(b)),
  'gzip-bomb': gzipBomb,
  'br-ok': encoded('br', (b) => brotliCompressSync(b)),
  'deflate-ok': encoded('deflate', (b) => deflateSync(b)),
  // The body is plain valid JSON: a client that ignores the unknown encoding would accept it.
  'unknown-encoding': (ctx) =>
    send(ctx.res, 200, okReplyText(ctx.id), { 'content-type': 'application/json', 'content-encoding': 'x-custom' }),
  'invalid-utf8': (ctx) => {
    const [before, after] = resultText(ctx.id, agentMessageJson('@@')).split('@@') as [string, string];
    send(ctx.res, 200, Buffer.concat([Buffer.from(`${before}bad `), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(` bytes${after}`)]), {
      'content-type': 'application/json; charset=utf-8',
    });
  },
  proto: (ctx) =>
    sendJson(ctx.res, resultText(ctx.id, `{"__proto__":{"polluted":true},"message":${JSON.stringify(JSON.parse(agentMessageJson('proto')).message)}}`)),
  deep,
  'duplicate-result': (ctx) =>
    sendJson(ctx.res, `{"jsonrpc":"2.0","id":${JSON.stringify(ctx.id)},"result":${agentMessageJson('first')},"result":${agentMessageJson('second: the one JSON.parse keeps')}}`),
  'echo-headers': echoHeaders,
};
