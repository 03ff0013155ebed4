/**
 * JSON-RPC error objects, 0.3 ↔ 1.0. The codes are the same numbers in both
 * generations (0.3 lacks -32008 and -32009; they pass as they are, and a 0.3
 * client reads them as errors it has no class for). 1.0 makes `data` an array
 * of `@type` detail objects (§9.5) with an A2A ErrorInfo for A2A errors;
 * 0.3 leaves `data` free-form.
 *
 * What the 0.3 side gets: the same array of `@type` objects the gateway gives
 * every caller (its reply contract), which 0.3's free-form `data` allows, so
 * both generations read the same details. Going to 1.0, a 0.3 remote's
 * free-form `data` keeps only its `@type` objects (a lone one is wrapped in
 * the array), and an A2A code gets the A2A ErrorInfo it lacks.
 *
 * The gateway's own ErrorOutcome (src/core/outcome.ts) is already
 * generation-neutral (code, message, details as `@type` objects); this module
 * is for error objects in wire form.
 */
import { A2A_ERROR_DOMAIN, ERROR_INFO_TYPE } from '../../envelope/codes.js';
import { Code, standardMessages } from '../../envelope/codes.js';
import type { ProtocolGeneration } from '../operations.js';
import { done, Drops, isRecord, readMembers, type Bridged, type JsonObject } from './json.js';

/** A2A error codes and the ErrorInfo `reason` 1.0 names each by (spec §5.4, §10.6: the error type without "Error"). */
export const A2A_ERROR_REASONS: Readonly<Record<number, string>> = {
  [Code.TaskNotFound]: 'TASK_NOT_FOUND',
  [Code.TaskNotCancelable]: 'TASK_NOT_CANCELABLE',
  [Code.PushNotificationNotSupported]: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  [Code.UnsupportedOperation]: 'UNSUPPORTED_OPERATION',
  [Code.ContentTypeNotSupported]: 'CONTENT_TYPE_NOT_SUPPORTED',
  [Code.InvalidAgentResponse]: 'INVALID_AGENT_RESPONSE',
  [Code.ExtendedAgentCardNotConfigured]: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED',
  [Code.ExtensionSupportRequired]: 'EXTENSION_SUPPORT_REQUIRED',
  [Code.VersionNotSupported]: 'VERSION_NOT_SUPPORTED',
};

/** JSON-RPC error codes are integers; anything else becomes InternalError. */
function codeOf(value: unknown, drops: Drops): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (value !== undefined) drops.add('error.code');
  return Code.InternalError;
}

function isDetail(value: unknown): value is JsonObject {
  return isRecord(value) && typeof value['@type'] === 'string';
}

/** The `@type` detail objects of a `data` member; everything else is recorded. */
function detailsOf(data: unknown, from: ProtocolGeneration, drops: Drops): JsonObject[] {
  if (data === undefined || data === null) return [];
  if (Array.isArray(data)) {
    const details = data.filter(isDetail);
    if (details.length < data.length) drops.add('error.data[]');
    return details;
  }
  // 0.3's free-form data may be one detail object; 1.0 requires the array.
  if (from === '0.3' && isDetail(data)) return [data];
  drops.add('error.data');
  return [];
}

/** A JSON-RPC `error` object written in `from`, as `to` writes it. */
export function bridgeError(from: ProtocolGeneration, to: ProtocolGeneration, error: unknown): Bridged<JsonObject> {
  const drops = new Drops();
  if (from === to) return done(isRecord(error) ? error : {}, drops);
  const e = readMembers(error, ['code', 'message', 'data'], from, 'error', drops) ?? (drops.add('error'), {});
  const code = codeOf(e.code, drops);
  let message = e.message;
  if (typeof message !== 'string') {
    if (message !== undefined) drops.add('error.message');
    message = standardMessages[code] ?? standardMessages[Code.InternalError]!;
  }
  const details = detailsOf(e.data, from, drops);
  const reason = A2A_ERROR_REASONS[code];
  const hasA2aInfo = details.some((d) => d['@type'] === ERROR_INFO_TYPE && d.domain === A2A_ERROR_DOMAIN);
  if (to === '1.0' && reason !== undefined && !hasA2aInfo) {
    details.push({ '@type': ERROR_INFO_TYPE, reason, domain: A2A_ERROR_DOMAIN });
  }
  const out: JsonObject = { code, message };
  if (details.length > 0) out.data = details;
  return done(out, drops);
}
