/**
 * The caller's side of one JSON-RPC call as the call path sees it (routes/jsonrpc.ts handleCall, proxy/unary.ts,
 * proxy/stream.ts, proxy/reply.ts, telemetry/call-trace.ts): either Fastify's request and reply, or the pair the
 * call front makes (routes/call-front.ts), which serves the call straight from node:http without Fastify's
 * per-request objects. The path reads only the members both have (id, log, headers, body, params and the raw
 * request; the raw response, hijack); the one step that differs is how an envelope is written (proxy/reply.ts).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';

/** A call the front took: what Fastify's request would have carried, made once per call. */
export class DirectRequest {
  readonly headers: IncomingHttpHeaders;
  /** The raw body once read (Fastify's `request.body` after the route's content-type parser). */
  body: Buffer | undefined = undefined;

  constructor(
    readonly raw: IncomingMessage,
    /** The request id (policy/request-id.ts), as Fastify's genReqId gives it. */
    readonly id: string,
    readonly log: FastifyBaseLogger,
    /** The route's parameters as Fastify's router would give them: the remote's name on the shared mount. */
    readonly params: { readonly name: string } | undefined,
  ) {
    this.headers = raw.headers;
  }
}

/** The front's reply: an envelope is one writeHead from a prebuilt header array and one end. */
export class DirectReply {
  constructor(
    readonly raw: ServerResponse,
    readonly request: DirectRequest,
  ) {}

  /** A stream's relay writes the raw response itself; there is nobody else here who would answer too. */
  hijack(): this {
    return this;
  }

  /** `headers`: [name, value, name, value, ...], written in this order. */
  send(status: number, headers: string[], body: string): void {
    this.raw.writeHead(status, headers);
    this.raw.end(body);
  }
}

export type CallRequest = FastifyRequest | DirectRequest;
export type CallReply = FastifyReply | DirectReply;
