/**
 * DirectReply.sendAsFastify (src/jsonrpc/call-io.ts) adds `; charset=utf-8` to a bare JSON media type, as Fastify
 * does, from a string it keeps per type for the first 16 types it meets (withCharset). Over a real loopback server:
 * every type gets the right value, the first time and again, up to the bound and past it.
 */
import { createServer } from 'node:http';
import t from 'tap';
import { request } from 'undici';
import { DirectReply, DirectRequest } from '../../src/jsonrpc/call-io.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { listenOnLoopback } from '../support/servers.js';

const logger = createLogger('silent');
// The type to answer with travels in the path: /application/x0+json.
const server = createServer((req, res) => {
  const type = decodeURIComponent((req.url ?? '/').slice(1));
  new DirectReply(res, new DirectRequest(req, 'id', logger, undefined)).sendAsFastify(200, { 'content-type': type }, '{}');
});
let port = 0;
t.before(async () => {
  port = await listenOnLoopback(server);
});
t.teardown(() => new Promise((resolve) => server.close(resolve)));

async function contentTypeFor(type: string): Promise<string | string[] | undefined> {
  const res = await request(`http://127.0.0.1:${port}/${encodeURIComponent(type)}`);
  await res.body.text();
  return res.headers['content-type'];
}

t.test('16 kept types, the 17th and later made per reply: every one gets its charset, each time', async (t) => {
  // 18 types the pattern takes (the module may already keep application/json from elsewhere: one more is allowed for).
  const types = Array.from({ length: 18 }, (_, i) => `application/x${i}+json`);
  for (const round of ['first', 'again']) {
    for (const type of types) t.equal(await contentTypeFor(type), `${type}; charset=utf-8`, `${round}: ${type}`);
  }
  t.equal(await contentTypeFor('application/json; charset=latin1'), 'application/json; charset=latin1', 'a type with parameters is left as it is');
  t.equal(await contentTypeFor('text/plain'), 'text/plain', 'not JSON: left as it is');
});
