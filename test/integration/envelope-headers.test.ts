/**
 * sendEnvelope's two ways of writing one envelope (src/proxy/reply.ts): Fastify's reply chain, and the call front's
 * writeHead from a prebuilt header array (envelopeHeaders). For random extra headers (mixed case, a name repeated in
 * another case, names the envelope sets itself), with and without the drain's Connection: close, and random status
 * codes, both put the same bytes on the wire (the Date value aside).
 */
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import Fastify from 'fastify';
import fc from 'fast-check';
import t from 'tap';
import { failureEnvelope } from '../../src/envelope/normalize.js';
import { DirectReply, DirectRequest } from '../../src/jsonrpc/call-io.js';
import { CallLog, type GatewayContext } from '../../src/proxy/context.js';
import { sendEnvelope } from '../../src/proxy/reply.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { GatewayMetrics } from '../../src/telemetry/metrics.js';
import { fuzzParams } from '../support/fuzz.js';
import { listenOnLoopback } from '../support/servers.js';

interface Case {
  readonly extra: Record<string, string>;
  readonly closing: boolean;
  readonly status: number;
  readonly id: string;
}

const logger = createLogger(process.env.DBG ? 'debug' : 'silent');
const drained = new AbortController();
drained.abort();
const ctxFor = (closing: boolean) =>
  ({ metrics: new GatewayMetrics(false), drainEnd: closing ? drained.signal : new AbortController().signal }) as unknown as GatewayContext;
const ctx = { open: ctxFor(false), closing: ctxFor(true) };
const log = (): CallLog => new CallLog('r', 'ok', 0);
const envelope = failureEnvelope('id-1', 'UPSTREAM_TIMEOUT', { remote: 'r', caller: '0.3' });

// The case travels in the request body; each server answers it through one of sendEnvelope's two branches.
const caseOf = (body: Buffer): Case => JSON.parse(body.toString('utf8')) as Case;

// The request id from the case (x-request-id), as the gateway's genReqId would take a plain one.
const fastify = Fastify({ loggerInstance: logger, genReqId: (req) => String(req.headers['x-request-id']) });
fastify.removeAllContentTypeParsers();
fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
fastify.post('/', (request, reply) => {
  const c = caseOf(request.body as Buffer);
  sendEnvelope(c.closing ? ctx.closing : ctx.open, reply, envelope, log(), performance.now(), c.extra, c.status);
});
const direct: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const c = caseOf(Buffer.concat(chunks));
    const reply = new DirectReply(res, new DirectRequest(req, c.id, logger, undefined));
    sendEnvelope(c.closing ? ctx.closing : ctx.open, reply, envelope, log(), performance.now(), c.extra, c.status);
  });
});

let fastifyPort = 0;
let directPort = 0;
t.before(async () => {
  await fastify.listen({ host: '127.0.0.1', port: 0 });
  fastifyPort = (fastify.server.address() as { port: number }).port;
  // The same keep-alive bound Fastify gives its own server (the Keep-Alive header says it).
  direct.keepAliveTimeout = fastify.server.keepAliveTimeout;
  directPort = await listenOnLoopback(direct);
});
t.teardown(async () => {
  await fastify.close();
  await new Promise((r) => direct.close(r));
});

function exchange(port: number, c: Case): Promise<string> {
  const body = JSON.stringify(c);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1').replace(/\r\nDate: [^\r]*\r\n/, '\r\nDate: <date>\r\n'));
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text);
      if (head !== -1 && length && text.length - head - 4 >= Number(length[1])) done();
    });
    socket.once('end', done);
    socket.once('error', reject);
    socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${c.id}\r\n\r\n${body}`);
  });
}

const headerName = fc.oneof(
  fc.constantFrom('cache-control', 'Cache-Control', 'x-request-id', 'content-type', 'Content-Type', 'content-length', 'connection', 'Connection', 'retry-after', 'Retry-After', 'a2a-version', 'www-authenticate'),
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/),
);
const headerValue = fc.stringMatching(/^[!-~]([ -~]{0,30}[!-~])?$/);
// content-length and connection values the client can still read the reply with (others are malformed replies either way).
const caseArb: fc.Arbitrary<Case> = fc.record({
  extra: fc.dictionary(headerName, headerValue, { maxKeys: 6 }).map((extra) => {
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(extra)) if (!['content-length', 'connection', 'transfer-encoding'].includes(name.toLowerCase())) kept[name] = value;
    return kept;
  }),
  closing: fc.boolean(),
  status: fc.constantFrom(200, 401, 408, 502),
  id: fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
});

t.test('the prebuilt header array writes what Fastify writes, byte for byte', async (t) => {
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      const [viaFastify, viaArray] = await Promise.all([exchange(fastifyPort, c), exchange(directPort, c)]);
      if (viaFastify !== viaArray) throw new Error(`differ:\n${viaFastify}\n---\n${viaArray}`);
    }),
    fuzzParams(200),
  );
  t.pass('identical for every generated case');
});

t.test('examples: a header the envelope sets keeps the extra header’s place; Connection: close once the drain is up', async (t) => {
  const c: Case = { extra: { 'Cache-Control': 'max-age=5', 'retry-after': '1', 'RETRY-AFTER': '2' }, closing: true, status: 200, id: 'abc' };
  const viaArray = await exchange(directPort, c);
  t.equal(viaArray, await exchange(fastifyPort, c));
  t.match(viaArray, /^HTTP\/1\.1 200 OK\r\ncache-control: no-store\r\nretry-after: 2\r\nconnection: close\r\nx-request-id: abc\r\ncontent-type: application\/json; charset=utf-8\r\ncontent-length: \d+\r\n/);
});
