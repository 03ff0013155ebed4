/**
 * `remotes.<name>.maxUpstreamConnections` (and its deprecated name
 * `maxConnections`) reaches the remote's pool: four requests dispatched at
 * once to a remote that holds every answer open as long as the test says
 * open exactly that many sockets, the rest wait for one of them. Without the
 * cap (the default 64) the pool would open one socket per request.
 */
import { createServer, type ServerResponse } from 'node:http';
import t from 'tap';
import { parseConfig } from '../../src/loader/load.js';
import { UpstreamPools } from '../../src/upstream/pools.js';
import { closeServer, listenOnLoopback, readBody, trackConnections } from '../support/servers.js';

/** Holds every request until release(); counts the sockets it accepted. */
async function startCountingUpstream() {
  const held: ServerResponse[] = [];
  const watchers: (() => void)[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then(() => {
      held.push(res);
      for (const w of watchers.splice(0)) w();
    });
  });
  const tracker = trackConnections(server);
  const port = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/`,
    sockets: () => tracker.total(),
    /** Resolves once `n` requests are held (the gateway's own deadlines bound the test otherwise). */
    waitForHeld: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (held.length >= n ? resolve() : watchers.push(check));
        check();
      }),
    release: () => {
      for (const res of held.splice(0)) res.end('{}');
    },
    close: () => closeServer(server, tracker),
  };
}

for (const key of ['maxUpstreamConnections', 'maxConnections']) {
  t.test(`${key}: 2 → four requests at once use two sockets`, async (t) => {
    const upstream = await startCountingUpstream();
    t.teardown(() => upstream.close());
    const config = parseConfig(`remotes:\n  a:\n    url: ${upstream.url}\n    allowPrivateNetwork: true\n    ${key}: 2\n`, 'g.yaml');
    const remote = config.remotes.get('a')!;
    const pools = new UpstreamPools();
    t.teardown(() => pools.close());
    const pool = pools.get(remote);
    // All four are dispatched before any answer, so an uncapped pool would connect four times.
    const answers = [1, 2, 3, 4].map(() => pool.request({ path: '/', method: 'POST', body: '{}' }).then((r) => r.body.text()));
    await upstream.waitForHeld(2);
    upstream.release();
    await upstream.waitForHeld(2);
    upstream.release();
    t.same(await Promise.all(answers), ['{}', '{}', '{}', '{}']);
    t.equal(upstream.sockets(), 2, 'two sockets to the remote');
  });
}

t.test('the default (64) does not cap four requests: the same run opens four sockets', async (t) => {
  const upstream = await startCountingUpstream();
  t.teardown(() => upstream.close());
  const remote = parseConfig(`remotes:\n  a:\n    url: ${upstream.url}\n    allowPrivateNetwork: true\n`, 'g.yaml').remotes.get('a')!;
  const pools = new UpstreamPools();
  t.teardown(() => pools.close());
  const pool = pools.get(remote);
  const answers = [1, 2, 3, 4].map(() => pool.request({ path: '/', method: 'POST', body: '{}' }).then((r) => r.body.text()));
  await upstream.waitForHeld(4);
  upstream.release();
  await Promise.all(answers);
  t.equal(upstream.sockets(), 4);
});
