/**
 * An SSE event as the parser (src/stream/sse-parser.ts) dispatches it, for tests that start from the event's data:
 * its bytes beside the text, as the parser keeps them, unless a line was not valid UTF-8. A string with a lone
 * surrogate has no UTF-8 form (no parser can make one): it gets no bytes, and the readers work from the text.
 */
import { utf8Of } from '../../src/envelope/json-recognizers.js';
import type { SseEvent } from '../../src/stream/sse-parser.js';

export function sseEvent(data: string, type = 'message', invalidUtf8 = false): SseEvent {
  return { kind: 'event', type, data, dataBytes: invalidUtf8 ? undefined : utf8Of(data), lastEventId: '', invalidUtf8 };
}
