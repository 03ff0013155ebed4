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
  /** The HTTP method (the front takes only POSTs). */
  readonly method: string;

  constructor(
    readonly raw: IncomingMessage,
    /** The request id (policy/request-id.ts), as Fastify's genReqId gives it. */
    readonly id: string,
    readonly log: FastifyBaseLogger,
    /** The route's parameters as Fastify's router would give them: the remote's name on the shared mount. */
    readonly params: { readonly name: string } | undefined,
  ) {
    this.headers = raw.headers;
    this.method = raw.method ?? 'POST';
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

  /**
   * `headers`: [name, value, name, value, ...], written in this order. `encoding` latin1: `body` is bytes, one
   * character each (an envelope's `wire`).
   */
  send(status: number, headers: string[], body: string, encoding: 'utf8' | 'latin1' = 'utf8'): void {
    this.raw.writeHead(status, headers);
    this.raw.end(body, encoding);
  }

  /**
   * What Fastify writes for `reply.code(status).headers(headers).send(body)` with a string body (or none): the names
   * lower-cased in their order, a later value of a name replacing an earlier one in its place; a JSON content type
   * without a charset given `; charset=utf-8`; then content-length (none for 204 and 304 without a body).
   * (call-front.test.ts compares the bytes with Fastify's.) `byteLength`: the body's, when the caller has it already;
   * `encoding` latin1: `body` is bytes, one character each (a result's `wire`).
   */
  sendAsFastify(
    status: number,
    headers: Readonly<Record<string, string>>,
    body: string | undefined,
    byteLength = body === undefined ? 0 : Buffer.byteLength(body),
    encoding: 'utf8' | 'latin1' = 'utf8',
  ): void {
    const list: string[] = [];
    for (const name of Object.keys(headers)) putHeader(list, name.toLowerCase(), headers[name]!);
    if (body !== undefined) {
      const type = list.indexOf('content-type');
      if (type !== -1 && JSON_WITHOUT_CHARSET.test(list[type + 1]!)) list[type + 1] = withCharset(list[type + 1]!);
      putHeader(list, 'content-length', String(byteLength));
    } else if (status !== 204 && status !== 304) putHeader(list, 'content-length', '0');
    this.raw.writeHead(status, list);
    if (body === undefined) this.raw.end();
    else this.raw.end(body, encoding);
  }
}

// The content types the gateway writes itself (bindings/http-json/caller-reply.ts): a bare media type naming json.
const JSON_WITHOUT_CHARSET = /^[a-z]+\/[a-z0-9.+-]*json[a-z0-9.+-]*$/;

/**
 * `type` with `; charset=utf-8`, the same string for every reply of that type: a concatenation made per reply is a
 * string V8 has to flatten, through its runtime, when Node checks the header value (about 0.25 µs of each HTTP+JSON
 * call under perf); a kept one is flattened once. The gateway writes a handful of types; more are not kept.
 */
function withCharset(type: string): string {
  let value = typesWithCharset.get(type);
  if (value === undefined) {
    value = `${type}; charset=utf-8`;
    if (typesWithCharset.size < MAX_KEPT_TYPES) typesWithCharset.set(type, value);
  }
  return value;
}
const typesWithCharset = new Map<string, string>();
const MAX_KEPT_TYPES = 16;

/** Sets `name` in a [name, value, ...] list: in its place when present, else at the end. */
export function putHeader(headers: string[], name: string, value: string): void {
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === name) {
      headers[i + 1] = value;
      return;
    }
  }
  headers.push(name, value);
}

export type CallRequest = FastifyRequest | DirectRequest;
export type CallReply = FastifyReply | DirectReply;
