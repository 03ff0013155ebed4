/**
 * The HTTP+JSON routes of every operation (spec 1.0.1 §5.3, §11.3; the
 * `/{tenant}` form of each, from a2a.proto's additional_bindings; A2A 0.3's
 * `/v1/...` forms, spec 0.3 §3.5.3), matched both ways: a caller's verb and
 * path → the operation, generation, path parameters and tenant; and an
 * operation with its values → the path to send a remote. Built from the
 * operation table, so a route exists once. Pure.
 */
import { OPERATION_LIST, restPathOf, type HttpVerb, type Operation, type ProtocolGeneration } from '../../a2a/operations.js';
import { decodeSegment, encodeSegment, splitRawPath } from './path-segments.js';

export interface RouteMatch {
  readonly operation: Operation;
  readonly generation: ProtocolGeneration;
  /** Path parameters by request field name (`id`, `taskId`), decoded. */
  readonly pathParams: Readonly<Record<string, string>>;
  /** The `/{tenant}` segment, decoded, when the tenant form was used. */
  readonly tenant?: string;
}

export type RouteMiss =
  /** The path is unsafe (see path-segments.ts). */
  | { readonly reason: 'INVALID_PATH'; readonly detail: string }
  /** No operation has this path. */
  | { readonly reason: 'UNKNOWN_OPERATION' }
  /** The path is an operation's, the verb is not: `allow` lists the verbs it takes. */
  | { readonly reason: 'HTTP_METHOD_NOT_ALLOWED'; readonly allow: readonly HttpVerb[]; readonly operation: Operation; readonly generation: ProtocolGeneration };

export type RouteResult = { readonly ok: true; readonly match: RouteMatch } | ({ readonly ok: false } & RouteMiss);

interface Piece {
  /** A fixed segment, e.g. "tasks" or "message:send". */
  readonly literal?: string;
  /** A request field bound to this segment, e.g. "id", with the `:action` that follows it, if any. */
  readonly param?: string;
  readonly suffix?: string;
}

interface CompiledRoute {
  readonly operation: Operation;
  readonly generation: ProtocolGeneration;
  readonly verbs: readonly HttpVerb[];
  readonly pieces: readonly Piece[];
  /** Routes whose parameter segment ends in an action (`{id}:cancel`) win over a bare `{id}`. */
  readonly specific: boolean;
}

function compile(template: string): Piece[] {
  return template
    .split('/')
    .filter((s) => s !== '')
    .map((segment) => {
      const m = /^\{(\w+)\}(.*)$/.exec(segment);
      if (!m) return { literal: segment };
      return m[2] === '' ? { param: m[1]! } : { param: m[1]!, suffix: m[2]! };
    });
}

/** SubscribeToTask is GET in a2a.proto and POST in the spec text and the SDKs: callers may use either. */
function verbsOf(operation: Operation): readonly HttpVerb[] {
  return operation.name === 'SubscribeToTask' ? ['POST', 'GET'] : [operation.rest.verb];
}

function routesOf(generation: ProtocolGeneration): CompiledRoute[] {
  return OPERATION_LIST.map((operation) => {
    const pieces = compile(restPathOf(operation, generation));
    return { operation, generation, verbs: verbsOf(operation), pieces, specific: pieces.some((p) => p.suffix !== undefined) };
  });
}

const ROUTES: Readonly<Record<ProtocolGeneration, readonly CompiledRoute[]>> = { '1.0': routesOf('1.0'), '0.3': routesOf('0.3') };
const BY_OPERATION: ReadonlyMap<string, CompiledRoute> = new Map(
  (['1.0', '0.3'] as const).flatMap((g) => ROUTES[g].map((r) => [`${g} ${r.operation.name}`, r] as const)),
);

interface Candidate {
  readonly route: CompiledRoute;
  readonly pathParams: Record<string, string>;
}

type TableMatch = { readonly candidates: Candidate[]; readonly badSegment: boolean };

function matchTable(routes: readonly CompiledRoute[], segments: readonly string[]): TableMatch {
  const candidates: Candidate[] = [];
  let badSegment = false;
  for (const route of routes) {
    if (route.pieces.length !== segments.length) continue;
    // Made once a route has a parameter to hold (most tried routes do not match, and most calls' routes have none).
    let pathParams: Record<string, string> | undefined;
    let matched = true;
    for (let i = 0; i < segments.length && matched; i++) {
      const piece = route.pieces[i]!;
      const raw = segments[i]!;
      if (piece.literal !== undefined) {
        matched = raw === piece.literal;
        continue;
      }
      const suffix = piece.suffix ?? '';
      if (!raw.endsWith(suffix) || raw.length === suffix.length) {
        matched = false;
        continue;
      }
      const value = decodeSegment(raw.slice(0, raw.length - suffix.length));
      if (value === undefined) {
        badSegment = true;
        matched = false;
        continue;
      }
      (pathParams ??= {})[piece.param!] = value;
    }
    if (matched) candidates.push({ route, pathParams: pathParams ?? {} });
  }
  return { candidates, badSegment };
}

/** A validated A2A-Version (or none): absent and 0.x mean A2A 0.3 (spec §3.6.2). */
function isLegacyVersion(version: string | undefined): boolean {
  return version === undefined || version.startsWith('0.');
}

/**
 * Matches a caller's request. `rawPath` is the path after the remote's base,
 * still percent-encoded, without the query; `version` is the caller's
 * validated A2A-Version. `/v1/...` is A2A 0.3's form when the version is 0.3
 * or absent, else the tenant "v1" of a 1.0 route (as the @a2a-js/sdk server
 * decides). A path without a tenant is tried first: `/tasks/tasks` is GetTask
 * of task "tasks", not ListTasks of tenant "tasks".
 */
export function matchRoute(verb: string, rawPath: string, version?: string): RouteResult {
  return LITERAL_ANSWERS.get(rawPath)?.get(verb) ?? matchRouteInFull(verb, rawPath, version);
}

/** matchRoute without the answers kept for literal paths: what they were worked out with, and the tests' reference. */
export function matchRouteInFull(verb: string, rawPath: string, version?: string): RouteResult {
  const split = splitRawPath(rawPath);
  if (!split.ok) return { ok: false, reason: 'INVALID_PATH', detail: split.problem };
  const segments = split.segments;

  let found: TableMatch = { candidates: [], badSegment: false };
  let tenant: string | undefined;
  if (segments[0] === 'v1' && isLegacyVersion(version)) found = matchTable(ROUTES['0.3'], segments);
  if (found.candidates.length === 0) {
    const plain = matchTable(ROUTES['1.0'], segments);
    found = { candidates: plain.candidates, badSegment: found.badSegment || plain.badSegment };
  }
  if (found.candidates.length === 0 && segments.length >= 2) {
    const tenanted = matchTable(ROUTES['1.0'], segments.slice(1));
    if (tenanted.candidates.length > 0) {
      tenant = decodeSegment(segments[0]!);
      if (tenant === undefined) return { ok: false, reason: 'INVALID_PATH', detail: 'tenant segment is not a safe value' };
    }
    found = { candidates: tenanted.candidates, badSegment: found.badSegment || tenanted.badSegment };
  }

  const { candidates } = found;
  if (candidates.length === 0) {
    return found.badSegment ? { ok: false, reason: 'INVALID_PATH', detail: 'path parameter is not a safe value' } : { ok: false, reason: 'UNKNOWN_OPERATION' };
  }
  const allowed = candidates.filter((c) => (c.route.verbs as readonly string[]).includes(verb));
  if (allowed.length === 0) {
    const first = candidates[0]!.route;
    const allow = [...new Set(candidates.flatMap((c) => c.route.verbs))];
    return { ok: false, reason: 'HTTP_METHOD_NOT_ALLOWED', allow, operation: first.operation, generation: first.generation };
  }
  const chosen = allowed.find((c) => c.route.specific) ?? allowed[0]!;
  return {
    ok: true,
    match: {
      operation: chosen.route.operation,
      generation: chosen.route.generation,
      pathParams: chosen.pathParams,
      ...(tenant === undefined ? {} : { tenant }),
    },
  };
}

/**
 * The answers for the paths made only of fixed segments (`/message:send`, `/message:stream`, `/tasks`, ...), worked
 * out once per verb by the full matcher: most calls take one of them, and a lookup answers them without splitting,
 * decoding and trying every route (about 0.4 µs of an HTTP+JSON call by microbenchmark, 0.7 under perf). Such an answer does not depend on
 * the A2A-Version: only a first segment `v1` does, and A2A 0.3's `/v1/...` paths are left to the full matcher. The
 * answers are frozen, as they are shared by every call. (test/unit/http-json-routes.test.ts checks each against the
 * full matcher.)
 */
const LITERAL_ANSWERS: ReadonlyMap<string, ReadonlyMap<string, RouteResult>> = new Map(
  ROUTES['1.0']
    .filter((route) => route.pieces.every((p) => p.literal !== undefined) && route.pieces[0]?.literal !== 'v1')
    .map((route) => {
      const path = `/${route.pieces.map((p) => p.literal).join('/')}`;
      const byVerb = new Map((['GET', 'POST', 'DELETE'] as const).map((verb) => [verb, frozen(matchRouteInFull(verb, path))] as const));
      return [path, byVerb] as const;
    }),
);

/** Freezes an answer, its match and its lists; not the operation it names (shared, and read on every call). */
function frozen(answer: RouteResult): RouteResult {
  if (answer.ok) {
    Object.freeze(answer.match.pathParams);
    Object.freeze(answer.match);
  } else if (answer.reason === 'HTTP_METHOD_NOT_ALLOWED') Object.freeze(answer.allow);
  return Object.freeze(answer);
}

/** The paths matchRoute answers by lookup (for the tests). */
export const LITERAL_ROUTE_PATHS: readonly string[] = [...LITERAL_ANSWERS.keys()];

/** Per operation object and generation: no key string is built per call. */
const ROUTE_OF: ReadonlyMap<Operation, Readonly<Record<ProtocolGeneration, CompiledRoute>>> = new Map(
  OPERATION_LIST.map((operation) => [operation, { '1.0': BY_OPERATION.get(`1.0 ${operation.name}`)!, '0.3': BY_OPERATION.get(`0.3 ${operation.name}`)! }]),
);
const PARAM_NAMES: ReadonlyMap<CompiledRoute, readonly string[]> = new Map(
  [...BY_OPERATION.values()].map((route) => [route, Object.freeze(route.pieces.flatMap((p) => (p.param === undefined ? [] : [p.param])))]),
);

function routeOf(operation: Operation, generation: ProtocolGeneration): CompiledRoute {
  return ROUTE_OF.get(operation)?.[generation] ?? BY_OPERATION.get(`${generation} ${operation.name}`)!;
}

/** Names of the path parameters of an operation's route (`id`, or `taskId` and `id`). */
export function pathParamNames(operation: Operation, generation: ProtocolGeneration): readonly string[] {
  return PARAM_NAMES.get(routeOf(operation, generation))!;
}

/**
 * The path of an operation with these parameter values, each percent-encoded
 * (`encodeSegment`), under `/{tenant}` when one is given. The values must be
 * safe segment values (path-segments.ts isSegmentValue); the caller checks.
 */
export function buildRoutePath(operation: Operation, generation: ProtocolGeneration, pathParams: Readonly<Record<string, string>>, tenant?: string): string {
  const route = routeOf(operation, generation);
  const segments = route.pieces.map((p) => (p.literal !== undefined ? p.literal : encodeSegment(pathParams[p.param!] ?? '') + (p.suffix ?? '')));
  if (tenant !== undefined && tenant !== '') segments.unshift(encodeSegment(tenant));
  return `/${segments.join('/')}`;
}
