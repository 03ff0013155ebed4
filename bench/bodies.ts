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

/**
 * Grows `base` with parts until its JSON is about `targetBytes`, then pads
 * `base.metadata.pad` with ASCII so the byte length is exact.
 */
function sized(base: { metadata: { pad: string } }, parts: Record<string, unknown>[], part: (i: number) => Record<string, unknown>, targetBytes: number, wrap = (json: string) => json): string {
  // Grow by each part's own serialized size (+1 for the comma), not by re-serializing the whole.
  let size = Buffer.byteLength(wrap(JSON.stringify(base)));
  for (;;) {
    const next = part(parts.length);
    const added = Buffer.byteLength(JSON.stringify(next)) + (parts.length > 0 ? 1 : 0);
    if (size + added > targetBytes) break;
    parts.push(next);
    size += added;
  }
  const missing = targetBytes - Buffer.byteLength(wrap(JSON.stringify(base)));
  if (missing > 0) base.metadata.pad = 'x'.repeat(missing);
  return wrap(JSON.stringify(base));
}

/** A Task-shaped result (A2A 0.3: `kind`, lower-case states) whose serialized JSON is `targetBytes` long. */
export function taskResultJson(targetBytes: number): string {
  const base = {
    kind: 'task',
    id: 'task-0c1f7a52',
    contextId: 'ctx-9b3e',
    status: { state: 'completed', timestamp: '2025-01-01T00:00:00.000Z' },
    artifacts: [{ artifactId: 'artifact-1', name: 'answer', parts: [] as Record<string, unknown>[] }],
    metadata: { pad: '' },
  };
  return sized(base, base.artifacts[0]!.parts, textPart, targetBytes);
}

/**
 * The same Task in A2A 1.0 ProtoJSON, wrapped as a SendMessageResponse
 * (`{"task":{...}}`), `targetBytes` long: what a 1.0 remote answers to
 * `SendMessage` (JSON-RPC result) and to `POST .../message:send` (HTTP+JSON body).
 */
export function sendMessageResponseJson(targetBytes: number): string {
  const base = {
    id: 'task-0c1f7a52',
    contextId: 'ctx-9b3e',
    status: { state: 'TASK_STATE_COMPLETED', timestamp: '2025-01-01T00:00:00.000Z' },
    artifacts: [{ artifactId: 'artifact-1', name: 'answer', parts: [] as Record<string, unknown>[] }],
    metadata: { pad: '' },
  };
  const part = (i: number) => {
    const { kind: _kind, ...v1 } = textPart(i);
    return v1;
  };
  return sized(base, base.artifacts[0]!.parts, part, targetBytes, (task) => `{"task":${task}}`);
}

/** An A2A 1.0 SendMessageRequest, the body of `POST /remotes/<name>/message:send` (HTTP+JSON binding). */
export const REST_SEND_REQUEST = Buffer.from(
  JSON.stringify({ message: { messageId: 'bench-1', role: 'ROLE_USER', parts: [{ text: 'hello' }] } }),
);
/** HTTP+JSON is an A2A 1.0 binding: the caller says so. */
export const REST_HEADERS = { 'content-type': 'application/json', 'a2a-version': '1.0' } as const;

export function replyBody(id: unknown, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

export const KiB = 1024;
export const MiB = 1024 * KiB;
