/**
 * Container HEALTHCHECK: exits 0 when the gateway answers /healthz on
 * loopback. No shell or curl is needed in the image. The port comes from the
 * same config file and the same rule as the gateway's own (src/config/listen.ts):
 * server.opsPort, else $A2A_EGRESS_PORT, else server.port. Only the YAML is
 * read (no validation): a config the gateway refused means no gateway to probe.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { parse } from 'yaml';
import { configPath, opsPort } from './config/listen.js';

function probePort(): number {
  let server: { port?: number; opsPort?: number } | undefined;
  try {
    const doc = parse(readFileSync(configPath(undefined, process.env), 'utf8')) as { server?: { port?: unknown; opsPort?: unknown } } | null;
    const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
    server = { ...(num(doc?.server?.port) !== undefined ? { port: num(doc?.server?.port)! } : {}), ...(num(doc?.server?.opsPort) !== undefined ? { opsPort: num(doc?.server?.opsPort)! } : {}) };
  } catch {
    server = undefined;
  }
  return opsPort(server, process.env);
}

let port: number;
try {
  port = probePort();
} catch {
  process.exit(1);
}
const req = request({ host: '127.0.0.1', port, path: '/healthz', timeout: 2_000 }, (res) => {
  res.resume();
  process.exit(res.statusCode === 200 ? 0 : 1);
});
req.on('timeout', () => req.destroy());
req.on('error', () => process.exit(1));
req.end();
