/**
 * GrpcCallerOut: the ServerResponse surface the call runner and the SSE relay
 * write to, over a gRPC listener's EventSink. Items reach the sink in order,
 * the final error ends it once, back-pressure comes back as write() === false
 * then 'drain', and a consumer that goes away is a 'close'.
 */
import t from 'tap';
import type { EventSink } from '../../src/bindings/grpc/contracts.js';
import type { ErrorOutcome, ResultOutcome } from '../../src/core/outcome.js';
import { GrpcCallerOut } from '../../src/routes/grpc-caller-out.js';

const result = (n: number): ResultOutcome => ({ kind: 'result', json: `{"n":${n}}`, value: { n } });
const error: ErrorOutcome = { kind: 'error', code: -32603, message: 'stopped', reason: 'STREAM_TOO_LONG', metadata: {}, details: [] };

function recordingSink(answers: Array<true | Promise<boolean>> = []) {
  const controller = new AbortController();
  const seen: { opened: number; written: unknown[]; ended: Array<ErrorOutcome | undefined> } = { opened: 0, written: [], ended: [] };
  const sink: EventSink = {
    signal: controller.signal,
    open: () => void seen.opened++,
    write: (event) => {
      seen.written.push(event.value);
      return answers.shift() ?? true;
    },
    end: (e) => void seen.ended.push(e),
  };
  return { sink, seen, controller };
}

t.test('items queued by the stream caller reach the sink on the relay’s next write; the final error ends it once', async (t) => {
  const { sink, seen, controller } = recordingSink();
  const out = new GrpcCallerOut(controller.signal, sink);
  const caller = out.streamCaller();
  out.writeHead();
  out.flushHeaders();
  t.equal(seen.opened, 1);
  t.equal(caller.write({ outcome: result(1), final: false }), '{"n":1}', 'the text is for the relay’s byte count');
  caller.write({ outcome: result(2), final: false });
  t.same(seen.written, [], 'nothing before the relay writes');
  t.equal(out.write('ignored'), true);
  t.same(seen.written, [{ n: 1 }, { n: 2 }]);
  t.equal(out.write(': keep-alive\n\n'), true, 'a keep-alive finds the queue empty');
  t.same(seen.written, [{ n: 1 }, { n: 2 }]);
  caller.write({ outcome: error, final: true });
  out.write('x');
  t.same(seen.ended, [], 'the final error waits for end()');
  out.end();
  out.finish();
  t.same(seen.ended, [error], 'ended exactly once, with the error');
  t.ok(out.writableEnded && out.writableFinished);
  t.equal(out.write('late'), false, 'nothing after the end');
});

t.test('back-pressure: a sink that cannot take more makes write() false, then "drain" when it can', async (t) => {
  let release!: (ok: boolean) => void;
  const { sink, seen, controller } = recordingSink([new Promise<boolean>((r) => (release = r))]);
  const out = new GrpcCallerOut(controller.signal, sink);
  const caller = out.streamCaller();
  caller.write({ outcome: result(1), final: false });
  t.equal(out.write('x'), false, 'full');
  let drained = 0;
  out.on('drain', () => drained++);
  release(true);
  await new Promise((r) => setImmediate(r));
  t.equal(drained, 1);
  caller.write({ outcome: result(2), final: false });
  t.equal(out.write('x'), true, 'room again');
  t.same(seen.written, [{ n: 1 }, { n: 2 }]);
});

t.test('a sink whose consumer left (write resolves false) or an aborted signal is a "close"', async (t) => {
  const { sink, controller } = recordingSink([Promise.resolve(false)]);
  const out = new GrpcCallerOut(controller.signal, sink);
  let closed = 0;
  out.on('close', () => closed++);
  out.streamCaller().write({ outcome: result(1), final: false });
  out.write('x');
  await new Promise((r) => setImmediate(r));
  t.equal(closed, 1);
  t.ok(out.destroyed);
  controller.abort();
  t.equal(closed, 1, 'once');

  const unary = new AbortController();
  const quiet = new GrpcCallerOut(unary.signal);
  let unaryClosed = 0;
  quiet.on('close', () => unaryClosed++);
  unary.abort();
  t.equal(unaryClosed, 1, 'a unary call’s cancel');
});

t.test('finish(error) without a stream ends the sink with that error; deliverOne sends one message then ends', async (t) => {
  const a = recordingSink();
  const refused = new GrpcCallerOut(a.controller.signal, a.sink);
  refused.finish(error);
  refused.finish();
  t.same(a.seen.ended, [error]);
  t.same(a.seen.written, []);

  const b = recordingSink();
  const single = new GrpcCallerOut(b.controller.signal, b.sink);
  single.deliverOne(result(7));
  single.finish();
  t.equal(b.seen.opened, 1);
  t.same(b.seen.written, [{ n: 7 }]);
  t.same(b.seen.ended, [undefined], 'a clean end');
});
