/**
 * JSON text written by hand for the one-pass recognizers' properties (test/unit/caller-request.property.test.ts,
 * test/unit/http-json-body.property.test.ts): members may repeat, names may be escaped or special, spacing varies,
 * strings may be hostile, so the recognizers meet what the full checks refuse as well as what they accept.
 */
import fc from 'fast-check';
import { hostileTextArb } from './envelope-invariants.js';

const nameArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('message', 'messageId', 'role', 'parts', 'kind', 'text', 'metadata', 'configuration', 'id', 'taskId') },
  { weight: 2, arbitrary: fc.string({ maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'é', '😀', 'a"b', 'a\\b', 'tab\t', '') },
);

/** How a member name is written: mostly plain, as clients write them. */
const howArb = fc.constantFrom<'plain' | 'escaped' | 'unicode'>('plain', 'plain', 'plain', 'plain', 'escaped', 'unicode');

/**
 * A JSON string written raw, up to 120 pieces: plain text, the escapes JSON defines, and now and then a piece JSON
 * refuses (a raw control character, an escape it does not define, a cut \u escape) or the recognizers refuse (a lone
 * surrogate escape), at any place against the recognizers' 16-byte hand-over and the native search's 16-byte blocks
 * (src/envelope/plain-runs.ts).
 */
export const rawStringArb: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { weight: 20, arbitrary: fc.constantFrom('a', 'Z', ' ', '~', '\u007f', 'é', '—', '😀', '/') },
      { weight: 3, arbitrary: fc.constantFrom('\\n', '\\"', '\\\\', '\\/', '\\t', '\\u00e9', '\\ud83d\\ude00') },
      { weight: 1, arbitrary: fc.constantFrom('\u0001', '\n', '\t', '\u001f', '\\q', '\\u12', '\\ud800', '\\udc00x', '"') },
    ),
    { maxLength: 120 },
  )
  .map((pieces) => `"${pieces.join('')}"`);

/** A JSON value written by hand: members may repeat, names may be escaped, spacing varies. */
export const writtenValueArb: fc.Arbitrary<string> = fc.letrec<{ value: string; object: string; array: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.stringify(v) ?? 'null') },
    hostileTextArb.map((s) => JSON.stringify(s)),
    { weight: 2, arbitrary: rawStringArb },
    fc.constantFrom('"\\ud800"', '"\\u00e9"', '1e400', '-0', '1.0', '"\\/"'),
    tie('object'),
    tie('array'),
  ),
  object: fc
    .tuple(fc.array(fc.tuple(nameArb, howArb, tie('value')), { maxLength: 5 }), fc.boolean(), fc.constantFrom('', ' ', '\n  '))
    .map(([members, repeat, space]) => {
      const written = members.map(([name, how, value]) => `${space}${writeName(name, how)}${space}:${space}${value}`);
      if (repeat && written.length > 0) written.push(written[0]!);
      return `{${written.join(',')}${space}}`;
    }),
  array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
})).value;

function writeName(name: string, how: 'plain' | 'escaped' | 'unicode'): string {
  const json = JSON.stringify(name);
  if (how === 'plain' || name === '') return json;
  // The first character escaped: `\u0065` for e, or an escape JSON allows for it anyway.
  const first = name.charCodeAt(0).toString(16).padStart(4, '0');
  return how === 'unicode' ? `"\\u${first}${json.slice(1 + (json[1] === '\\' ? 2 : 1))}` : json;
}
