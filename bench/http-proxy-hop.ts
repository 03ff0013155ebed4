/**
 * @fastify/http-proxy in front of one upstream route, run as its own process:
 * the passthrough package the design card names, with its defaults (undici
 * underneath through @fastify/reply-from, the body not parsed, the upstream's
 * headers copied back). It normalizes nothing; it is the peer a gateway that
 * normalizes everything should cost no more than.
 * Usage (by bench/processes.ts): node --import tsx bench/http-proxy-hop.ts <upstream origin> <path> <remote>
 * serves POST /remotes/<remote> as <upstream origin><path>. Prints `{"port":N}` on its first stdout line.
 */
import proxy from '@fastify/http-proxy';
import Fastify from 'fastify';

const [origin, path, remote] = process.argv.slice(2);
if (!origin || !path || !remote) throw new Error('usage: http-proxy-hop.ts <upstream origin> <path> <remote>');
const app = Fastify({ logger: false });
// The same pool size as the other hops; everything else is the package's default.
await app.register(proxy, { upstream: origin, prefix: `/remotes/${remote}`, rewritePrefix: path, undici: { connections: 128, keepAliveTimeout: 4_000 } });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
process.on('SIGTERM', () => process.exit(0));
