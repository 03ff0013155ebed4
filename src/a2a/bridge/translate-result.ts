/**
 * One result (or one stream event's result) from the remote's generation into
 * the caller's, as both bridge entry points use it: the JSON-RPC path
 * (proxy/version-bridge.ts) and the binding runner (core/call-bridge.ts).
 * Here, beside the translators, so neither entry point imports the other.
 */
import type { Operation, ProtocolGeneration } from '../operations.js';
import { Code, type Reason } from '../../envelope/codes.js';
import { bridgeEvent } from './events.js';
import { bridgeResult } from './results.js';

/** What a translation needs to know of the call: its operation and the two generations. */
export interface BridgedGenerations {
  readonly operation: Operation;
  /** The caller's generation. */
  readonly caller: ProtocolGeneration;
  /** The generation the remote is spoken to in. */
  readonly remote: ProtocolGeneration;
}

export type TranslatedResult = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly reason: Reason; readonly detail: string };

export function translateResult(
  bridge: BridgedGenerations,
  result: unknown,
  bridging: { readonly onDropped: (direction: 'response' | 'event', labels: readonly string[]) => void },
  direction: 'response' | 'event',
): TranslatedResult {
  const out = direction === 'event' ? bridgeEvent(bridge.remote, bridge.caller, result) : bridgeResult(bridge.operation, bridge.remote, bridge.caller, result);
  if (out.dropped.length > 0) bridging.onDropped(direction, out.dropped);
  if (!out.ok) return { ok: false, reason: out.code === Code.UnsupportedOperation ? 'NO_COUNTERPART' : 'INVALID_RESULT', detail: out.problem };
  return { ok: true, result: out.value };
}
