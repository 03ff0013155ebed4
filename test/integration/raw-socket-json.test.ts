/**
 * Hostile upstreams at the socket level, part 4: JSON edge cases inside an
 * otherwise well-framed 200 reply. The HTTP exchange is correct, so the
 * connection may be reused; what matters is the envelope. A valid result is
 * spliced byte for byte, so odd-but-valid numbers reach the caller unchanged.
 */
import t from 'tap';
import { MARK, MAX_JSON_DEPTH, runCase, startRawSuite, type CaseSpec } from '../support/raw-socket-harness.js';
import { httpResponse } from '../support/raw-upstream.js';

const reply = (text: string | Buffer): Buffer => httpResponse(text);
const withResult = (resultJson: string): Buffer => reply(`{"jsonrpc":"2.0","id":1,"result":${resultJson}}`);
const withMark = (bytes: number[]): Buffer =>
  reply(Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"id":"${MARK}`), Buffer.from(bytes), Buffer.from('"}}')]));

/** Nesting inside `result`, so that the whole body is `levels + 1` deep. */
const nested = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;

const rejected: CaseSpec[] = [
  { name: 'invalid-utf8-byte', script: [{ write: withMark([0xff]) }], expect: 'INVALID_UTF8', httpStatus: 200 },
  { name: 'overlong-utf8', script: [{ write: withMark([0xc0, 0xaf]) }], expect: 'INVALID_UTF8', httpStatus: 200 },
  { name: 'utf8-encoded-surrogate', script: [{ write: withMark([0xed, 0xa0, 0x80]) }], expect: 'INVALID_UTF8', httpStatus: 200 },
  { name: 'truncated-utf8-sequence', script: [{ write: withMark([0xe2, 0x82]) }], expect: 'INVALID_UTF8', httpStatus: 200 },
  { name: 'lone-high-surrogate-escape', script: [{ write: withResult(`{"id":"${MARK}\\ud800"}`) }], expect: 'INVALID_JSON', httpStatus: 200 },
  { name: 'lone-low-surrogate-escape', script: [{ write: withResult(`{"id":"\\udc00${MARK}"}`) }], expect: 'INVALID_JSON', httpStatus: 200 },
  // 200 KB of brackets: on a remote whose size cap lets it through to the depth check.
  { name: 'nesting-100000-deep', remote: 'roomy' as const, script: [{ write: withResult(`{"id":"${MARK}","x":${nested(100_000)}}`) }], expect: 'JSON_TOO_DEEP', httpStatus: 200 },
  { name: 'nesting-one-over-max-depth', script: [{ write: withResult(nested(MAX_JSON_DEPTH)) }], expect: 'JSON_TOO_DEEP', httpStatus: 200 },
  { name: 'duplicate-id', script: [{ write: reply(`{"jsonrpc":"2.0","id":1,"id":"${MARK}","result":{}}`) }], expect: 'INVALID_RESPONSE', httpStatus: 200 },
  { name: 'duplicate-result', script: [{ write: reply(`{"jsonrpc":"2.0","id":1,"result":{"a":"${MARK}"},"result":{"b":1}}`) }], expect: 'INVALID_RESPONSE', httpStatus: 200 },
  {
    name: 'duplicate-error',
    script: [{ write: reply(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x"},"error":{"code":-32603,"message":"${MARK}"}}`) }],
    expect: 'INVALID_RESPONSE',
    httpStatus: 200,
  },
  { name: 'escaped-duplicate-result', script: [{ write: reply(`{"jsonrpc":"2.0","id":1,"result":1,"\\u0072esult":"${MARK}"}`) }], expect: 'INVALID_RESPONSE', httpStatus: 200 },
  { name: 'proto-key-top-level', script: [{ write: reply(`{"jsonrpc":"2.0","id":1,"__proto__":{"polluted":"${MARK}"},"result":{}}`) }], expect: 'UNSAFE_JSON', httpStatus: 200 },
  { name: 'proto-key-in-result', script: [{ write: withResult(`{"a":{"__proto__":{"polluted":"${MARK}"}}}`) }], expect: 'UNSAFE_JSON', httpStatus: 200 },
  { name: 'escaped-proto-key', script: [{ write: withResult(`{"\\u005f_proto__":{"polluted":"${MARK}"}}`) }], expect: 'UNSAFE_JSON', httpStatus: 200 },
  { name: 'constructor-prototype', script: [{ write: withResult(`{"constructor":{"prototype":{"polluted":"${MARK}"}}}`) }], expect: 'UNSAFE_JSON', httpStatus: 200 },
  { name: 'nan-literal', script: [{ write: withResult(`{"id":"${MARK}","n":NaN}`) }], expect: 'INVALID_JSON', httpStatus: 200 },
].map((c) => ({ ...c, connection: 'may-reuse' as const }));

t.test('JSON the gateway refuses', async (t) => {
  const suite = await startRawSuite(t);
  for (const spec of rejected) await t.test(spec.name, async (t) => void (await runCase(t, suite, spec)));
  t.notOk(Object.hasOwn(Object.prototype, 'polluted'), 'no prototype was polluted');
});

/** Valid JSON that is passed through verbatim: `fragment` must appear unchanged in the caller's body. */
const verbatim: { name: string; fragment: string }[] = [
  { name: 'number-5000-digits', fragment: `{"big":${'9'.repeat(5_000)}}` },
  { name: 'number-1e400', fragment: '{"huge":1e400,"tiny":1e-400,"neg":-1E+400}' },
  { name: 'negative-zero-and-fractions', fragment: '[-0,0.10,1.5e+3]' },
  { name: 'surrogate-pair-escape', fragment: '{"emoji":"\\ud83d\\ude00"}' },
  { name: 'nesting-at-max-depth', fragment: nested(MAX_JSON_DEPTH - 1) },
  { name: 'constructor-key-alone', fragment: '{"constructor":{"name":"x"},"prototype":1}' },
];

t.test('valid JSON that passes byte for byte', async (t) => {
  const suite = await startRawSuite(t);
  for (const { name, fragment } of verbatim) {
    await t.test(name, async (t) => {
      const { reply: out } = await runCase(t, suite, { name, script: [{ write: withResult(fragment) }], expect: 'ok', connection: 'may-reuse' });
      t.ok(out.text.includes(`"result":${fragment}`), 'the result bytes are unchanged');
      t.doesNotThrow(() => JSON.parse(out.text), 'the reply is still valid JSON');
    });
  }
});
