/**
 * What the gateway takes from the ErrorInfo objects inside a remote error's
 * `data`. A2A 1.0 puts its own ErrorInfo (domain `a2a-protocol.org`) there;
 * its `metadata` (e.g. the taskId of a TaskNotFound) is the one part a typed
 * 1.0 client reads, so it is carried — sanitized and bounded — into the A2A
 * ErrorInfo the gateway writes. Pure: values in, values out.
 */
import { A2A_ERROR_DOMAIN, ERROR_DOMAIN, ERROR_INFO_TYPE } from './codes.js';
import { sanitizeText, type SanitizedText } from './sanitize.js';

/** Makes one remote text safe and bounded; `redacted` says a credential was removed from it (see ./redact.ts). */
export type TextCleaner = (text: string, maxBytes: number) => SanitizedText & { readonly redacted?: boolean };

/** At most this many metadata entries are carried; the rest are dropped. */
export const MAX_A2A_METADATA_ENTRIES = 8;
/** Each metadata key after sanitizing (UTF-8 bytes); longer keys are dropped, not cut. */
export const MAX_A2A_METADATA_KEY_BYTES = 64;

/**
 * The metadata of the remote's A2A ErrorInfo whose reason is `reason`, with
 * every key and value sanitized; values are cut to `maxValueBytes`; only
 * string, number and boolean values are kept (ErrorInfo metadata is a map of
 * strings). Undefined when the remote sent no such ErrorInfo.
 */
export function remoteA2aMetadata(
  data: unknown,
  reason: string,
  maxValueBytes: number,
  clean: TextCleaner = sanitizeText,
): Record<string, string> | undefined {
  if (!Array.isArray(data)) return undefined;
  const info = data.find(
    (item): item is Record<string, unknown> =>
      isErrorInfo(item) && item.domain === A2A_ERROR_DOMAIN && item.reason === reason,
  );
  if (!info) return undefined;
  const metadata = info.metadata;
  const out: Record<string, string> = {};
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return out;
  let count = 0;
  for (const [rawKey, rawValue] of Object.entries(metadata)) {
    if (count >= MAX_A2A_METADATA_ENTRIES) break;
    if (typeof rawValue !== 'string' && typeof rawValue !== 'number' && typeof rawValue !== 'boolean') continue;
    const key = clean(rawKey, MAX_A2A_METADATA_KEY_BYTES);
    // "__pro\u200bto__" sanitizes into a key the JSON parser refused; never re-create one. A key that held a credential goes.
    if (key.redacted || key.truncated || key.text === '' || key.text === '__proto__' || key.text === 'prototype' || Object.hasOwn(out, key.text)) continue;
    Object.defineProperty(out, key.text, { value: clean(String(rawValue), maxValueBytes).text, enumerable: true, writable: true, configurable: true });
    count++;
  }
  return out;
}

/**
 * True for an ErrorInfo in a domain whose meaning the gateway owns or writes
 * itself: the gateway's own, and A2A's. A remote's copies of these never pass
 * as extra details, so a caller finding an ErrorInfo by domain finds the
 * gateway's, not one a remote forged.
 */
export function isReservedErrorInfo(item: unknown): boolean {
  return isErrorInfo(item) && (item.domain === ERROR_DOMAIN || item.domain === A2A_ERROR_DOMAIN);
}

function isErrorInfo(item: unknown): item is Record<string, unknown> {
  return typeof item === 'object' && item !== null && !Array.isArray(item) && (item as Record<string, unknown>)['@type'] === ERROR_INFO_TYPE;
}
