/**
 * Keeps one of Node's process.nextTick "tick objects" alive for the life of
 * the process, so that V8 keeps generating fast code for every nextTick.
 *
 * Why: Node builds each tick object with one object literal whose first keys
 * are computed (`{ [async_id_symbol]: ..., [trigger_async_id_symbol]: ...,
 * callback, args }`). V8 defines such members through an inline cache that
 * remembers the object's hidden class (map) at each member and goes
 * megamorphic, for good, the first time it meets another one. The maps of the
 * partly built object are held only weakly (by the cache and by the
 * transition from the previous map): when a full garbage collection runs
 * while no tick object is alive -- between two ticks, which on an idle or
 * starting process is most of the time -- they die, the next tick object gets
 * new maps, and the cache turns megamorphic. From then on every nextTick,
 * even in optimized code, calls into the V8 runtime to define its four
 * members. Node's streams and HTTP server call nextTick several times per
 * request: measured under unary load with Linux perf, 3.4 µs of each gateway
 * call went to Runtime_DefineKeyedOwnPropertyInLiteral (Node 20; README,
 * "Performance"). With the gateway's 32 MiB young generation the second full
 * collection of startup came ~0.9 s in and hit it on every start.
 *
 * A tick object kept alive keeps its map, and through the maps' back pointers
 * the whole chain, so every later tick object gets the same maps and the
 * cache stays monomorphic. The only public way to reach a tick object is an
 * async_hooks init hook; it is enabled for one nextTick and disabled at once
 * (no hook stays installed). Call this first thing, before the feedback for
 * nextTick can be cleared: cli.ts imports this module before any other.
 */
import { createHook } from 'node:async_hooks';

let keptTickObject: object | undefined;

/** Keeps a tick object alive (once per process; later calls do nothing). Returns whether one is kept. */
export function keepTickObjectMaps(): boolean {
  if (keptTickObject !== undefined) return true;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && keptTickObject === undefined) keptTickObject = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(doNothing);
  } finally {
    hook.disable();
  }
  return keptTickObject !== undefined;
}

function doNothing(): void {}

keepTickObjectMaps();
