/**
 * Parts. 0.3 names the kind (`{kind: "text"|"file"|"data", ...}`, files inside
 * `file: {bytes|uri, name, mimeType}`); 1.0 has one flat Part whose content
 * member is the discriminator (`text` | `raw` | `url` | `data`, spec 1.0
 * Appendix A.2.1), with `filename` and `mediaType` beside it.
 *
 * A part without content has no counterpart and is left out (`<path>`). A 1.0
 * data value that is not an object (0.3 data is always an object) travels as
 * `{value: X}` with `metadata.data_part_compat: true`, the convention the
 * @a2a-js/sdk compat layer uses, and is unwrapped on the way back.
 */
import { Drops, isRecord, join, readMembers, type JsonObject } from './json.js';

export const DATA_PART_COMPAT_FLAG = 'data_part_compat';

/** Media types a 0.3 part implies by its kind: carrying them is not a loss. */
const IMPLIED_TEXT_MEDIA_TYPE = 'text/plain';
const IMPLIED_DATA_MEDIA_TYPE = 'application/json';

const PART_03 = ['kind', 'text', 'file', 'data', 'metadata'] as const;
const FILE_03 = ['bytes', 'uri', 'name', 'mimeType'] as const;
const PART_10 = ['text', 'raw', 'url', 'data', 'metadata', 'filename', 'mediaType'] as const;
const CONTENT_10 = ['text', 'raw', 'url', 'data'] as const;

/**
 * Base64 as 1.0's `bytes` JSON form (standard alphabet, padded). ProtoJSON parsers also accept the
 * URL-safe alphabet and missing padding, so both are normalized; anything else is `undefined`.
 */
export function standardBase64(value: string): string | undefined {
  const std = value.replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(std)) return undefined;
  const bare = std.replace(/=+$/, '');
  if (bare.length % 4 === 1) return undefined;
  return bare + '='.repeat((4 - (bare.length % 4)) % 4);
}

/** A metadata member as an object, or `undefined` (recorded when it was present but not an object). */
function structOrDrop(value: unknown, path: string, drops: Drops): JsonObject | undefined {
  if (value !== undefined && !isRecord(value)) drops.add(join(path, 'metadata'));
  return isRecord(value) ? value : undefined;
}

function kindOf03(part: JsonObject): unknown {
  if (part.kind !== undefined) return part.kind;
  // No discriminator: a sender that left it out still meant the one content member it sent.
  if (part.text !== undefined) return 'text';
  if (part.file !== undefined) return 'file';
  if (part.data !== undefined) return 'data';
  return undefined;
}

/** A 0.3 part as a 1.0 Part, or `undefined` (recorded) when it has no content 1.0 can carry. */
export function partTo10(value: unknown, path: string, drops: Drops): JsonObject | undefined {
  const part = readMembers(value, PART_03, '0.3', path, drops);
  if (!part) return void drops.add(path);
  const out: JsonObject = {};
  const kind = kindOf03(part);
  let metadata = structOrDrop(part.metadata, path, drops);
  const others = (own: string) => {
    for (const member of ['text', 'file', 'data']) if (member !== own && part[member] !== undefined) drops.add(join(path, member));
  };
  if (kind === 'text' && typeof part.text === 'string') {
    out.text = part.text;
    others('text');
  } else if (kind === 'file') {
    const filePath = join(path, 'file');
    const file = readMembers(part.file, FILE_03, '0.3', filePath, drops);
    if (!file) return void drops.add(filePath);
    const bytes = typeof file.bytes === 'string' ? standardBase64(file.bytes) : undefined;
    if (bytes !== undefined) {
      out.raw = bytes;
      if (file.uri !== undefined) drops.add(join(filePath, 'uri'));
    } else if (file.bytes === undefined && typeof file.uri === 'string') {
      out.url = file.uri;
    } else {
      // Malformed bytes, a uri that is not a string, or neither (a file with no content at all).
      return void drops.add(file.bytes !== undefined ? join(filePath, 'bytes') : file.uri !== undefined ? join(filePath, 'uri') : filePath);
    }
    if (typeof file.name === 'string') out.filename = file.name;
    else if (file.name !== undefined) drops.add(join(filePath, 'name'));
    if (typeof file.mimeType === 'string') out.mediaType = file.mimeType;
    else if (file.mimeType !== undefined) drops.add(join(filePath, 'mimeType'));
    others('file');
  } else if (kind === 'data' && part.data !== undefined) {
    out.data = part.data;
    if (metadata?.[DATA_PART_COMPAT_FLAG] === true) {
      const data = part.data;
      // Unwrap only what the wrapping makes: exactly {value: X} with X not an object.
      if (isRecord(data) && Object.keys(data).length === 1 && Object.hasOwn(data, 'value') && !isRecord(data.value)) {
        out.data = data.value;
        const { [DATA_PART_COMPAT_FLAG]: _flag, ...rest } = metadata;
        metadata = Object.keys(rest).length > 0 ? rest : undefined;
      }
    }
    others('data');
  } else {
    // A known kind without its content member, or a kind 1.0 has no content for.
    drops.add(join(path, kind === 'text' || kind === 'data' ? kind : 'kind'));
    return undefined;
  }
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}

/** A 1.0 Part as a 0.3 part, or `undefined` (recorded) when it has no content. */
export function partTo03(value: unknown, path: string, drops: Drops): JsonObject | undefined {
  const part = readMembers(value, PART_10, '1.0', path, drops);
  if (!part) return void drops.add(path);
  const content = CONTENT_10.filter((member) => part[member] !== undefined);
  const chosen = content[0];
  if (chosen === undefined) return void drops.add(path);
  // A oneof holds one member; a sender that set several meant the first the proto declares.
  for (const extra of content.slice(1)) drops.add(join(path, extra));
  const filename = typeof part.filename === 'string' && part.filename !== '' ? part.filename : undefined;
  if (part.filename !== undefined && typeof part.filename !== 'string') drops.add(join(path, 'filename'));
  const mediaType = typeof part.mediaType === 'string' && part.mediaType !== '' ? part.mediaType : undefined;
  if (part.mediaType !== undefined && typeof part.mediaType !== 'string') drops.add(join(path, 'mediaType'));
  let out: JsonObject;
  let metadata = structOrDrop(part.metadata, path, drops);
  if (chosen === 'text') {
    if (typeof part.text !== 'string') return void drops.add(join(path, 'text'));
    out = { kind: 'text', text: part.text };
    if (filename !== undefined) drops.add(join(path, 'filename'));
    if (mediaType !== undefined && mediaType !== IMPLIED_TEXT_MEDIA_TYPE) drops.add(join(path, 'mediaType'));
  } else if (chosen === 'raw' || chosen === 'url') {
    const raw = chosen === 'raw' && typeof part.raw === 'string' ? standardBase64(part.raw) : undefined;
    if (chosen === 'raw' ? raw === undefined : typeof part.url !== 'string') return void drops.add(join(path, chosen));
    const file: JsonObject = chosen === 'raw' ? { bytes: raw } : { uri: part.url };
    if (filename !== undefined) file.name = filename;
    if (mediaType !== undefined) file.mimeType = mediaType;
    out = { kind: 'file', file };
  } else {
    if (isRecord(part.data)) {
      out = { kind: 'data', data: part.data };
    } else {
      out = { kind: 'data', data: { value: part.data } };
      metadata = { ...metadata, [DATA_PART_COMPAT_FLAG]: true };
    }
    if (filename !== undefined) drops.add(join(path, 'filename'));
    if (mediaType !== undefined && mediaType !== IMPLIED_DATA_MEDIA_TYPE) drops.add(join(path, 'mediaType'));
  }
  if (metadata !== undefined) out.metadata = metadata;
  return out;
}
