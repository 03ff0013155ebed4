/**
 * What the unary scenario compares: a peer is one way of making the same
 * call against the same upstream (directly, through a reference proxy, or
 * through the gateway on one of its paths). The scenario only knows this
 * interface, so a peer that is not HTTP/1.1 (gRPC) brings its own load and
 * still lands in the same table. A peer that cannot run on this build (the
 * gateway does not serve that path yet, or refuses the config) is a
 * SkippedPeer with the reason, and the table says so.
 */
import { closedLoop, type SaturationRound } from './load.js';

export interface UnaryPeer {
  /** Stable key in bench/results/latest.json (`direct`, `dispatch-hop`, `gateway-jsonrpc`, ...). */
  readonly id: string;
  /** The row label in the tables. */
  readonly label: string;
  /** One sentence: what this peer is. */
  readonly what: string;
  /** The process this peer puts on the path; its CPU time and its children's is the peer's cost. None for direct. */
  readonly pid?: number;
  /** True when its calls reach the bench's shared upstream, whose served counter then cross-checks the 2xx count. */
  readonly viaSharedUpstream: boolean;
  /** One call that must come back right; throws with what came back otherwise. */
  probe(): Promise<void>;
  /** Exactly `calls` calls, closed loop over `connections`. */
  drive(calls: number, connections: number): Promise<SaturationRound>;
  /** Stops what this peer started (not the shared upstream or gateway). */
  stop(): Promise<void>;
}

export interface SkippedPeer {
  readonly id: string;
  readonly label: string;
  /** Why it did not run, e.g. "not served: the gateway answered HTTP 404 UNKNOWN_OPERATION". */
  readonly skipped: string;
}

export type PeerStart = UnaryPeer | SkippedPeer;

export const isSkipped = (p: PeerStart): p is SkippedPeer => 'skipped' in p;

export interface HttpPeerSpec {
  readonly id: string;
  readonly label: string;
  readonly what: string;
  readonly url: string;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  /** Whether a reply is a success of this peer's binding (a JSON-RPC result with the caller's id, a SendMessageResponse, ...). */
  readonly good: (status: number, text: string) => boolean;
  readonly pid?: number;
  readonly viaSharedUpstream?: boolean;
  readonly stop?: () => Promise<void>;
}

/** A peer called over HTTP/1.1 with one fixed request, loaded by autocannon. */
export function httpPeer(spec: HttpPeerSpec): UnaryPeer {
  return {
    id: spec.id,
    label: spec.label,
    what: spec.what,
    ...(spec.pid !== undefined ? { pid: spec.pid } : {}),
    viaSharedUpstream: spec.viaSharedUpstream ?? true,
    async probe() {
      const res = await fetch(spec.url, { method: 'POST', headers: spec.headers, body: spec.body });
      const text = await res.text();
      if (!spec.good(res.status, text)) throw new Error(`probe of ${spec.label} (${spec.url}) failed: HTTP ${res.status} ${text.slice(0, 300)}`);
    },
    drive: (calls, connections) => closedLoop(spec.url, spec.body, calls, connections, spec.headers, spec.good),
    stop: spec.stop ?? (async () => {}),
  };
}

/** A good JSON-RPC reply to the bench's request: the caller's id (1) then a result, never an error envelope. */
export const jsonRpcResult = (status: number, text: string): boolean => status === 200 && text.startsWith('{"jsonrpc":"2.0","id":1,"result":');

/** A good HTTP+JSON reply to SendMessage: 200 and a SendMessageResponse object (`task` or `message`), not an envelope. */
export function sendMessageResponse(status: number, text: string): boolean {
  if (status !== 200) return false;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    return typeof body === 'object' && body !== null && !('jsonrpc' in body) && (typeof body.task === 'object' || typeof body.message === 'object');
  } catch {
    return false;
  }
}
