/**
 * Property: whatever JSON a remote sends, with a credential of the gateway
 * embedded in any string in any form the redactor claims to cover, the
 * caller's envelope never holds it after decoding, and a result keeps its
 * shape. The oracle is independent of the redactor: it sanitizes each
 * decoded string, removes whitespace, and looks for the credential in the
 * text, in its percent-decoding and in every base64 decoding of it.
 */
import t from 'tap';
import fc from 'fast-check';
import sjson from 'secure-json-parse';
import { normalizeReply, type NormalizePolicy } from '../../src/envelope/normalize.js';
import { Redactor } from '../../src/envelope/redact.js';
import { envelopeViolations } from '../support/envelope-invariants.js';
import { reveals, stringsOf as strings } from '../support/secret-oracle.js';
import { cleanText } from '../../src/envelope/sanitize.js';
import { fuzzParams, holdsWith } from '../support/fuzz.js';

const params = fuzzParams(1000);

const holds = holdsWith(params);

/** Credentials as real ones look: URL-safe and base64 alphabets, 8 to 40 characters ('x' stays free for padding). */
const secretArb = fc.stringMatching(/^[A-Za-wyz0-9._~+/=-]{8,40}$/);

/** What a reader does not see: controls, format characters, whitespace, whole terminal sequences. */
const IGNORABLES = ['\u200b', '\u0000', '\n', '\t', ' ', '\u00a0', '\u00ad', '\ufeff', '\u202e', '\u2066', '\u{E0041}', '\u001b[31m', '\u001b]0;x\u0007', '\u001b]8;;u\u001b\\', '\u009b2J', '\u001bc'];

type Kind = 'raw' | 'percent' | 'percent-lower' | 'base64' | 'base64url';

const formArb = fc.record({
  kind: fc.constantFrom<Kind>('raw', 'raw', 'percent', 'percent-lower', 'base64', 'base64url'),
  prefix: fc.constantFrom('', 'u', 'us', 'user:'),
  inserts: fc.array(fc.tuple(fc.nat(), fc.constantFrom(...IGNORABLES)), { maxLength: 4 }),
  /** Which characters the JSON text spells as \u00XX (bit i for character i). */
  escapeMask: fc.nat(),
});

/** The text a remote puts into a string: the credential in one form, with invisible characters sprinkled in. */
type Form = typeof formArb extends fc.Arbitrary<infer F> ? F : never;

function render(secret: string, form: Form): string {
  let text = secret;
  switch (form.kind) {
    case 'percent': text = encodeURIComponent(secret); break;
    case 'percent-lower': text = encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()); break;
    case 'base64': text = Buffer.from(form.prefix + secret).toString('base64'); break;
    case 'base64url': text = Buffer.from(form.prefix + secret).toString('base64url'); break;
  }
  const units = [...text];
  for (const [at, what] of [...form.inserts].sort((a, b) => b[0] - a[0])) units.splice(at % (units.length + 1), 0, what);
  return units.join('');
}

/** JSON string content for `text`, some ASCII characters written as \u00XX. */
function jsonSpelling(text: string, mask: number): string {
  return [...text]
    .map((c, i) => {
      const code = c.codePointAt(0)!;
      if (code < 0x80 && (mask >> (i % 30)) & 1) return `\\u${code.toString(16).padStart(4, '0')}`;
      return JSON.stringify(c).slice(1, -1);
    })
    .join('');
}

const PLACEHOLDER = 'PLACEHOLDER_9F2C';

/** Puts the placeholder into the `pick`-th string of `value` (at `offset`), or wraps the value when it has none. */
function embed(value: unknown, pick: number, offset: number): unknown {
  const strings: { holder: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach((v, i) => (typeof v === 'string' ? strings.push({ holder: node, key: i }) : walk(v)));
    else if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) typeof v === 'string' ? strings.push({ holder: node as Record<string, unknown>, key: k }) : walk(v);
    }
  };
  const copy = JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
  if (typeof copy === 'string') return copy.slice(0, offset % (copy.length + 1)) + PLACEHOLDER + copy.slice(offset % (copy.length + 1));
  walk(copy);
  if (strings.length === 0) return { text: PLACEHOLDER, value: copy };
  const { holder, key } = strings[pick % strings.length]!;
  const s = (holder as Record<string | number, string>)[key]!;
  const at = offset % (s.length + 1);
  (holder as Record<string | number, string>)[key] = s.slice(0, at) + PLACEHOLDER + s.slice(at);
  return copy;
}

function sameShape(a: unknown, b: unknown): boolean {
  if (typeof a === 'string' || typeof b === 'string') return typeof a === typeof b;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameShape(v, b[i]));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameShape((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return Object.is(a, b) || a === b;
}

/** fast-check's JSON values include "__proto__" members and lone surrogates, which the normalizer refuses on purpose. */
function acceptable(json: string): boolean {
  try {
    sjson.parse(json, null, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return false;
  }
  return !/\\ud[89a-f]/i.test(json) && json.isWellFormed();
}

/** The first property's body; `redact: false` runs it without a redactor, to show the oracle can fail. */
function resultProperty(redact: boolean) {
  return fc.property(secretArb, fc.jsonValue({ maxDepth: 4 }), fc.nat(), fc.nat(), formArb, (secret, value, pick, offset, form) => {
    const policy: NormalizePolicy = { remote: 'r', maxErrorMessageBytes: 256, maxJsonDepth: 64, keepRemoteErrorData: false, ...(redact ? { redactor: new Redactor([secret]) } : {}) };
    const spelled = jsonSpelling(render(secret, form), form.escapeMask);
    const resultJson = JSON.stringify(embed(value, pick, offset)).replace(PLACEHOLDER, spelled);
    fc.pre(acceptable(resultJson));
    const sent = JSON.parse(resultJson) as unknown;
    fc.pre(reveals(strings(sent).join('\n'), secret)); // the generator did plant it (a base64 form may straddle)
    const out = normalizeReply({ status: 200, body: Buffer.from(`{"jsonrpc":"2.0","id":"up","result":${resultJson}}`) }, 7, policy);
    if (out.outcome !== 'ok') throw new Error(`outcome ${out.outcome} for ${resultJson}`);
    const received = (JSON.parse(out.json) as { result: unknown }).result;
    const leaked = strings(received).find((s) => reveals(s, secret));
    if (leaked !== undefined) throw new Error(`leaked in ${JSON.stringify(leaked)} (sent ${resultJson})`);
    if (out.json.includes(secret)) throw new Error('raw bytes hold it');
    if (!sameShape(sent, received)) throw new Error(`shape changed: ${resultJson} → ${JSON.stringify(received)}`);
    if (!out.redactions) throw new Error('not counted');
  });
}

t.test('property: a credential in any string of a result, in any covered form, never reaches the caller; the shape stays', async (t) => {
  holds(t, resultProperty(true));
});

t.test('the oracle can fail: without a redactor the same property finds a leak', async (t) => {
  const run = fc.check(resultProperty(false), { numRuns: 50, seed: 1 });
  t.ok(run.failed, 'a counterexample is found');
});

t.test('property: a credential in an error message or kept data, cut anywhere by the bound, is never even half-shown', async (t) => {
  holds(
    t,
    fc.property(secretArb, fc.nat({ max: 300 }), fc.integer({ min: 16, max: 400 }), formArb, fc.boolean(), (secret, padding, bound, form, inData) => {
      const redactor = new Redactor([secret]);
      const policy: NormalizePolicy = { remote: 'r', maxErrorMessageBytes: bound, maxJsonDepth: 64, keepRemoteErrorData: true, redactor };
      const planted = `${'x'.repeat(padding)}${jsonSpelling(render(secret, form), form.escapeMask)} tail`;
      const body = inData
        ? `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"m","data":[{"@type":"t.example/X","detail":"${planted}"}]}}`
        : `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"${planted}"}}`;
      const out = normalizeReply({ status: 200, body: Buffer.from(body) }, 1, policy);
      const problems = envelopeViolations(out, { callerId: 1, status: 200, policy });
      if (problems.length > 0) throw new Error(problems.join('; '));
      const error = (JSON.parse(out.json) as { error: { message: string; data: unknown[] } }).error;
      // Every string of the error: the message, the kept detail and whatever else error.data holds.
      const detail = error.data.find((d) => (d as { '@type'?: string })['@type'] === 't.example/X');
      if (inData && detail === undefined) throw new Error('the kept detail is missing');
      for (const s of [error.message, ...strings(error.data)]) if (reveals(s, secret)) throw new Error(`leaked: ${s}`);
      for (const s of inData ? [String((detail as { detail?: unknown }).detail)] : [error.message]) {
        // Cut by the bound: no tail of the padding may be followed by the start of the credential.
        const seen = cleanText(s).replace(/\s+/g, '');
        const rest = seen.replace(/^x*/, '');
        if (form.kind === 'raw' && rest.length >= 2 && secret.startsWith(rest) && !rest.startsWith('tail')) throw new Error(`half-shown: ${s}`);
      }
    }),
  );
});
