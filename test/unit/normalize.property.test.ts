import t from 'tap';
import fc from 'fast-check';
import sjson from 'secure-json-parse';
import { normalizeReply } from '../../src/envelope/normalize.js';
import {
  callerIdArb,
  envelopeViolations,
  nearValidBodyArb,
  nonJsonBodyArb,
  policyArb,
  rawBodyArb,
  statusArb,
} from '../support/envelope-invariants.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

// FUZZ_RUNS=200000 npm test -- test/unit/normalize.property.test.ts for a long run.
// FUZZ_SEED replays a failure fast-check reported.
const params = fuzzParams(2000);

/** fast-check throws with the shrunk counterexample; tap shows it as the failure. */
const holds = holdsWith(params);

t.test('property: arbitrary bytes always give a valid envelope', async (t) => {
  holds(
    t,
    fc.property(statusArb, rawBodyArb, callerIdArb, policyArb, (status, body, callerId, policy) => {
      const out = normalizeReply({ status, body }, callerId, policy);
      const problems = envelopeViolations(out, { callerId, status, policy });
      if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${out.json.slice(0, 500)}`);
    }),
  );
});

t.test('property: near-valid JSON-RPC bodies always give a valid envelope', async (t) => {
  holds(
    t,
    fc.property(statusArb, nearValidBodyArb, callerIdArb, policyArb, (status, body, callerId, policy) => {
      const out = normalizeReply({ status, body }, callerId, policy);
      const problems = envelopeViolations(out, { callerId, status, policy });
      if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${out.json.slice(0, 500)}`);
    }),
  );
});

t.test('property: nothing of a non-JSON body reaches the caller', async (t) => {
  holds(
    t,
    fc.property(statusArb, nonJsonBodyArb, callerIdArb, policyArb, (status, { body, marker }, callerId, policy) => {
      const out = normalizeReply({ status, body }, callerId, policy);
      const problems = envelopeViolations(out, { callerId, status, policy, forbidden: [marker] });
      if (out.outcome === 'ok' || out.outcome === 'REMOTE_ERROR') problems.push(`non-JSON body gave ${out.outcome}`);
      if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${out.json.slice(0, 500)}`);
    }),
  );
});

t.test('property: a valid 2xx success is spliced and keeps the caller id', async (t) => {
  holds(
    t,
    fc.property(
      fc.integer({ min: 200, max: 299 }),
      fc.jsonValue({ maxDepth: 5 }),
      callerIdArb,
      (status, result, callerId) => {
        const policy = { remote: 'r', maxErrorMessageBytes: 64, maxJsonDepth: 64, keepRemoteErrorData: false };
        const resultJson = JSON.stringify(result) ?? 'null';
        const body = Buffer.from(`{"jsonrpc":"2.0","id":"up","result":${resultJson}}`);
        const out = normalizeReply({ status, body }, callerId, policy);
        const problems = envelopeViolations(out, { callerId, status, policy });
        const expected = expectedOutcome(resultJson);
        if (out.outcome !== expected) problems.push(`outcome ${out.outcome}, expected ${expected}`);
        if (expected === 'ok' && out.json !== `{"jsonrpc":"2.0","id":${JSON.stringify(callerId)},"result":${resultJson}}`) problems.push('result not spliced verbatim');
        if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${out.json.slice(0, 500)}`);
      },
    ),
  );
});

/** What a valid 2xx envelope around this result must give; some results are refused on purpose. */
function expectedOutcome(resultJson: string): 'ok' | 'UNSAFE_JSON' | 'INVALID_JSON' {
  try {
    sjson.parse(resultJson, null, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return 'UNSAFE_JSON';
  }
  // JSON.stringify writes a lone surrogate as an escape; the normalizer refuses those.
  return hasLoneSurrogate(JSON.parse(resultJson)) ? 'INVALID_JSON' : 'ok';
}

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return !value.isWellFormed();
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([k, v]) => !k.isWellFormed() || hasLoneSurrogate(v));
  }
  return false;
}

t.test('the invariant checker rejects broken envelopes (it can fail)', async (t) => {
  const policy = { remote: 'r', maxErrorMessageBytes: 16, maxJsonDepth: 8, keepRemoteErrorData: false };
  const ctx = { callerId: 1, status: 200, policy };
  const info = '{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"REMOTE_ERROR","domain":"a2a-egress","metadata":{"remote":"r","httpStatus":"200"}}';
  const remote = (json: string) => envelopeViolations({ json, outcome: 'REMOTE_ERROR' }, ctx);
  t.same(remote(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"ok","data":[${info}]}}`), [], 'a valid envelope passes');
  t.ok(remote(`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"ok","data":[${info}]}}`).length > 0, 'wrong id');
  t.ok(remote(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"${'x'.repeat(17)}","data":[${info}]}}`).length > 0, 'message over the bound');
  t.ok(remote(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a\\u202eb","data":[${info}]}}`).length > 0, 'bidi in message');
  t.ok(remote(`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"ok","data":[${info}]}}`).length > 0, 'non-integer code');
  t.ok(remote(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"ok","data":[]}}`).length > 0, 'no ErrorInfo');
  t.ok(remote(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"ok","data":[${info.replace('"200"', '200')}]}}`).length > 0, 'non-string metadata');
  t.ok(remote(`{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"ok","data":[${info}]}}`).length > 0, 'both result and error');
  t.ok(envelopeViolations({ json: '{"jsonrpc":"2.0","id":1,"result":"SECRET"}', outcome: 'ok' }, { ...ctx, forbidden: ['SECRET'] }).length > 0, 'marker leak');
  t.ok(envelopeViolations({ json: '{"jsonrpc":"2.0","id":1,"result":1}', outcome: 'ok' }, { ...ctx, status: 500 }).length > 0, 'result on HTTP 500');
});
