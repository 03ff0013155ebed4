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
 * even in optimized code, calls into the V8 runtime to define its members.
 * Node's streams and HTTP server call nextTick several times per request:
 * measured under unary load with Linux perf, 3.4 µs of each gateway call went
 * to Runtime_DefineKeyedOwnPropertyInLiteral (Node 20; README,
 * "Performance"). With the gateway's 32 MiB young generation the second full
 * collection of startup came ~0.9 s in and hit it on nearly every start.
 *
 * A tick object kept alive keeps its map, and through the maps' back pointers
 * the whole chain, so every later tick object gets the same maps and the
 * caches stay monomorphic. The tick object is reached from inside its own
 * callback: there, Node's current async resource is the tick object itself.
 * Not through an async_hooks init hook: enabling one, even for a moment,
 * installs V8 promise hooks, which switches off V8's promise and await
 * optimizations for the rest of the process. executionAsyncResource() leaves
 * one flag set that only matters while hooks are enabled (it sends native
 * callbacks through Node's JS trampoline then; AsyncLocalStorage sets the
 * same flag on every use).
 */
import { executionAsyncResource } from 'node:async_hooks';

let asked = false;
let keptTickObject: object | undefined;

/**
 * Keeps a tick object alive from the next tick on (once per process; later calls do nothing). Call it first thing,
 * before a full collection can free the maps nextTick's caches have seen: cli.ts imports this module before any other.
 */
export function keepTickObjectMaps(): void {
  if (asked) return;
  asked = true;
  process.nextTick(keepCurrentTickObject);
}

/** Whether a tick object is kept (false until the tick after keepTickObjectMaps, or if Node's internals changed). */
export function tickObjectKept(): boolean {
  return keptTickObject !== undefined;
}

function keepCurrentTickObject(): void {
  const resource: unknown = executionAsyncResource();
  // Only the tick object that carries this very callback is kept: if a Node release passes something else, nothing is.
  if (typeof resource === 'object' && resource !== null && (resource as { callback?: unknown }).callback === keepCurrentTickObject) {
    keptTickObject = resource;
  }
}

keepTickObjectMaps();
