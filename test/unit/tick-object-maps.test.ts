/**
 * Node's nextTick keeps its fast inline caches through a full garbage collection once a tick object is kept alive
 * (src/v8/tick-object-maps.ts).
 *
 * Each case is a fresh node process: it queues enough ticks for V8 to record the tick object's maps, runs a full
 * collection from a timer (when no tick object is alive, as between an idle gateway's ticks), queues one more tick,
 * and prints V8's view of nextTick (%DebugPrint, which lists the state of each inline cache). Without the kept object
 * the caches that define the tick object's members turn megamorphic: that case shows the probe sees the failure the
 * module prevents, and fails if a Node release changes the premise (then the module may be obsolete). The last case
 * holds the way the object is reached: not through an async_hooks hook, whose V8 promise hooks would cost more than
 * the module saves.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { keepTickObjectMaps, tickObjectKept } from '../../src/v8/tick-object-maps.js';

const MODULE = fileURLToPath(new URL('../../src/v8/tick-object-maps.js', import.meta.url));

const CHILD = `
if (process.env.KEEP_TICK_OBJECT) await import(process.env.KEEP_TICK_OBJECT);
for (let i = 0; i < 100; i++) process.nextTick(() => {});
setTimeout(() => {
  globalThis.gc();
  setTimeout(() => {
    process.nextTick(() => {});
    setTimeout(() => %DebugPrint(process.nextTick), 5);
  }, 5);
}, 20);
`;

/** The states of nextTick's member-defining inline caches after a full collection between ticks. */
function cacheStatesAfterCollection(keep: boolean): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-egress-tick-'));
  try {
    // V8 prints through C stdio: into a file, which it flushes at exit (through a pipe it was seen cut at 4 KiB).
    const out = openSync(join(dir, 'debug-print.txt'), 'w');
    const child = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', CHILD], {
      // Nothing of the runner's environment: NODE_OPTIONS hooks or NODE_V8_COVERAGE (tap's) change how V8 keeps feedback.
      env: { KEEP_TICK_OBJECT: keep ? MODULE : '' },
      stdio: ['ignore', out, 'pipe'],
      timeout: 30_000,
    });
    closeSync(out);
    if (child.status !== 0) throw new Error(`probe exited ${child.status} ${child.signal}: ${child.stderr}`);
    const printed = readFileSync(join(dir, 'debug-print.txt'), 'utf8');
    return [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((match) => match[1]!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('without a kept tick object, a full collection between ticks turns the caches megamorphic', async (t) => {
  const states = cacheStatesAfterCollection(false);
  t.equal(states.length, 4, `nextTick defines four members through these caches: ${states.join(', ')}`);
  t.ok(states.includes('MEGAMORPHIC'), `some turned megamorphic: ${states.join(', ')}`);
});

t.test('with one kept, every cache stays monomorphic', async (t) => {
  const states = cacheStatesAfterCollection(true);
  t.equal(states.length, 4, states.join(', '));
  t.same(states, ['MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC', 'MONOMORPHIC']);
});

t.test('the tick object is kept from the next tick on (Node still hands it to its own callback)', async (t) => {
  keepTickObjectMaps();
  keepTickObjectMaps();
  await new Promise<void>((resolve) => process.nextTick(resolve));
  t.equal(tickObjectKept(), true);
});

/**
 * How many times the child set V8 promise hooks (Node's async_wrap binding, wrapped before anything could set them),
 * when `mode` is 'module' (this module keeps its tick object) or 'hook' (an async_hooks init hook enabled and disabled
 * at once, the other way to reach a tick object).
 */
function promiseHookInstalls(mode: 'module' | 'hook'): { installs: number; kept: string } {
  const child = spawnSync(process.execPath, ['--expose-internals', '--no-warnings', '-e', PROMISE_HOOK_PROBE], {
    env: { MODE: mode, KEEP_TICK_OBJECT: MODULE },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (child.status !== 0) throw new Error(`probe exited ${child.status} ${child.signal}: ${child.stderr}`);
  const installs = /promise hooks set (\d+)/.exec(child.stdout);
  if (!installs) throw new Error(`probe printed no count: ${child.stdout}`);
  return { installs: Number(installs[1]), kept: /kept (\w+)/.exec(child.stdout)?.[1] ?? 'n/a' };
}

const PROMISE_HOOK_PROBE = `
const { internalBinding } = require('internal/test/binding');
const asyncWrap = internalBinding('async_wrap');
const setPromiseHooks = asyncWrap.setPromiseHooks;
let set = 0;
asyncWrap.setPromiseHooks = function (...hooks) {
  if (hooks.some((hook) => typeof hook === 'function')) set++;
  return setPromiseHooks.apply(this, hooks);
};
(async () => {
  if (process.env.MODE === 'hook') require('node:async_hooks').createHook({ init() {} }).enable().disable();
  else {
    const kept = await import(process.env.KEEP_TICK_OBJECT);
    await new Promise((resolve) => setTimeout(resolve, 10));
    console.log('kept', kept.tickObjectKept());
  }
  await new Promise((resolve) => setTimeout(resolve, 10));
  console.log('promise hooks set', set);
})();
`;

t.test('reaching the tick object sets no V8 promise hook (which would end promise optimizations for good)', async (t) => {
  t.ok(promiseHookInstalls('hook').installs > 0, 'the probe sees an init hook enabled for a moment set them');
  t.same(promiseHookInstalls('module'), { installs: 0, kept: 'true' });
});
