/**
 * The container health check (dist/healthcheck.js) against the real CLI: it
 * finds the port the way the gateway does (src/config/listen.ts), from the
 * config file alone (server.opsPort) or from $A2A_EGRESS_PORT, and fails
 * when nothing answers there.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import t from 'tap';
import { spawnGatewayCli, writeTempConfig } from '../support/gateway.js';

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** Runs the health check with only the given environment; resolves its exit code. */
const healthcheck = (env: Record<string, string>) =>
  spawnSync(process.execPath, ['dist/healthcheck.js'], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 10_000 }).status;

t.test('server.opsPort in the config is all the health check needs', async (t) => {
  const ops = await freePort();
  const config = writeTempConfig(`server: { port: 0, opsPort: ${ops} }\nremotes:\n  a:\n    url: http://127.0.0.1:9/\n    allowPrivateNetwork: true\n`);
  const gw = spawnGatewayCli(['--config', config]);
  t.teardown(() => void gw.child.kill('SIGKILL'));
  await gw.url;
  t.equal(healthcheck({ A2A_EGRESS_CONFIG: config }), 0, 'healthy on the ops port from the config');
  t.equal(healthcheck({ A2A_EGRESS_CONFIG: config, A2A_EGRESS_PORT: '1' }), 0, 'the caller port variable does not move the ops port');
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
  t.equal(healthcheck({ A2A_EGRESS_CONFIG: config }), 1, 'unhealthy once the gateway is gone');
});

t.test('without opsPort, the caller port from $A2A_EGRESS_PORT, as the gateway reads it', async (t) => {
  const port = await freePort();
  const config = writeTempConfig(`server: { port: 1 }\nremotes:\n  a:\n    url: http://127.0.0.1:9/\n    allowPrivateNetwork: true\n`);
  const gw = spawnGatewayCli(['--config', config], { A2A_EGRESS_PORT: String(port) });
  t.teardown(() => void gw.child.kill('SIGKILL'));
  t.equal(await gw.url, `http://127.0.0.1:${port}`, 'the gateway listens on $A2A_EGRESS_PORT, not server.port');
  t.equal(healthcheck({ A2A_EGRESS_CONFIG: config, A2A_EGRESS_PORT: String(port) }), 0);
  t.equal(healthcheck({ A2A_EGRESS_CONFIG: config }), 1, 'server.port 1: nothing there');
  t.equal(healthcheck({ A2A_EGRESS_CONFIG: '/nonexistent.yaml', A2A_EGRESS_PORT: String(port) }), 0, 'no config file: the variable still names the port');
  t.equal(healthcheck({ A2A_EGRESS_CONFIG: config, A2A_EGRESS_PORT: 'x' }), 1, 'a bad variable is unhealthy, not a crash');
  gw.child.kill('SIGTERM');
  t.equal(await gw.exited, 0);
});
