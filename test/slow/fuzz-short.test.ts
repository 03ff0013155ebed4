/**
 * The CI version of `npm run fuzz`: the same targets (scripts/fuzz-targets.ts)
 * with 10,000 generated cases in-process (FUZZ_SHORT_RUNS to change it), a
 * check that the harness can fail at all, the counterexamples it has found
 * replayed as fixed cases, and the CLI's contract (final line, exit codes).
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { builtinLimits } from '../../src/config/defaults.js';
import { normalizeReply } from '../../src/envelope/normalize.js';
import { EventRelayCore } from '../../src/stream/event-core.js';
import { fuzzTarget, runFuzz } from '../../scripts/fuzz-targets.js';

const runs = Number.parseInt(process.env.FUZZ_SHORT_RUNS ?? '', 10) || 10_000;

t.test(`${runs} generated replies and streams: 0 invariant violations`, async (t) => {
  const summary = runFuzz(runs);
  for (const r of summary.results) if (r.report) t.comment(r.report);
  t.equal(summary.violations, 0, '0 invariant violations');
  t.equal(summary.runs, runs, 'every run made');
  t.same(summary.results.map((r) => [r.target, r.runs]), [['normalizer', Math.ceil(runs / 2)], ['relay', Math.floor(runs / 2)]]);
});

t.test('the harness reports a broken normalizer with its counterexample', async (t) => {
  const result = fuzzTarget('normalizer', 2_000, {
    seed: 1,
    normalize: (reply, callerId, policy) => {
      const out = normalizeReply(reply, callerId, policy);
      // Broken on purpose: a reply to a string id gets the id null.
      return typeof callerId === 'string' ? { ...out, json: out.json.replace(`"id":${JSON.stringify(callerId)}`, '"id":null') } : out;
    },
  });
  t.equal(result.violations, 1);
  t.ok(result.runs < 2_000, 'stops at the first failure');
  t.match(result.report, /Counterexample/);
  t.match(result.report, /is not the caller's/);
  t.match(result.report, /seed: 1/);
});

/** Broken on purpose: every second chunk is dropped, so splitting a stream changes what comes out. */
class ChunkDroppingCore extends EventRelayCore {
  private pushes = 0;
  override push(chunk: Buffer) {
    return this.pushes++ % 2 === 1 ? [] : super.push(chunk);
  }
}

t.test('the harness reports a relay core whose output depends on chunking', async (t) => {
  const result = fuzzTarget('relay', 2_000, {
    seed: 2,
    relayCore: (opts) => new ChunkDroppingCore(opts),
  });
  t.equal(result.violations, 1);
  t.match(result.report, /changed the output/);
});

t.test('replayed: a CRLF comment split between its CR and LF does not count toward the next event', async (t) => {
  // Found by `npm run fuzz`: the LF arriving in the next chunk was counted toward the next event's bound.
  const stream = Buffer.from(':\r\nevent: message\r\nid:       \r\ndata:\u0000\u0080\u0000\u0000\u0080\r\n\r\n', 'utf8');
  const limits = { ...builtinLimits, maxEventBytes: 42, maxStreamEvents: 1, maxErrorMessageBytes: 16, maxJsonDepth: 2 };
  const opts = { callerId: '', remote: { name: 'fuzz', keepRemoteErrorData: false, limits }, httpStatus: 200 };
  const outcomes = (chunks: Buffer[]) => {
    const core = new EventRelayCore(opts);
    return [...chunks.flatMap((c) => core.push(c)), ...core.end()].map((e) => e.outcome);
  };
  const whole = outcomes([stream]);
  t.same(whole, ['INVALID_EVENT'], 'the event is exactly at its bound (42 bytes) and is judged on its content');
  t.same(outcomes([...stream].map((b) => Buffer.from([b]))), whole, 'byte by byte: the same');
  t.same(outcomes([stream.subarray(0, 2), stream.subarray(2)]), whole, 'split between CR and LF: the same');
  t.same(outcomes([Buffer.from(':\r'), Buffer.from('\n:\r'), Buffer.from('\n'), stream.subarray(3)]), whole, 'two such comments: the same');
});

t.test('npm run fuzz: the final line, exit 0 without violations, exit 2 on bad arguments', async (t) => {
  const run = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'scripts/fuzz.ts', ...args], { encoding: 'utf8', timeout: 60_000 });
  const ok = run(['--runs', '101', '--seed', '5', '--workers', '2']);
  t.equal(ok.status, 0, ok.stderr);
  t.match(ok.stdout, /fuzz: 101 runs \(normalizer 51, relay 50\), seed 5, 2 worker\(s\)/);
  t.match(ok.stdout.trim().split('\n').at(-1), /^fuzz: 101 runs \(normalizer 51, relay 50\) in [\d.]+ s: 0 invariant violations$/);
  const bad = run(['--runs', 'many']);
  t.equal(bad.status, 2);
  t.match(bad.stderr, /--runs must be an integer/);
});
