/**
 * The two fuzz targets behind `npm run fuzz` and its short CI version:
 * the unary normalizer (whatever bytes and status a remote sends, one valid
 * envelope with the caller's id, checked by test/support/envelope-invariants.ts)
 * and the SSE relay core (whatever stream and however it is chunked, well-formed
 * bounded events, at most one error and only last, the same output for every
 * chunking). Runs go in seeded batches so a long run can report progress and a
 * failure names the seed that replays it.
 */
import fc from 'fast-check';
import { builtinLimits } from '../src/config/defaults.js';
import type { JsonRpcId } from '../src/envelope/envelope.js';
import { normalizeReply, type Normalized, type NormalizePolicy, type UpstreamReply } from '../src/envelope/normalize.js';
import { EventRelayCore, type CoreOptions, type OutputEvent, type RelayCore } from '../src/stream/event-core.js';
import {
  cutAt,
  callerIdArb,
  envelopeViolations,
  hostileTextArb,
  nearValidBodyArb,
  nonJsonBodyArb,
  policyArb,
  rawBodyArb,
  statusArb,
} from '../test/support/envelope-invariants.js';

export type TargetName = 'normalizer' | 'relay';

export interface TargetResult {
  readonly target: TargetName;
  readonly runs: number;
  readonly violations: number;
  /** fast-check's report for the first failure: the shrunk counterexample, its error, the seed and path. */
  readonly report?: string;
}

export interface FuzzOptions {
  readonly seed?: number;
  /** Runs per seeded batch (progress is reported after each). */
  readonly batch?: number;
  readonly onProgress?: (target: TargetName, done: number, total: number) => void;
  /** Replaceable for the harness's own test (it must be able to fail). */
  readonly normalize?: (reply: UpstreamReply, callerId: JsonRpcId, policy: NormalizePolicy) => Normalized;
  readonly relayCore?: (opts: CoreOptions) => RelayCore;
}

// ------------------------------------------------------------- normalizer

type BodyCase = { kind: 'raw' | 'near-valid'; body: Buffer } | { kind: 'non-json'; body: Buffer; marker: string };

const bodyCaseArb: fc.Arbitrary<BodyCase> = fc.oneof(
  rawBodyArb.map((body): BodyCase => ({ kind: 'raw', body })),
  { weight: 3, arbitrary: nearValidBodyArb.map((body): BodyCase => ({ kind: 'near-valid', body })) },
  nonJsonBodyArb.map(({ body, marker }): BodyCase => ({ kind: 'non-json', body, marker })),
);

function normalizerProperty(normalize: NonNullable<FuzzOptions['normalize']>) {
  return fc.property(statusArb, bodyCaseArb, callerIdArb, policyArb, (status, input, callerId, policy) => {
    const out = normalize({ status, body: input.body }, callerId, policy);
    const forbidden = input.kind === 'non-json' ? [input.marker] : [];
    const problems = envelopeViolations(out, { callerId, status, policy, forbidden });
    if (input.kind === 'non-json' && (out.outcome === 'ok' || out.outcome === 'REMOTE_ERROR')) problems.push(`non-JSON body gave ${out.outcome}`);
    if (problems.length > 0) throw new Error(`${problems.join('; ')}\noutput: ${out.json.slice(0, 500)}`);
  });
}

// ------------------------------------------------------------------ relay

const EOLS = ['\n', '\r\n', '\r'] as const;

const resultPayloadArb = fc
  .tuple(fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)), fc.jsonValue({ maxDepth: 3 }), fc.boolean())
  .map(([id, result, pretty]) => JSON.stringify({ jsonrpc: '2.0', id, result }, null, pretty ? 1 : undefined));

const errorPayloadArb = fc
  .tuple(fc.integer({ min: -32768, max: -32000 }), hostileTextArb)
  .map(([code, message]) => JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message } }));

/** What one upstream event carries in `data`; may span lines. */
const dataArb = fc.oneof(
  { weight: 10, arbitrary: resultPayloadArb },
  { weight: 2, arbitrary: errorPayloadArb },
  { weight: 2, arbitrary: nearValidBodyArb.map((b) => b.toString('utf8')) },
  { weight: 1, arbitrary: hostileTextArb },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a).toString('latin1')) },
);

interface UpstreamEvent {
  readonly data: string;
  readonly name?: string;
  readonly id?: string;
  readonly comment?: string;
  /** `data:x` instead of `data: x`. */
  readonly tight: boolean;
  readonly eol: (typeof EOLS)[number];
}

const eventArb: fc.Arbitrary<UpstreamEvent> = fc.record(
  {
    data: dataArb,
    name: fc.constantFrom('message', 'error', 'status', ''),
    id: fc.string({ maxLength: 6 }),
    comment: fc.constantFrom('', 'keep-alive', ' ping'),
    tight: fc.boolean(),
    eol: fc.constantFrom(...EOLS),
  },
  { requiredKeys: ['data', 'tight', 'eol'] },
);

function serialize(e: UpstreamEvent): string {
  const lines: string[] = [];
  if (e.comment !== undefined) lines.push(`:${e.comment}`);
  if (e.name !== undefined) lines.push(`event: ${e.name}`);
  if (e.id !== undefined) lines.push(`id: ${e.id.replace(/[\r\n]/g, '')}`);
  for (const line of e.data.split(/\r\n|\r|\n/)) lines.push(`data:${e.tight ? '' : ' '}${line}`);
  return lines.map((l) => l + e.eol).join('') + e.eol;
}

const streamArb = fc
  .record({
    events: fc.array(eventArb, { maxLength: 10 }),
    bom: fc.boolean(),
    // How the stream stops: cleanly, mid-event, or with stray bytes.
    tail: fc.constantFrom('', '', '', 'data: {"jsonrpc":"2.0"', 'data: x\n', ':\n', 'event: error\n'),
  })
  .map(({ events, bom, tail }) => Buffer.from((bom ? '\ufeff' : '') + events.map(serialize).join('') + tail, 'utf8'));

const either = <T>(tight: fc.Arbitrary<T>, free: T) => fc.oneof(tight, fc.constant(free));
const limitsArb = fc.record({
  maxEventBytes: either(fc.integer({ min: 32, max: 2048 }), 1 << 20),
  maxStreamBytes: either(fc.integer({ min: 32, max: 8192 }), 1 << 24),
  maxStreamEvents: either(fc.integer({ min: 1, max: 8 }), 1000),
  maxErrorMessageBytes: fc.integer({ min: 16, max: 300 }),
  maxJsonDepth: fc.integer({ min: 2, max: 32 }),
});

function drive(make: NonNullable<FuzzOptions['relayCore']>, opts: CoreOptions, chunks: readonly Buffer[], ending: 'end' | 'broken'): OutputEvent[] {
  const core = make(opts);
  const out = chunks.flatMap((c) => core.push(c));
  out.push(...(ending === 'end' ? core.end() : core.broken()));
  if (!core.finished) throw new Error(`core not finished after ${ending}()`);
  if (core.push(Buffer.from('data: {}\n\n')).length > 0 || core.end().length > 0) throw new Error('core wrote after it finished');
  return out;
}

function relayViolations(events: readonly OutputEvent[], callerId: JsonRpcId, policy: NormalizePolicy, maxEventBytes: number): string[] {
  const problems: string[] = [];
  const idBytes = Buffer.byteLength(JSON.stringify(callerId));
  events.forEach((event, i) => {
    const at = `event ${i + 1}/${events.length}`;
    if (!/^data: [^\r\n]*\n\n$/.test(event.text)) problems.push(`${at} is not one well-formed event: ${JSON.stringify(event.text.slice(0, 200))}`);
    if (event.text !== `data: ${event.json}\n\n`) problems.push(`${at}: text and json disagree`);
    for (const p of envelopeViolations({ json: event.json, outcome: event.outcome }, { callerId, status: 200, policy })) problems.push(`${at}: ${p}`);
    const isError = event.outcome !== 'ok';
    if (isError && i !== events.length - 1) problems.push(`${at}: an error event before the end`);
    if (event.final !== isError) problems.push(`${at}: final flag does not match the outcome ${event.outcome}`);
    // A result may grow by the caller's id replacing the remote's, never by more.
    if (!isError && Buffer.byteLength(event.json) > maxEventBytes + idBytes + 64) problems.push(`${at}: result over the event bound`);
  });
  return problems;
}

function relayProperty(make: NonNullable<FuzzOptions['relayCore']>) {
  return fc.property(
    streamArb,
    fc.array(fc.nat(), { maxLength: 24 }),
    callerIdArb,
    limitsArb,
    fc.boolean(),
    fc.constantFrom<'end' | 'broken'>('end', 'end', 'end', 'broken'),
    (stream, cuts, callerId, limits, keep, ending) => {
      const opts: CoreOptions = { callerId, remote: { name: 'fuzz', keepRemoteErrorData: keep, limits: { ...builtinLimits, ...limits } }, httpStatus: 200 };
      const policy: NormalizePolicy = { remote: 'fuzz', maxErrorMessageBytes: limits.maxErrorMessageBytes, maxJsonDepth: limits.maxJsonDepth, keepRemoteErrorData: keep };
      const whole = drive(make, opts, [stream], ending);
      const problems = relayViolations(whole, callerId, policy, limits.maxEventBytes);
      const texts = JSON.stringify(whole.map((e) => e.text));
      if (JSON.stringify(drive(make, opts, cutAt(stream, cuts), ending).map((e) => e.text)) !== texts) problems.push('another chunking changed the output');
      if (stream.length <= 1024 && JSON.stringify(drive(make, opts, [...stream].map((b) => Buffer.from([b])), ending).map((e) => e.text)) !== texts) {
        problems.push('byte-at-a-time changed the output');
      }
      if (ending === 'broken' && whole.at(-1)?.final !== true) problems.push('a broken upstream did not end with a final event');
      if (problems.length > 0) throw new Error(`${problems.join('; ')}\nfirst events: ${texts.slice(0, 600)}`);
    },
  );
}

// ------------------------------------------------------------------ runner

interface BatchOutcome {
  readonly numRuns: number;
  /** Set when the batch failed. */
  readonly report?: string;
}

function outcomeOf<Ts>(details: fc.RunDetails<Ts>): BatchOutcome {
  if (!details.failed) return { numRuns: details.numRuns };
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  return { numRuns: details.numRuns, report: `${fc.defaultReportMessage(details) ?? 'property failed'}\nviolation: ${error}` };
}

/** Runs `runs` cases of one target in seeded batches; stops at the first violation. */
export function fuzzTarget(target: TargetName, runs: number, options: FuzzOptions = {}): TargetResult {
  const normalizer = target === 'normalizer' ? normalizerProperty(options.normalize ?? normalizeReply) : undefined;
  const relay = target === 'relay' ? relayProperty(options.relayCore ?? ((opts) => new EventRelayCore(opts))) : undefined;
  const check = (params: { numRuns: number; seed: number }): BatchOutcome =>
    normalizer ? outcomeOf(fc.check(normalizer, params)) : outcomeOf(fc.check(relay!, params));
  const batch = Math.max(1, options.batch ?? 10_000);
  const baseSeed = options.seed ?? Date.now() ^ (Math.random() * 0x7fffffff);
  let done = 0;
  for (let i = 0; done < runs; i++) {
    const numRuns = Math.min(batch, runs - done);
    const outcome = check({ numRuns, seed: (baseSeed + i) | 0 });
    if (outcome.report !== undefined) return { target, runs: done + outcome.numRuns, violations: 1, report: outcome.report };
    done += numRuns;
    options.onProgress?.(target, done, runs);
  }
  return { target, runs: done, violations: 0 };
}

export interface FuzzSummary {
  readonly runs: number;
  readonly violations: number;
  readonly results: readonly TargetResult[];
  readonly seconds: number;
}

/** Splits `runs` evenly between the normalizer and the relay core. */
export function runFuzz(runs: number, options: FuzzOptions = {}): FuzzSummary {
  const started = performance.now();
  const normalizerRuns = Math.ceil(runs / 2);
  const results = [fuzzTarget('normalizer', normalizerRuns, options), fuzzTarget('relay', runs - normalizerRuns, options)];
  return {
    runs: results.reduce((n, r) => n + r.runs, 0),
    violations: results.reduce((n, r) => n + r.violations, 0),
    results,
    seconds: (performance.now() - started) / 1000,
  };
}
