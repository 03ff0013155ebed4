/**
 * `npm run sample-agent [-- --port N]`: runs the sample remote A2A agent that
 * config/gateway.yaml points at (127.0.0.1:9999 by default) until Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { DEMO_CASES } from './cases.js';
import { startSampleAgent } from './sample-server.js';

const { values } = parseArgs({
  options: { port: { type: 'string', short: 'p' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  strict: true,
});
if (values.help) {
  process.stdout.write('usage: sample-agent [--port N] [--host ADDR]   (default 127.0.0.1:9999)\n');
  process.exit(0);
}
const port = Number(values.port ?? 9999);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write('sample-agent: --port must be an integer 0..65535\n');
  process.exit(2);
}

try {
  const agent = await startSampleAgent({ port, host: values.host ?? '127.0.0.1' });
  const width = Math.max(...DEMO_CASES.map((c) => c.name.length));
  process.stdout.write(
    `sample agent listening on ${agent.origin}\n` +
      `  card:     GET  ${agent.origin}/.well-known/agent-card.json\n` +
      `  JSON-RPC: POST ${agent.rpcUrl}  (well-behaved)\n` +
      `  cases:    POST ${agent.rpcUrl}/<case>, or send the case name as the message text\n` +
      DEMO_CASES.map((c) => `    ${c.name.padEnd(width)}  ${c.summary}\n`).join(''),
  );
  const stop = () => void agent.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  process.stderr.write(
    code === 'EADDRINUSE'
      ? `sample-agent: port ${port} is already in use (another sample agent?); try --port N and point remotes.sample.url at it\n`
      : `sample-agent: cannot start: ${(err as Error).message}\n`,
  );
  process.exit(1);
}
