/**
 * An oracle for "does a caller see this secret?", independent of the
 * gateway's redactor: every string is sanitized the way the gateway shows
 * text, whitespace is removed, and the secret is looked for in the text, in
 * its percent-decoding and in every base64 decoding of it.
 */
import { cleanText } from '../../src/envelope/sanitize.js';

/** Does any reading of `s` a person or a decoder could make hold `secret`? */
export function reveals(s: string, secret: string): boolean {
  const seen = cleanText(s).replace(/\s+/g, '');
  if (seen.includes(secret)) return true;
  const percentDecoded = seen.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  if (percentDecoded.includes(secret)) return true;
  for (const run of seen.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    for (let k = 0; k < 4; k++) if (Buffer.from(run.slice(k), 'base64').toString('latin1').includes(secret)) return true;
  }
  return false;
}

/** Every string in a JSON value, member names included. */
export function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}

/** Where `secret` shows in a reply a caller received (body text, parsed JSON strings, header values); empty when nowhere. */
export function leaksIn(secret: string, reply: { text: string; headers?: Record<string, string | string[] | undefined> }): string[] {
  const found: string[] = [];
  if (reply.text.includes(secret)) found.push('raw body');
  let parsed: unknown[] = [];
  try {
    parsed = [JSON.parse(reply.text) as unknown];
  } catch {
    // An SSE body: each data line is JSON.
    parsed = reply.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as unknown);
  }
  for (const s of parsed.flatMap((p) => stringsOf(p))) if (reveals(s, secret)) found.push(`string ${JSON.stringify(s)}`);
  for (const [name, value] of Object.entries(reply.headers ?? {})) {
    const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
    for (const v of values) if (reveals(v, secret)) found.push(`header ${name}`);
  }
  return found;
}
