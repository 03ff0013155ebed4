import t from 'tap';
import fc from 'fast-check';
import { Deadline, DeadlineQueues, type DeadlineClock } from '../../src/upstream/deadlines.js';
import { CallAbort } from '../../src/upstream/call-abort.js';

/** A fake clock: time moves only when the test says, timers run when their time is reached. */
class FakeClock implements DeadlineClock {
  time = 1_000;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;
  armed = 0;

  now = () => this.time;
  setTimer = (fn: () => void, ms: number) => {
    const id = this.#next++;
    this.#timers.set(id, { at: this.time + ms, fn });
    this.armed++;
    return id;
  };
  clearTimer = (handle: unknown) => void this.#timers.delete(handle as number);

  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** Moves time forward to `to`, running each timer due on the way in time order. */
  advanceTo(to: number): void {
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].at <= to && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      this.#timers.delete(due[0]);
      this.time = Math.max(this.time, due[1].at);
      due[1].fn();
    }
    this.time = to;
  }

  advance(ms: number): void {
    this.advanceTo(this.time + ms);
  }
}

const setup = () => {
  const clock = new FakeClock();
  return { clock, queues: new DeadlineQueues(clock) };
};

t.test('entries of one duration fire in the order they were started', async (t) => {
  const { clock, queues } = setup();
  const fired: string[] = [];
  const a = new Deadline(() => fired.push('a'));
  const b = new Deadline(() => fired.push('b'));
  const c = new Deadline(() => fired.push('c'));
  queues.start(a, 100);
  clock.advance(10);
  queues.start(b, 100);
  clock.advance(10);
  queues.start(c, 100);
  t.equal(clock.pendingTimers, 1, 'one timer for the duration, not one per entry');
  clock.advance(80);
  t.same(fired, ['a'], 'a is due at 100; b and c are not');
  clock.advance(10);
  t.same(fired, ['a', 'b']);
  clock.advance(10);
  t.same(fired, ['a', 'b', 'c']);
  t.equal(queues.size, 0);
  t.equal(queues.durations, 0, 'an empty queue is dropped once its timer ran');
  t.equal(clock.pendingTimers, 0);
});

t.test('just under the duration it has not fired; at it, it has', async (t) => {
  const { clock, queues } = setup();
  let fired = 0;
  const d = new Deadline(() => fired++);
  queues.start(d, 300);
  clock.advance(299);
  t.equal(fired, 0, '1 ms before its duration: not fired');
  t.ok(d.pending);
  clock.advance(1);
  t.equal(fired, 1, 'at its duration: fired');
  t.notOk(d.pending);
  clock.advance(1_000);
  t.equal(fired, 1, 'fires once');
});

t.test('a fractional duration rounds up: never early', async (t) => {
  const { clock, queues } = setup();
  let fired = 0;
  queues.start(new Deadline(() => fired++), 10.2);
  clock.advance(10);
  t.equal(fired, 0);
  clock.advance(1);
  t.equal(fired, 1);
});

t.test('a stopped entry never fires; the others of its queue still do, in order', async (t) => {
  const { clock, queues } = setup();
  const fired: string[] = [];
  const a = new Deadline(() => fired.push('a'));
  const b = new Deadline(() => fired.push('b'));
  const c = new Deadline(() => fired.push('c'));
  queues.start(a, 50);
  queues.start(b, 50);
  queues.start(c, 50);
  queues.stop(b);
  queues.stop(a);
  t.equal(queues.size, 1);
  t.notOk(a.pending);
  clock.advance(50);
  t.same(fired, ['c']);
  queues.stop(c);
  t.pass('stopping an entry that is not pending does nothing');
});

t.test('the head stopped before its timer: the timer re-arms for the new head, not early', async (t) => {
  const { clock, queues } = setup();
  const fired: string[] = [];
  const a = new Deadline(() => fired.push('a'));
  const b = new Deadline(() => fired.push('b'));
  queues.start(a, 100);
  clock.advance(40);
  queues.start(b, 100);
  queues.stop(a);
  clock.advance(60);
  t.same(fired, [], 'the timer armed for a ran at 100, b is due at 140');
  clock.advance(39);
  t.same(fired, []);
  clock.advance(1);
  t.same(fired, ['b']);
});

t.test('restarting a pending entry moves it to the back with a new due time', async (t) => {
  const { clock, queues } = setup();
  const fired: string[] = [];
  const a = new Deadline(() => fired.push('a'));
  const b = new Deadline(() => fired.push('b'));
  queues.start(a, 100);
  queues.start(b, 100);
  clock.advance(50);
  queues.start(a, 100);
  clock.advance(50);
  t.same(fired, ['b']);
  clock.advance(50);
  t.same(fired, ['b', 'a']);
});

t.test('one timer per distinct duration', async (t) => {
  const { clock, queues } = setup();
  const fired: number[] = [];
  for (const ms of [300, 100, 300, 200, 100]) queues.start(new Deadline(() => fired.push(ms)), ms);
  t.equal(queues.durations, 3);
  t.equal(clock.pendingTimers, 3);
  clock.advance(1_000);
  t.same(fired, [100, 100, 200, 300, 300]);
});

t.test('a callback may start a deadline of the same duration: it waits its full duration', async (t) => {
  const { clock, queues } = setup();
  const fired: number[] = [];
  const d: Deadline = new Deadline(() => {
    fired.push(clock.now());
    if (fired.length < 3) queues.start(d, 100);
  });
  queues.start(d, 100);
  clock.advance(1_000);
  t.same(fired, [1_100, 1_200, 1_300]);
  t.equal(queues.size, 0);
});

t.test('property: whatever the starts and stops, each pending entry fires once, never before its time, in due order', async (t) => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('start' as const), entry: fc.nat(5), ms: fc.constantFrom(0, 1, 10, 250) }),
    fc.record({ kind: fc.constant('stop' as const), entry: fc.nat(5) }),
    fc.record({ kind: fc.constant('wait' as const), ms: fc.nat(300) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
      const { clock, queues } = setup();
      const dueAt = new Map<number, number>();
      const fired: { entry: number; at: number; due: number }[] = [];
      const entries = Array.from({ length: 6 }, (_, i) => new Deadline(() => {
        fired.push({ entry: i, at: clock.now(), due: dueAt.get(i)! });
        dueAt.delete(i);
      }));
      for (const o of ops) {
        if (o.kind === 'start') {
          queues.start(entries[o.entry]!, o.ms);
          dueAt.set(o.entry, clock.now() + o.ms);
        } else if (o.kind === 'stop') {
          queues.stop(entries[o.entry]!);
          dueAt.delete(o.entry);
        } else clock.advance(o.ms);
      }
      const stillPending = new Map(dueAt);
      clock.advance(1_000);
      for (const f of fired) if (f.at < f.due) return false;
      // Everything pending at the end fired, exactly once.
      for (const [entry] of stillPending) if (fired.filter((f) => f.entry === entry && f.due === stillPending.get(entry)).length !== 1) return false;
      return queues.size === 0 && clock.pendingTimers === 0;
    }),
  );
  t.pass();
});

t.test('CallAbort: the total deadline aborts with UPSTREAM_TIMEOUT, once; a later reason does not replace it', async (t) => {
  const { clock, queues } = setup();
  const call = new CallAbort(queues);
  const told: string[] = [];
  call.setTarget({ abort: (err) => told.push(err.reason) });
  call.startTotal(500);
  clock.advance(499);
  t.notOk(call.aborted, 'just under the total deadline');
  clock.advance(1);
  t.ok(call.aborted, 'at it');
  t.equal(call.error?.reason, 'UPSTREAM_TIMEOUT');
  call.abort('CALLER_CLOSED');
  t.equal(call.error?.reason, 'UPSTREAM_TIMEOUT', 'the first reason wins');
  t.same(told, ['UPSTREAM_TIMEOUT'], 'the target is told once');
});

t.test('CallAbort: the headers deadline, stopped at the head, never fires', async (t) => {
  const { clock, queues } = setup();
  const call = new CallAbort(queues);
  call.startTotal(1_000);
  call.startHeaders(100);
  clock.advance(99);
  call.stopHeaders();
  clock.advance(500);
  t.notOk(call.aborted, 'the head arrived 1 ms under the headers deadline');
  call.finish();
  clock.advance(1_000);
  t.notOk(call.aborted, 'a finished call is not aborted by its total deadline');
  t.equal(queues.size, 0);
});

t.test('CallAbort: the headers deadline 1 ms over aborts with UPSTREAM_TIMEOUT', async (t) => {
  const { clock, queues } = setup();
  const call = new CallAbort(queues);
  call.startTotal(1_000);
  call.startHeaders(100);
  clock.advance(100);
  t.equal(call.error?.reason, 'UPSTREAM_TIMEOUT');
  call.finish();
});

t.test('CallAbort: its signal is made only when asked for, and aborts with the call (before or after)', async (t) => {
  const call = new CallAbort(setup().queues);
  const signal = call.signal;
  t.notOk(signal.aborted);
  call.abort('CALLER_CLOSED');
  t.ok(signal.aborted);
  t.equal((signal.reason as { reason?: string }).reason, 'CALLER_CLOSED');
  const late = new CallAbort(setup().queues);
  late.abort('GATEWAY_SHUTDOWN');
  t.ok(late.signal.aborted, 'asked for after the abort: already aborted');
  const target: string[] = [];
  late.setTarget({ abort: (err) => target.push(err.reason) });
  t.same(target, ['GATEWAY_SHUTDOWN'], 'a target set after the abort is told at once');
});

t.test('CallAbort: the drain signal aborts every watching call with GATEWAY_SHUTDOWN, finished ones not', async (t) => {
  const drain = new AbortController();
  const { queues } = setup();
  const running = new CallAbort(queues);
  const finished = new CallAbort(queues);
  running.watchDrain(drain.signal);
  finished.watchDrain(drain.signal);
  finished.finish();
  drain.abort();
  t.equal(running.error?.reason, 'GATEWAY_SHUTDOWN');
  t.notOk(finished.aborted);
  const after = new CallAbort(queues);
  after.watchDrain(drain.signal);
  t.equal(after.error?.reason, 'GATEWAY_SHUTDOWN', 'a call that starts after the drain ended is aborted at once');
});

t.test('CallAbort: calls that finish leave the drain list from its head, middle or end; the rest are all aborted', async (t) => {
  const drain = new AbortController();
  const { queues } = setup();
  const calls = Array.from({ length: 6 }, () => new CallAbort(queues));
  for (const call of calls) call.watchDrain(drain.signal);
  // Watched in order, so call 5 is the list's newest end and call 0 its oldest.
  for (const i of [0, 2, 5]) calls[i]!.finish();
  calls[2]!.finish(); // finishing twice changes nothing
  drain.abort();
  t.same(calls.map((call) => call.error?.reason ?? 'running'), ['running', 'GATEWAY_SHUTDOWN', 'running', 'GATEWAY_SHUTDOWN', 'GATEWAY_SHUTDOWN', 'running']);
  const other = new AbortController();
  const alone = new CallAbort(queues);
  alone.watchDrain(other.signal);
  alone.finish();
  other.abort();
  t.notOk(alone.aborted, 'the only call of a drain signal, finished: the list is empty');
});

t.test('CallAbort: watching a drain signal twice, or a second signal, keeps the call in one list', async (t) => {
  const { queues } = setup();
  const first = new AbortController();
  const second = new AbortController();
  const twice = new CallAbort(queues);
  twice.watchDrain(first.signal);
  twice.watchDrain(first.signal);
  const moved = new CallAbort(queues);
  moved.watchDrain(first.signal);
  moved.watchDrain(second.signal);
  const other = new CallAbort(queues);
  other.watchDrain(second.signal);
  first.abort();
  t.equal(twice.error?.reason, 'GATEWAY_SHUTDOWN', 'watched twice: aborted once, the drain ends');
  t.notOk(moved.aborted, 'a call that moved to another signal is not aborted by the first');
  t.notOk(other.aborted, "the second signal's own calls are not reached through the first's list");
  second.abort();
  t.equal(moved.error?.reason, 'GATEWAY_SHUTDOWN');
  t.equal(other.error?.reason, 'GATEWAY_SHUTDOWN');
  twice.finish();
  moved.finish();
});

t.test('CallAbort, a stream: once the relay takes over, neither deadline fires; the caller and the drain still abort its signal', async (t) => {
  const { clock, queues } = setup();
  const drain = new AbortController();
  const call = new CallAbort(queues);
  call.startTotal(1_000);
  call.startHeaders(100);
  call.watchDrain(drain.signal);
  const signal = call.signal; // what undici's request() is given
  clock.advance(99);
  call.stopHeaders(); // the head arrived 1 ms under the headers deadline
  call.stopTotal(); // an event stream: the relay's own timers bound it from here
  t.equal(queues.size, 0, 'no deadline is pending while the stream is relayed');
  clock.advance(5_000);
  t.notOk(signal.aborted, 'long past both deadlines, the stream is not aborted');
  drain.abort();
  t.ok(signal.aborted, 'the drain still reaches a relayed stream');
  t.equal((signal.reason as { reason?: string }).reason, 'GATEWAY_SHUTDOWN');
  call.abort('CALLER_CLOSED');
  t.equal(call.error?.reason, 'GATEWAY_SHUTDOWN', 'the first reason wins');
  call.finish();
});

t.test('CallAbort, a stream: the total deadline still bounds a body that is not a stream (1 ms under, at it)', async (t) => {
  const { clock, queues } = setup();
  const call = new CallAbort(queues);
  call.startTotal(300);
  call.startHeaders(100);
  const signal = call.signal;
  clock.advance(50);
  call.stopHeaders(); // a JSON answer, not an event stream: total stays
  clock.advance(249);
  t.notOk(signal.aborted, '1 ms under the total deadline');
  clock.advance(1);
  t.equal((signal.reason as { reason?: string }).reason, 'UPSTREAM_TIMEOUT');
  call.finish();
  t.equal(queues.size, 0);
});

t.test('CallAbort: stopTotal on a call that never started one, or twice, is harmless', async (t) => {
  const { clock, queues } = setup();
  const call = new CallAbort(queues);
  call.stopTotal();
  call.startTotal(10);
  call.stopTotal();
  call.stopTotal();
  clock.advance(100);
  t.notOk(call.aborted);
  t.equal(queues.size, 0);
});
