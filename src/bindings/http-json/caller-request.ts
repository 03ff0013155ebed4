/**
 * An HTTP+JSON caller's request → the internal A2ACall, or the ErrorOutcome
 * the caller gets instead (its own binding's shape is made by
 * caller-reply.ts). In order: query string, service parameters (A2A-Version
 * from header or query), route, Content-Type, body, query fields, path
 * parameters merged into the request message (the path wins for tenant and
 * ids, as the @a2a-js/sdk server decides), ProtoJSON validation. Pure.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Operation, ProtocolGeneration } from '../../a2a/operations.js';
import type { A2ACall } from '../../core/call.js';
import type { ErrorOutcome } from '../../core/outcome.js';
import type { Reason } from '../../envelope/codes.js';
import { gatewayErrorOutcome } from '../error-outcome.js';
import { mergePathFields } from './params-merge.js';
import { queryVersions, readQueryFields, splitQuery } from './query-params.js';
import { contentTypeProblem, readRequestBody } from './request-body.js';
import { checkRequest } from './request-schema.js';
import { matchRoute } from './routes.js';
import { serviceParamsOf } from './service-params.js';

export interface RestCallerRequest {
  /** The HTTP method as received (upper case). */
  readonly method: string;
  /** The raw path after the remote's base (`/tasks/t%201:cancel`), still percent-encoded, no query. */
  readonly path: string;
  /** The raw query string without `?` ('' for none). */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  /** The body as read (already capped by the reader at maxRequestBytes + 1 or refused); undefined for none. */
  readonly body?: Buffer | undefined;
}

export interface RestCallerContext {
  readonly remote: string;
  readonly requestId: string;
  /** Caller headers policy forwards (src/policy/header-policy.ts buildUpstreamHeaders). */
  readonly forwarded: Readonly<Record<string, string>>;
  readonly maxRequestBytes: number;
  readonly maxJsonDepth: number;
}

export type RestCallerParse =
  | { readonly ok: true; readonly call: A2ACall }
  | {
      readonly ok: false;
      readonly error: ErrorOutcome;
      /** What was recognized before the failure, for logs and metrics. */
      readonly operation?: Operation;
      readonly generation: ProtocolGeneration;
    };

export function parseRestCall(req: RestCallerRequest, callerInfo: RestCallerContext): RestCallerParse {
  let operation: Operation | undefined;
  let generation: ProtocolGeneration = '1.0';
  const refuse = (reason: Reason, detail?: string, extra: { metadata?: Record<string, string>; headers?: Record<string, string> } = {}): RestCallerParse => ({
    ok: false,
    error: gatewayErrorOutcome(reason, { remote: callerInfo.remote, ...extra }, detail),
    ...(operation === undefined ? {} : { operation }),
    generation,
  });

  const query = splitQuery(req.query);
  if (!query.ok) return refuse('INVALID_PARAMS', query.detail);
  const service = serviceParamsOf(req.headers, queryVersions(query), callerInfo.forwarded);
  if (!service.ok) return refuse(service.reason, service.detail);

  const route = matchRoute(req.method, req.path, service.service.a2aVersion);
  if (!route.ok) {
    if (route.reason === 'HTTP_METHOD_NOT_ALLOWED') {
      operation = route.operation;
      generation = route.generation;
      return refuse('HTTP_METHOD_NOT_ALLOWED', `${route.operation.name} takes ${route.allow.join(' or ')}`, { headers: { allow: route.allow.join(', ') } });
    }
    return refuse(route.reason, route.reason === 'INVALID_PATH' ? route.detail : undefined);
  }
  const { match } = route;
  operation = match.operation;
  generation = match.generation;
  // 0.3's REST bodies and results are ProtoJSON of the 0.3 proto, not the 0.3 JSON-RPC shapes an A2ACall
  // of generation 0.3 carries; translating them belongs to the version bridge, so they are refused, precisely.
  if (generation === '0.3') return refuse('UNSUPPORTED_BINDING_VERSION', 'use A2A 1.0 paths and an A2A-Version: 1.0 header, or JSON-RPC');

  let bodyText: string | undefined;
  let params: Record<string, unknown> = {};
  if (operation.rest.body && req.body !== undefined && req.body.length > 0) {
    const contentType = contentTypeProblem(req.headers);
    if (contentType !== undefined) return refuse('UNSUPPORTED_CONTENT_TYPE', contentType);
    const body = readRequestBody(req.body, callerInfo);
    if (!body.ok) return refuse(body.reason, body.detail);
    if (body.value !== undefined) {
      bodyText = body.text;
      params = body.value;
    }
  }
  if (!operation.rest.body) {
    const fields = readQueryFields(query.pairs, operation.rest.query);
    if (!fields.ok) return refuse('INVALID_PARAMS', fields.detail);
    params = { ...fields.values };
  }

  const merged = mergePathFields(params, bodyText, match.pathParams, match.tenant);
  const check = checkRequest(operation, merged.params);
  if (!check.ok) return refuse('INVALID_PARAMS', check.problem, { metadata: { field: check.field } });

  const tenant = match.tenant ?? (typeof merged.params.tenant === 'string' && merged.params.tenant !== '' ? merged.params.tenant : undefined);
  return {
    ok: true,
    call: {
      remote: callerInfo.remote,
      operation,
      generation,
      paramsJson: merged.json,
      params: merged.params,
      ...(tenant === undefined ? {} : { tenant }),
      service: service.service,
      caller: { binding: 'http+json', requestId: callerInfo.requestId },
    },
  };
}
