/**
 * A plain success kept as bytes (policy keepBytes, normalize.ts plainResultBytes): whatever the body, the envelope
 * is the one the text path makes (same json, outcome and result), and when it is kept as bytes, `wire` is exactly
 * that json's UTF-8 bytes.
 */
import t from 'tap';
import fc from 'fast-check';
import { normalizeReply, withRedactionCount, type NormalizePolicy, type Normalized } from '../../src/envelope/normalize.js';
import { callerIdArb, nearValidBodyArb, policyArb, rawBodyArb, statusArb } from '../support/envelope-invariants.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';
import type { JsonRpcId } from '../../src/envelope/envelope.js';
import { recognizeResultEnvelope } from '../../src/envelope/json-recognizers.js';

const params = fuzzParams(2000);
const holds = holdsWith(params);

/** Every difference between the envelope kept as bytes and the text path's, and between `wire` and `json`. */
function differences(body: Buffer, status: number, callerId: JsonRpcId, policy: NormalizePolicy): string[] {
  const asText = normalizeReply({ status, body }, callerId, policy);
  const asBytes = normalizeReply({ status, body }, callerId, { ...policy, keepBytes: true });
  return compare(asText, asBytes);
}

function compare(asText: Normalized, asBytes: Normalized): string[] {
  const problems: string[] = [];
  if (asBytes.json !== asText.json) problems.push(`json differs:\n${asBytes.json.slice(0, 300)}\n${asText.json.slice(0, 300)}`);
  if (asBytes.outcome !== asText.outcome) problems.push(`outcome ${asBytes.outcome}, text path ${asText.outcome}`);
  if (JSON.stringify(asBytes.result) !== JSON.stringify(asText.result)) problems.push('result differs');
  if (asBytes.wire !== undefined) {
    if (asBytes.wire !== Buffer.from(asText.json).toString('latin1')) problems.push('wire is not the json\'s UTF-8 bytes');
    if (asBytes.outcome !== 'ok') problems.push(`wire on a ${asBytes.outcome}`);
  }
  return problems;
}

// Text well past ASCII: accents, a dash outside latin1, CJK, an astral emoji (four UTF-8 bytes), escapes of them.
const unicodeText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.constantFrom('résumé — naïve', '日本語のテキスト', 'emoji 😀 here', '\u00ff\u0100\u07ff\u0800\uffff', 'é'),
);
const unicodeResult = fc.jsonValue({ maxDepth: 4 }).chain((value) =>
  fc.record({ value: fc.constant(value), text: unicodeText, key: unicodeText }).map(({ value: v, text, key }) => ({ [key]: text, kind: 'task', v })),
);

t.test('property: a success with text of every kind: kept as bytes, the same envelope', async (t) => {
  holds(
    t,
    fc.property(unicodeResult, callerIdArb, fc.constantFrom('1', '"up"', 'null', '"ïd"'), fc.boolean(), (result, callerId, upstreamId, escaped) => {
      let resultJson = JSON.stringify(result);
      // The same characters as \u escapes: ASCII on the wire, decoded by whoever reads the value.
      if (escaped) resultJson = resultJson.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      const body = Buffer.from(`{"jsonrpc":"2.0","id":${upstreamId},"result":${resultJson}}`);
      const policy: NormalizePolicy = { remote: 'r', maxErrorMessageBytes: 64, maxJsonDepth: 64, keepRemoteErrorData: false };
      const problems = differences(body, 200, callerId, policy);
      const kept = normalizeReply({ status: 200, body }, callerId, { ...policy, keepBytes: true });
      // Whatever the text path splices without parsing (the recognizer takes it) is kept as bytes.
      if (kept.wire === undefined && recognizeResultEnvelope(body, 64)) problems.push('a plain success was not kept as bytes');
      if (problems.length > 0) throw new Error(problems.join('; '));
    }),
  );
});

t.test('property: arbitrary bytes: kept as bytes or not, the same envelope', async (t) => {
  holds(
    t,
    fc.property(statusArb, rawBodyArb, callerIdArb, policyArb, (status, body, callerId, policy) => {
      const problems = differences(body, status, callerId, policy);
      if (problems.length > 0) throw new Error(problems.join('; '));
    }),
  );
});

t.test('property: near-valid JSON-RPC bodies: kept as bytes or not, the same envelope', async (t) => {
  holds(
    t,
    fc.property(statusArb, nearValidBodyArb, callerIdArb, policyArb, (status, body, callerId, policy) => {
      const problems = differences(body, status, callerId, policy);
      if (problems.length > 0) throw new Error(problems.join('; '));
    }),
  );
});

t.test('what is never kept as bytes, and what is', async (t) => {
  const policy: NormalizePolicy = { remote: 'r', maxErrorMessageBytes: 64, maxJsonDepth: 64, keepRemoteErrorData: false, keepBytes: true };
  const success = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"text":"café — 😀"}}');

  const kept = normalizeReply({ status: 200, body: success }, 'ïd', policy);
  t.equal(kept.wire, Buffer.from('{"jsonrpc":"2.0","id":"ïd","result":{"text":"café — 😀"}}').toString('latin1'), 'the caller id in UTF-8, the result bytes as they came');
  t.equal(kept.json, '{"jsonrpc":"2.0","id":"ïd","result":{"text":"café — 😀"}}', 'json decodes the same bytes');
  t.same(kept.result, { text: 'café — 😀' }, 'the result value decodes the result bytes');

  t.equal(normalizeReply({ status: 200, body: success }, 1, { ...policy, keepBytes: false }).wire, undefined, 'not asked for: text');
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), success]);
  const afterBom = normalizeReply({ status: 200, body: bom }, 1, policy);
  t.equal(afterBom.wire, undefined, 'a byte-order mark: the decoder drops it, so the text path answers');
  t.equal(afterBom.outcome, 'ok');
  const badUtf8 = Buffer.concat([success.subarray(0, 40), Buffer.from([0xc3, 0x28]), success.subarray(40)]);
  t.equal(normalizeReply({ status: 200, body: badUtf8 }, 1, policy).outcome, 'INVALID_UTF8', 'invalid UTF-8 is refused as before');
  const surrogate = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"text":"\xed\xa0\x80"}}', 'latin1');
  t.equal(normalizeReply({ status: 200, body: surrogate }, 1, policy).outcome, 'INVALID_UTF8', 'an encoded surrogate is not UTF-8');
  t.equal(normalizeReply({ status: 500, body: success }, 1, policy).wire, undefined, 'not 2xx: the full path');
  const error = Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone — é"}}');
  t.equal(normalizeReply({ status: 200, body: error }, 1, policy).wire, undefined, 'an error: the full path');
  const redactor = { mayHold: () => false } as unknown as NonNullable<NormalizePolicy['redactor']>;
  t.equal(normalizeReply({ status: 200, body: success }, 1, { ...policy, redactor }).wire, undefined, 'a remote with credentials: its probe reads text');

  const counted = withRedactionCount(kept, 2);
  t.equal(counted.wire, undefined, 'an envelope made from one kept as bytes has no wire');
  t.equal(counted.json, kept.json);
  t.same(counted.result, kept.result);
  t.equal(counted.redactions, 2);
});
