/**
 * The text of a push, made safe for the local agent (often an LLM) the way
 * stream events and error text are: terminal control sequences removed
 * whole, other controls and every format character (bidi overrides,
 * zero-width characters, tag characters) dropped, lone surrogates
 * replaced — and the gateway's secrets removed (./push-body.ts passes the
 * redactors). Pure.
 *
 * Two kinds of string:
 * - identifiers and enum-like members (ids, kind, role, state, media
 *   types, URIs, names): one line, `cleanText` as for error messages;
 * - everything else (message and artifact text, descriptions, data): line
 *   breaks are content there, so CR LF, CR and the Unicode separators
 *   become LF, tabs stay, nothing is collapsed or trimmed.
 *
 * Member names are cleaned as identifiers; one that cleans to nothing is
 * dropped, two that clean to one name refuse the push, and outside free-form maps
 * (`metadata`, `data`) two members that ProtoJSON reads as one field
 * (`taskId` and `task_id`) refuse the push: which one the local agent
 * reads would be up to its parser.
 */
import type { Redactor } from '../envelope/redact.js';
import { cleanText, removeControlSequences } from '../envelope/sanitize.js';

const ONE_LINE_MEMBERS = new Set([
  'id', 'taskId', 'contextId', 'messageId', 'artifactId', 'referenceTaskIds', 'kind', 'role', 'state', 'mediaType', 'mimeType',
  'timestamp', 'extensions', 'uri', 'url', 'name', 'filename', 'tenant',
].flatMap((m) => [m, m.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]));

const FREE_FORM_MEMBERS = new Set(['metadata', 'data']);

const LINE_BREAKS = /\r\n?|[\u0085\u2028\u2029]/g;
const INVISIBLE_BUT_LF_TAB = /[\p{Cc}\p{Cf}]/gu;

/** Multi-line text: controls and format characters out, every line break an LF, tabs kept. */
export function cleanMultilineText(input: string): string {
  const text = removeControlSequences(input.toWellFormed()).replace(LINE_BREAKS, '\n');
  return text.replace(INVISIBLE_BUT_LF_TAB, (c) => (c === '\n' || c === '\t' ? c : ''));
}

export type CleanedPush =
  | { readonly ok: true; readonly value: unknown; readonly cleaned: number; readonly redacted: number }
  | { readonly ok: false; readonly reason: 'PUSH_CREDENTIAL_ECHOED' | 'PUSH_DUPLICATE_MEMBER'; readonly detail?: string };

class Refusal extends Error {
  override readonly name = 'Refusal';
  constructor(readonly reason: 'PUSH_CREDENTIAL_ECHOED' | 'PUSH_DUPLICATE_MEMBER', readonly detail: string) {
    super(detail);
  }
}

const fold = (key: string): string => key.replace(/_/g, '').toLowerCase();

/** Cleans every string and member name of a parsed push, then removes each redactor's values. */
export function cleanPush(value: unknown, redactors: readonly Redactor[]): CleanedPush {
  let cleaned = 0;
  const walk = (node: unknown, oneLine: boolean, freeForm: boolean): unknown => {
    if (typeof node === 'string') {
      const out = oneLine ? cleanText(node) : cleanMultilineText(node);
      if (out !== node) cleaned++;
      return out;
    }
    if (Array.isArray(node)) return node.map((item) => walk(item, oneLine, freeForm));
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    const folded = new Set<string>();
    for (const [rawKey, item] of Object.entries(node)) {
      const key = cleanText(rawKey);
      if (key !== rawKey) cleaned++;
      // A name cleaning empties (or turns into "__proto__", which the parser refused raw) is dropped. That is a
      // change: counted, so the cleaned value (not the input, which still has the member) is what is sent.
      if (key === '' || key === '__proto__') {
        cleaned++;
        continue;
      }
      // Two names that differ only in what a reader does not see are one name to the local agent.
      if (Object.hasOwn(out, key)) throw new Refusal('PUSH_DUPLICATE_MEMBER', 'a member twice once cleaned');
      if (!freeForm) {
        const f = fold(key);
        if (folded.has(f)) throw new Refusal('PUSH_DUPLICATE_MEMBER', 'a member in camelCase and snake_case');
        folded.add(f);
      }
      const value = walk(item, ONE_LINE_MEMBERS.has(key) && !freeForm, freeForm || FREE_FORM_MEMBERS.has(key));
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  try {
    let result = walk(value, false, false);
    let redacted = 0;
    for (const redactor of redactors) {
      const r = redactor.value(result);
      if (!r.ok) throw new Refusal('PUSH_CREDENTIAL_ECHOED', `in a ${r.where}`);
      result = r.value;
      redacted += r.count;
    }
    return { ok: true, value: cleaned === 0 && redacted === 0 ? value : result, cleaned, redacted };
  } catch (err) {
    if (err instanceof Refusal) return { ok: false, reason: err.reason, detail: err.detail };
    throw err;
  }
}
