/**
 * Fetching a remote's agent card: one GET, no redirects, a byte cap on the
 * decoded body, the egress guard on the socket, a deadline from the caller's
 * AbortSignal. Failures become a CardFetchError carrying a gateway Reason;
 * nothing the remote sent is ever put in an error message.
 */
import { Agent, request } from 'undici';
import { VERSION } from '../version.js';
import type { RemoteConfig } from '../config/schema.js';
import type { Reason } from '../envelope/codes.js';
import { guardedLookup, literalHostDenied } from '../upstream/egress.js';
import { classifyTransportError } from '../upstream/errors.js';
import { headerValue, readCappedBody } from '../upstream/read-body.js';

export interface FetchedCardResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The decoded body, at most `limits.maxCardBytes` bytes. */
  readonly body: Buffer;
}

/** What the card route calls; the gateway may supply its own (shared pools, metrics). */
/** `a2aVersion`: the caller's A2A-Version, forwarded so a remote serving both generations answers in the caller's. */
export type FetchCard = (remote: RemoteConfig, signal: AbortSignal, opts?: { readonly a2aVersion?: string }) => Promise<FetchedCardResponse>;

export interface CardFetchErrorOptions {
  readonly cause?: unknown;
  /** Gateway-written explanation (a key path, a status), never remote bytes. */
  readonly detail?: string | undefined;
  readonly httpStatus?: number | undefined;
}

/** Why the gateway could not get a usable card; `reason` is from the error catalogue. */
export class CardFetchError extends Error {
  override readonly name = 'CardFetchError';
  readonly detail: string | undefined;
  readonly httpStatus: number | undefined;
  constructor(
    readonly reason: Reason,
    options: CardFetchErrorOptions = {},
  ) {
    super(options.detail ? `${reason}: ${options.detail}` : reason, { cause: options.cause });
    this.detail = options.detail;
    this.httpStatus = options.httpStatus;
  }
}

/** `remotes.<name>.agentCardUrl`, else the well-known path on the remote's origin. */
export function cardUrlFor(remote: RemoteConfig): URL {
  return remote.agentCardUrl ?? new URL('/.well-known/agent-card.json', remote.url.origin);
}

/**
 * A self-contained fetch over a short-lived undici Agent: card fetches are
 * rare (once per cache TTL), so a pool of their own is not worth keeping.
 * undici's `request` follows no redirects, so a 3xx arrives as a non-2xx status.
 */
export const fetchCardWithUndici: FetchCard = async (remote, signal, opts = {}) => {
  const url = cardUrlFor(remote);
  if (literalHostDenied(url, remote.allowPrivateNetwork)) throw new CardFetchError('EGRESS_DENIED');
  const agent = new Agent({
    connect: { timeout: remote.timeouts.connectMs, lookup: guardedLookup(remote.allowPrivateNetwork), ...remote.tls },
    headersTimeout: remote.timeouts.cardMs,
    bodyTimeout: remote.timeouts.cardMs,
    maxHeaderSize: 32 * 1024,
  });
  try {
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(url, {
        method: 'GET',
        dispatcher: agent,
        signal,
        headers: {
          accept: 'application/json',
          'user-agent': `a2a-egress/${VERSION}`,
          ...(opts.a2aVersion ? { 'a2a-version': opts.a2aVersion } : {}),
        },
      });
    } catch (err) {
      throw new CardFetchError(classifyTransportError(err), { cause: err });
    }
    const read = await readCappedBody(response.body, headerValue(response.headers['content-encoding']), remote.limits.maxCardBytes);
    if (!read.ok) throw new CardFetchError(read.reason, { cause: read.error });
    return { status: response.statusCode, headers: response.headers, body: read.body };
  } finally {
    await agent.destroy().catch(() => undefined);
  }
};
