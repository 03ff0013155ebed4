/**
 * Whatever bytes a remote streams and however the network chunks them, the
 * caller's output is a sequence of well-formed `data: <json>\n\n` events, each
 * a valid bounded envelope with the caller's id, with at most one error event
 * and only as the last one; and chunking never changes the output.
 */
import fc from 'fast-check';
import t from 'tap';
import { builtinLimits } from '../../src/config/defaults.js';
import type { NormalizePolicy } from '../../src/envelope/normalize.js';
import { EventRelayCore, type CoreOptions, type OutputEvent } from '../../src/stream/event-core.js';
import { callerIdArb, cutAt, envelopeViolations, hostileTextArb, nearValidBodyArb } from '../support/envelope-invariants.js';

const EOLS = ['\n', '\r\n', '\r'] as const;

const validResultArb = fc
  .tuple(fc.oneof(fc.integer(), fc.string({ maxLength: 8 })), fc.jsonValue({ maxDepth: 4 }), fc.boolean())
  .map(([id, result, pretty]) => JSON.stringify({ jsonrpc: '2.0', id, result }, null, pretty ? 2 : undefined));

const payloadArb = fc.oneof(
  { weight: 12, arbitrary: validResultArb },
  { weight: 2, arbitrary: nearValidBodyArb.map((b) => b.toString('utf8')) },
  { weight: 1, arbitrary: hostileTextArb },
);

/** One block of an SSE stream as a list of lines; the blank line that ends an event is added by the serializer. */
const blockArb: fc.Arbitrary<string[]> = fc.oneof(
  { weight: 6, arbitrary: payloadArb.map((p) => p.split(/\r\n|\r|\n/).map((l) => `data: ${l}`)) },
  { weight: 1, arbitrary: payloadArb.map((p) => ['event: error', ...p.split(/\r\n|\r|\n/).map((l) => `data:${l}`)]) },
  { weight: 1, arbitrary: fc.constantFrom<string[]>([': keep-alive'], [':'], ['id: 7', 'retry: 100'], ['event: status']) },
);

const streamArb = fc
  .record({
    blocks: fc.array(fc.tuple(blockArb, fc.constantFrom(...EOLS)), { maxLength: 8 }),
    bom: fc.boolean(),
    tail: fc.oneof(fc.constant(''), fc.constant('data: {"jsonrpc":"2.0"'), fc.constant('data: x\n')),
  })
  .map(({ blocks, bom, tail }) => {
    const body = blocks.map(([lines, eol]) => lines.map((l) => l + eol).join('') + eol).join('');
    return Buffer.from((bom ? '\ufeff' : '') + body + tail, 'utf8');
  });

// Small bounds make the stream end early; loose ones let the good events through: both matter.
const loose = <T>(tight: fc.Arbitrary<T>, free: T) => fc.oneof(tight, fc.constant(free));
const limitsArb = fc.record({
  maxEventBytes: loose(fc.integer({ min: 64, max: 4096 }), 1 << 20),
  maxStreamBytes: loose(fc.integer({ min: 64, max: 20_000 }), 1 << 24),
  maxStreamEvents: loose(fc.integer({ min: 1, max: 10 }), 1000),
  maxErrorMessageBytes: fc.integer({ min: 16, max: 300 }),
  maxJsonDepth: fc.integer({ min: 2, max: 32 }),
});

function drive(opts: CoreOptions, chunks: Buffer[]): OutputEvent[] {
  const core = new EventRelayCore(opts);
  const out = chunks.flatMap((c) => core.push(c));
  out.push(...core.end());
  if (!core.finished) throw new Error('core not finished after end()');
  return out;
}

t.test('any stream, any chunking: well-formed bounded envelopes, at most one error and only last', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(
      streamArb,
      fc.array(fc.nat(), { maxLength: 40 }),
      callerIdArb,
      limitsArb,
      fc.boolean(),
      (stream, cuts, callerId, limits, keep) => {
        const remote = { name: 'weather', keepRemoteErrorData: keep, limits: { ...builtinLimits, ...limits } };
        const opts: CoreOptions = { callerId, remote, httpStatus: 200 };
        const policy: NormalizePolicy = {
          remote: 'weather',
          maxErrorMessageBytes: limits.maxErrorMessageBytes,
          maxJsonDepth: limits.maxJsonDepth,
          keepRemoteErrorData: keep,
        };
        const whole = drive(opts, [stream]);
        const pieces = drive(opts, cutAt(stream, cuts));
        const bytewise = stream.length < 4000 ? drive(opts, [...stream].map((b) => Buffer.from([b]))) : pieces;
        if (JSON.stringify(pieces.map((e) => e.text)) !== JSON.stringify(whole.map((e) => e.text))) return false;
        if (JSON.stringify(bytewise.map((e) => e.text)) !== JSON.stringify(whole.map((e) => e.text))) return false;

        const idBytes = Buffer.byteLength(JSON.stringify(callerId));
        whole.forEach((event, i) => {
          if (!/^data: [^\r\n]*\n\n$/.test(event.text)) throw new Error(`not one well-formed event: ${JSON.stringify(event.text)}`);
          if (event.text !== `data: ${event.json}\n\n`) throw new Error('text and json disagree');
          const problems = envelopeViolations({ json: event.json, outcome: event.outcome }, { callerId, status: 200, policy });
          if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${event.json.slice(0, 500)}`);
          const isError = event.outcome !== 'ok';
          const last = i === whole.length - 1;
          if (isError && !last) throw new Error('error event before the end');
          if (event.final !== isError) throw new Error('final flag does not match the error');
          if (!isError && Buffer.byteLength(event.json) > limits.maxEventBytes + idBytes + 64) throw new Error('result event over the bound');
        });
        checked++;
        return true;
      },
    ),
    { numRuns: 400 },
  );
  t.equal(checked, 400);
});
