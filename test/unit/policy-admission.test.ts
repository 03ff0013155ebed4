/**
 * A call's admission (RemoteRuntime.admit) is decided at once when it can be: a free slot is a Release returned
 * with no promise made, an open circuit or an empty in-process bucket a LimitError thrown; only a wait for a slot
 * makes a promise. The limits hold exactly as when every admission was a promise: at the bound and one over it.
 */
import t from 'tap';
import { parseConfig } from '../../src/loader/load.js';
import { ConcurrencyLimiter } from '../../src/policy/concurrency.js';
import { LimitError } from '../../src/policy/limit-error.js';
import { RemoteRuntime } from '../../src/policy/remote-runtime.js';

function runtimeFor(extra: string): RemoteRuntime {
  const config = parseConfig(`
defaults:
  allowPrivateNetwork: true
remotes:
  r:
    url: http://127.0.0.1:9/
${extra}
`);
  return new RemoteRuntime(config.remotes.get('r')!, {});
}

const reasonOf = (err: unknown) => (err instanceof LimitError ? err.reason : String(err));

t.test('tryAcquire: a slot at once up to maxConcurrent, none one over, nothing queued', async (t) => {
  const limiter = new ConcurrencyLimiter({ maxConcurrent: 2, maxQueued: 1, queueTimeoutMs: 100 });
  const first = limiter.tryAcquire();
  t.type(first, 'function');
  t.type(limiter.tryAcquire(), 'function', 'just at the bound');
  t.equal(limiter.inFlight, 2);
  t.equal(limiter.tryAcquire(), undefined, 'one over the bound: no slot');
  t.equal(limiter.inFlight, 2, 'and nothing taken');
  t.equal(limiter.queued, 0, 'nor queued');
  first!();
  first!();
  t.equal(limiter.inFlight, 1, 'a release counts once');
  t.type(limiter.tryAcquire(), 'function', 'the freed slot is taken at once');
});

t.test('admit: a free slot is a Release, not a promise; a full limiter a promise that waits its turn', async (t) => {
  const runtime = runtimeFor('    limits: { maxConcurrent: 1, maxQueued: 1 }');
  const first = runtime.admit();
  t.type(first, 'function', 'admitted at once');
  const second = runtime.admit();
  t.ok(second instanceof Promise, 'at the bound: it waits');
  let admitted = false;
  void (second as Promise<() => void>).then(() => (admitted = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(admitted, false, 'still waiting while the slot is held');
  (first as () => void)();
  const release = await second;
  t.equal(admitted, true, 'admitted once the slot is given back');
  t.equal(runtime.limiter.inFlight, 1);
  release();
  t.equal(runtime.limiter.inFlight, 0);
});

t.test('admit: an open circuit and an empty bucket refuse at once, as LimitErrors thrown', async (t) => {
  const open = runtimeFor('    circuitBreaker: { failureThreshold: 1, cooldownMs: 60000 }');
  open.breaker.onFailure();
  t.throws(() => open.admit(), LimitError);
  try {
    open.admit();
  } catch (err) {
    t.equal(reasonOf(err), 'CIRCUIT_OPEN');
  }
  t.equal(open.limiter.inFlight, 0, 'no slot taken');

  const limited = runtimeFor('    rateLimit: { perSecond: 0.001, burst: 1 }');
  t.type(limited.admit(), 'function', 'the burst: admitted');
  try {
    limited.admit();
    t.fail('one over the burst must be refused');
  } catch (err) {
    t.equal(reasonOf(err), 'RATE_LIMITED', 'one over the burst: refused at once');
  }
  t.equal(limited.limiter.inFlight, 1, 'the refused call took no slot');
});

t.test('admit: a signal already aborted is refused with its reason even when a slot is free', async (t) => {
  const runtime = runtimeFor('');
  const controller = new AbortController();
  const reason = new Error('caller left');
  controller.abort(reason);
  await t.rejects(async () => runtime.admit(controller.signal), reason);
  t.equal(runtime.limiter.inFlight, 0, 'no slot taken');
  // A signal made only on a wait (a function) is not consulted for a free slot.
  t.type(runtime.admit(() => controller.signal), 'function');
});
