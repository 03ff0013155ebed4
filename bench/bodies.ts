/**
 * The JSON-RPC bodies every scenario uses, built once per size. The result is
 * shaped like a real A2A Task (status, artifacts made of text parts, a little
 * metadata) rather than one giant string, because JSON.parse and the
 * normalizer's scanner both cost per token, not only per byte.
 */

export const UNARY_REQUEST = Buffer.from(
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { kind: 'message', role: 'user', messageId: 'bench-1', parts: [{ kind: 'text', text: 'hello' }] } },
  }),
);

export const STREAM_REQUEST = Buffer.from(
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/stream',
    params: { message: { kind: 'message', role: 'user', messageId: 'bench-1', parts: [{ kind: 'text', text: 'hello' }] } },
  }),
);

const SENTENCE = 'The quick brown fox jumps over the lazy dog; résumé naïve café — 0123456789. ';

function textPart(i: number): Record<string, unknown> {
  return { kind: 'text', text: `${i}: ${SENTENCE}${SENTENCE}`, metadata: { index: i, final: i % 7 === 0 } };
}

/** A Task-shaped result whose serialized JSON is `targetBytes` long (± a few bytes, padded to exact). */
export function taskResultJson(targetBytes: number): string {
  const base = {
    kind: 'task',
    id: 'task-0c1f7a52',
    contextId: 'ctx-9b3e',
    status: { state: 'completed', timestamp: '2025-01-01T00:00:00.000Z' },
    artifacts: [{ artifactId: 'artifact-1', name: 'answer', parts: [] as Record<string, unknown>[] }],
    metadata: { pad: '' },
  };
  const parts = base.artifacts[0]!.parts;
  // Grow by each part's own serialized size (+1 for the comma), not by re-serializing the whole.
  let size = Buffer.byteLength(JSON.stringify(base));
  for (;;) {
    const part = textPart(parts.length);
    const added = Buffer.byteLength(JSON.stringify(part)) + (parts.length > 0 ? 1 : 0);
    if (size + added > targetBytes) break;
    parts.push(part);
    size += added;
  }
  // Pad with ASCII so the byte length is exact.
  const missing = targetBytes - Buffer.byteLength(JSON.stringify(base));
  if (missing > 0) base.metadata.pad = 'x'.repeat(missing);
  return JSON.stringify(base);
}

export function replyBody(id: unknown, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

export const KiB = 1024;
export const MiB = 1024 * KiB;
