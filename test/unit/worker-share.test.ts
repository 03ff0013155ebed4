/**
 * server.workers: the shares of the per-process limits each worker enforces
 * (src/config/worker-share.ts), the problems the loader reports when a limit
 * cannot be divided (just under and at the bound), and the reload contract
 * (server.workers needs a restart).
 */
import fc from 'fast-check';
import t from 'tap';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/loader/load.js';
import { planReload, reloadEffect } from '../../src/config/reload.js';
import { shareOf, workerShare } from '../../src/config/worker-share.js';

const yaml = (server: string, remote = '') => `
server: { ${server} }
remotes:
  agent:
    url: https://agent.example.com/a2a
    ${remote}
`;

const problemsOf = (text: string): string[] => {
  try {
    parseConfig(text, 'gw.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return [...(err.problems ?? [err.message])];
    throw err;
  }
  return [];
};

t.test('shareOf: the shares of every worker add up to the total, and differ by at most one', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 1, max: 64 }), (total, workers) => {
      const shares = Array.from({ length: workers }, (_, i) => shareOf(total, workers, i + 1));
      return shares.reduce((a, b) => a + b, 0) === total && Math.max(...shares) - Math.min(...shares) <= 1;
    }),
  );
  t.same([1, 2, 3].map((slot) => shareOf(7, 3, slot)), [3, 2, 2]);
});

t.test('server.workers defaults to 1, and one worker runs the config unchanged', async (t) => {
  const config = parseConfig(yaml('port: 0'), 'gw.yaml');
  t.equal(config.server.workers, 1);
  t.equal(workerShare(config, 1, 1), config, 'the same object: nothing divided');
});

t.test('each worker gets its share of the divided limits; Redis buckets and per-process bounds are left whole', async (t) => {
  const config = parseConfig(
    yaml(
      'workers: 2, maxConnections: 101, maxBufferedBytes: 16777216, maxHeapUsedBytes: 1000000',
      `maxUpstreamConnections: 3
    limits: { maxConcurrent: 5, maxQueued: 3, maxResponseBytes: 1048576 }
    rateLimit: { perSecond: 10, burst: 5 }
    circuitBreaker: { failureThreshold: 5 }`,
    ),
    'gw.yaml',
  );
  const [first, second] = [1, 2].map((slot) => workerShare(config, 2, slot));
  const a = first!.remotes.get('agent')!;
  const b = second!.remotes.get('agent')!;
  t.same([a.limits.maxConcurrent, b.limits.maxConcurrent], [3, 2], 'maxConcurrent 5 = 3 + 2');
  t.same([a.limits.maxQueued, b.limits.maxQueued], [2, 1]);
  t.same([a.rateLimit, b.rateLimit], [{ perSecond: 5, burst: 3 }, { perSecond: 5, burst: 2 }]);
  t.same([a.maxUpstreamConnections, b.maxUpstreamConnections], [2, 1], 'pool sockets');
  t.same([a.circuitBreaker.failureThreshold, b.circuitBreaker.failureThreshold], [3, 3], 'ceil(5 / 2) failures seen by one worker');
  t.same([first!.server.maxConnections, second!.server.maxConnections], [51, 50]);
  t.same([first!.server.maxBufferedBytes, second!.server.maxBufferedBytes], [8388608, 8388608]);
  t.equal(first!.server.maxHeapUsedBytes, 1000000, 'a per-process bound stays whole');
  t.equal(a.limits.maxResponseBytes, 1048576, 'a per-call bound stays whole');
  t.equal(config.remotes.get('agent')!.limits.maxConcurrent, 5, 'the config itself is not changed');

  const shared = parseConfig(yaml('workers: 4', 'rateLimit: { perSecond: 10, burst: 1, store: { type: redis, url: "redis://127.0.0.1:6379" } }'), 'gw.yaml');
  t.same(workerShare(shared, 4, 3).remotes.get('agent')!.rateLimit, shared.remotes.get('agent')!.rateLimit, 'a Redis bucket is one bucket for all workers');
  const pool = parseConfig(yaml('workers: 4', 'maxConnections: 2'), 'gw.yaml');
  t.equal(workerShare(pool, 4, 4).remotes.get('agent')!.maxUpstreamConnections, 1, 'at least one pool socket per worker');
});

t.test('a limit that cannot be divided is refused at load, naming the key (at the bound: accepted)', async (t) => {
  t.same(problemsOf(yaml('workers: 2', 'limits: { maxConcurrent: 2 }')), [], 'maxConcurrent = workers');
  t.match(problemsOf(yaml('workers: 3', 'limits: { maxConcurrent: 2 }')), [
    /^gw\.yaml:2: remotes\.agent\.limits\.maxConcurrent: 2 cannot be divided among server\.workers \(3\): each worker needs at least 1$/,
  ]);
  t.same(problemsOf(yaml('workers: 2', 'rateLimit: { perSecond: 1, burst: 2 }')), []);
  t.match(problemsOf(yaml('workers: 3', 'rateLimit: { perSecond: 1, burst: 2 }')), [/rateLimit\.burst: 2 cannot be divided .* \(or set rateLimit\.store to share one bucket\)/]);
  t.same(problemsOf(yaml('workers: 3', 'rateLimit: { perSecond: 1, burst: 2, store: { type: redis, url: "redis://127.0.0.1:6379" } }')), [], 'a shared bucket needs no share');
  t.same(problemsOf(yaml('workers: 2, maxConnections: 2')), []);
  t.match(problemsOf(yaml('workers: 2, maxConnections: 1')), [/server\.maxConnections: 1 cannot be divided/]);
  // 4 MiB replies (the default maxResponseBytes) need 4 MiB of each worker's share of the budget.
  t.same(problemsOf(yaml('workers: 2, maxBufferedBytes: 8388608')), [], 'two shares of 4 MiB');
  t.match(problemsOf(yaml('workers: 2, maxBufferedBytes: 8388607')), [/maxResponseBytes: 4194304 is larger than one worker's share of server\.maxBufferedBytes \(4194303 of 8388607 over 2 workers\)/]);
  // The default budget (32 MiB) holds 8 default replies (4 MiB): 8 workers run on the defaults, 9 need a larger budget.
  t.same(problemsOf(yaml('workers: 8')), [], 'the most workers on the default budget');
  t.match(problemsOf(yaml('workers: 9')), [/maxResponseBytes: 4194304 is larger than one worker's share of server\.maxBufferedBytes \(3728270 of 33554432 over 9 workers\)/]);
  t.same(problemsOf(yaml('workers: 64, maxBufferedBytes: 268435456')), [], 'the largest count');
  t.match(problemsOf(yaml('workers: 65')), [/workers/]);
  t.match(problemsOf(yaml('workers: 0')), [/workers/]);
});

t.test('server.workers is a restart key: a reload names it and keeps the count running', async (t) => {
  t.equal(reloadEffect('server.workers'), 'restart');
  const before = parseConfig(yaml('workers: 2'), 'gw.yaml');
  const plan = planReload(before, parseConfig(yaml('workers: 3'), 'gw.yaml'));
  t.same(plan.restartNeeded, ['server.workers']);
  t.equal(plan.config.server.workers, 2);
  t.same(planReload(before, parseConfig(yaml('workers: 2'), 'gw.yaml')).restartNeeded, []);
});
