/**
 * Two readings of the same JSON text, the way real parsers differ: `last`
 * keeps the last of two same-named members (JavaScript, Python's json), `first`
 * keeps the first (Go's jsoniter with some options, Java's org.json put-once,
 * several streaming readers). A small recursive-descent reader written for
 * tests, also counting duplicate members as a reference for the gateway's scan.
 */

export interface Reading {
  readonly value: unknown;
  /** Members named twice in one object, after unescaping. */
  readonly duplicates: number;
}

export function readJson(text: string, keep: 'first' | 'last'): Reading {
  let i = 0;
  let duplicates = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at ${i}`);
  };
  const string = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') {
      if (i >= text.length) fail('unterminated string');
      i += text[i] === '\\' ? 2 : 1;
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const out: Record<string, unknown> = {};
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') return i++, out;
      for (;;) {
        ws();
        if (text[i] !== '"') fail('member name expected');
        const key = string();
        ws();
        if (text[i++] !== ':') fail('colon expected');
        const v = value();
        if (seen.has(key)) {
          duplicates++;
          if (keep === 'last') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
        } else {
          seen.add(key);
          Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
        }
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return i++, out;
        else fail('comma or } expected');
      }
    }
    if (c === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') return i++, out;
      for (;;) {
        out.push(value());
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return i++, out;
        else fail('comma or ] expected');
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!literal) return fail('value expected');
    i += literal[0].length;
    return JSON.parse(literal[0]) as unknown;
  };
  const out = value();
  ws();
  if (i !== text.length) fail('trailing text');
  return { value: out, duplicates };
}
