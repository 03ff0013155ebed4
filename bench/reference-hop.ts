/**
 * A reference proxy for the saturation scenario, run as its own process: a
 * bare Fastify route over an undici Pool, forwarding the raw body and sending
 * the upstream's bytes back. No validation, normalization, policy, metrics or
 * logs. It answers "what does one Fastify + undici hop cost on this machine",
 * so the gap between it and the gateway is the gateway's own work.
 * With `<spin µs>` it burns that much CPU per call before forwarding: a hop
 * with a known extra cost, to measure what the fixed-rate p99 verdict can
 * tell apart (--only fixed-rate-calibration).
 * Usage (by bench/processes.ts): node --import tsx bench/reference-hop.ts <upstream origin> <path> [spin µs]
 * Prints `{"port":N}` on its first stdout line.
 */
import Fastify from 'fastify';
import { Pool } from 'undici';

const [origin, path, spin = '0'] = process.argv.slice(2);
if (!origin || !path) throw new Error('usage: reference-hop.ts <upstream origin> <path> [spin µs]');
const spinMs = Number(spin) / 1000;
if (!(spinMs >= 0)) throw new Error(`spin µs must be a number >= 0, got "${spin}"`);
const pool = new Pool(origin, { connections: 128, keepAliveTimeout: 4_000 });
const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.post('/remotes/:name', async (request, reply) => {
  if (spinMs > 0) {
    const until = performance.now() + spinMs;
    while (performance.now() < until);
  }
  const res = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: request.body as Buffer });
  const body = Buffer.from(await res.body.arrayBuffer());
  return reply.code(200).type('application/json; charset=utf-8').send(body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => process.exit(0));
