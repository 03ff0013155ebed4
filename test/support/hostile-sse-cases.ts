/**
 * The hostile upstream's streaming cases (answers to SendStreamingMessage /
 * SubscribeToTask). Each `data:` payload is a whole JSON-RPC response with the
 * caller's id, as A2A §9.4.2 says, unless the case is about breaking that.
 */
import { errorText, intParam, resultText, sendJson, writeForever, type CaseContext, type CaseHandler, type JsonRpcId } from './hostile-replies.js';
import { delay } from './servers.js';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

export const SSE_TASK_ID = 'hostile-task-1';
const CONTEXT_ID = 'hostile-ctx-1';

export const sseEvent = (data: string, name?: string): string => `${name === undefined ? '' : `event: ${name}\n`}data: ${data}\n\n`;

const stateJson = (state: string): string =>
  JSON.stringify({ statusUpdate: { taskId: SSE_TASK_ID, contextId: CONTEXT_ID, status: { state } } });

const artifactJson = (text: string): string =>
  JSON.stringify({
    artifactUpdate: { taskId: SSE_TASK_ID, contextId: CONTEXT_ID, artifact: { artifactId: 'hostile-artifact-1', parts: [{ text }] } },
  });

/** The four data payloads of a well-formed task stream: task, working, artifact, completed. */
export function taskStreamPayloads(id: JsonRpcId): string[] {
  return [
    resultText(id, JSON.stringify({ task: { id: SSE_TASK_ID, contextId: CONTEXT_ID, status: { state: 'TASK_STATE_SUBMITTED' } } })),
    resultText(id, stateJson('TASK_STATE_WORKING')),
    resultText(id, artifactJson('streamed by a hostile upstream')),
    resultText(id, stateJson('TASK_STATE_COMPLETED')),
  ];
}

function streamOf(ctx: CaseContext, chunks: string[]): void {
  ctx.res.writeHead(200, SSE_HEADERS);
  ctx.res.end(chunks.join(''));
}

/** One artifact event whose data payload (the JSON text after `data: `) is exactly `bytes` long, then completion. */
function bigEvent(ctx: CaseContext): void {
  const bytes = intParam(ctx.params, 'bytes', 64 * 1024, 0, 256 * 1024 * 1024);
  const empty = resultText(ctx.id, artifactJson(''));
  const pad = bytes - Buffer.byteLength(empty);
  if (pad < 0) {
    sendJson(ctx.res, `"sse-big-event: bytes must be at least ${Buffer.byteLength(empty)}"`, 400);
    return;
  }
  const [first, , , last] = taskStreamPayloads(ctx.id) as [string, string, string, string];
  streamOf(ctx, [sseEvent(first), sseEvent(resultText(ctx.id, artifactJson('x'.repeat(pad)))), sseEvent(last)]);
}

async function commentsOnly(ctx: CaseContext): Promise<void> {
  const every = intParam(ctx.params, 'ms', 50, 1, 60_000);
  ctx.res.writeHead(200, SSE_HEADERS);
  ctx.res.flushHeaders();
  while (!ctx.closed.aborted) {
    ctx.res.write(': keep-alive\n\n');
    await delay(every, ctx.closed);
  }
}

function endlessEvents(ctx: CaseContext): void {
  ctx.res.writeHead(200, SSE_HEADERS);
  const one = Buffer.from(sseEvent(resultText(ctx.id, artifactJson('y'.repeat(1024)))));
  writeForever(ctx, one);
}

export const SSE_CASES: Readonly<Record<string, CaseHandler>> = {
  'sse-ok': (ctx) => streamOf(ctx, taskStreamPayloads(ctx.id).map((d) => sseEvent(d))),
  'sse-keepalive': (ctx) => streamOf(ctx, taskStreamPayloads(ctx.id).map((d) => `: keep-alive\n\n${sseEvent(d)}`)),
  'sse-error-event': (ctx) => {
    const [first] = taskStreamPayloads(ctx.id) as [string];
    const error = errorText(ctx.id, JSON.stringify({ code: -32603, message: 'stream exploded\r\n\u001b[31mat worker.js:1', stack: 'Error: x\n at y' }));
    streamOf(ctx, [sseEvent(first), sseEvent(error, 'error')]);
  },
  'sse-garbage': (ctx) => {
    const [first] = taskStreamPayloads(ctx.id) as [string];
    streamOf(ctx, [sseEvent(first), sseEvent('<html>not json</html>')]);
  },
  'sse-big-event': bigEvent,
  // A streaming call answered with a plain JSON-RPC error body instead of an event stream.
  'sse-json-error': (ctx) => sendJson(ctx.res, errorText(ctx.id, '{"code":-32004,"message":"streaming is not supported"}')),
  'sse-comments-only': commentsOnly,
  'sse-silent': (ctx) => {
    ctx.res.writeHead(200, SSE_HEADERS);
    ctx.res.flushHeaders();
  },
  'sse-endless': endlessEvents,
};
