/**
 * Turns a validated remote agent card into the card the gateway serves:
 * every interface a caller could use points at the gateway, interfaces the
 * gateway cannot carry are gone (or callers would bypass it), signatures are
 * gone (they no longer verify), and every text an LLM may read is sanitized
 * and bounded. Pure: no network, no clock.
 */
import type { ProtocolGeneration } from './methods.js';
import { pathOf, validateCard } from './card-validate.js';
import { CARD_BOUNDS, cleanText, cleanTextList, httpUrl, isRecord, sameOrigin, sanitizeTree } from './card-text.js';

export interface RewriteOptions {
  /** The configured remote URL: only interfaces on its origin are kept. */
  readonly remoteUrl: URL;
  /** Where callers reach this remote through the gateway; always ends with "/". */
  readonly gatewayRemoteUrl: string;
  /** Bound for each text member after sanitizing (UTF-8 bytes). */
  readonly maxCardTextBytes: number;
  /**
   * Where HTTP+JSON callers reach this remote through the gateway (no trailing slash, as the SDK clients
   * use it); unset: HTTP+JSON interfaces are dropped like any binding the gateway does not carry.
   */
  readonly httpJsonUrl?: string | undefined;
  /**
   * 1.0 cards: also list the bindings the gateway serves for this remote that its card lacks (it transcodes),
   * after the remote's own. Only when the card has at least one interface the gateway carries (a gRPC one counts
   * with `jsonRpcOptional`).
   */
  readonly advertise?: { readonly jsonrpc: boolean; readonly httpJson: boolean } | undefined;
  /**
   * 1.0 cards: no JSON-RPC or HTTP+JSON interface is not a problem here, because the caller adds another binding's
   * interfaces (gRPC, see bindings/grpc/card-interfaces.ts) and checks that the result has one.
   */
  readonly jsonRpcOptional?: boolean;
  /**
   * Whether the gateway carries push notifications (`server.push`). False: the card says
   * `capabilities.pushNotifications: false` whatever the remote's says, since the gateway refuses push configs.
   * True or unset: the remote's own value stays.
   */
  readonly pushNotifications?: boolean;
}

/** The card cannot be served (no usable interface, a hostile URL). `problem` is gateway-written. */
export class CardProblemError extends Error {
  override readonly name = 'CardProblemError';
  constructor(
    readonly problem: string,
    readonly reason: 'NO_USABLE_INTERFACE' | 'INVALID_AGENT_CARD' = 'NO_USABLE_INTERFACE',
  ) {
    super(problem);
  }
}

export const JSONRPC = 'JSONRPC';
export const HTTP_JSON = 'HTTP+JSON';

/** Skill bounds: a card with more skills than this is truncated, not refused. */
export const MAX_SKILLS = 100;
/** Per-skill lists (examples, tags, input/output modes). */
export const MAX_SKILL_LIST_ITEMS = 20;
/** Distinct JSON-RPC interfaces kept after rewriting (they differ only by protocolVersion/tenant). */
export const MAX_INTERFACES = 8;

/**
 * Members passed on from either generation. Anything else is ignored, as the
 * spec asks of receivers, and so never reaches the caller; `signatures` is
 * deliberately absent.
 */
const CARD_MEMBERS = new Set([
  'name', 'description', 'version', 'protocolVersion', 'provider', 'iconUrl', 'documentationUrl',
  'url', 'preferredTransport', 'additionalInterfaces', 'supportedInterfaces',
  'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills',
  'securitySchemes', 'security', 'securityRequirements', 'supportsAuthenticatedExtendedCard',
]);

const SKILL_MEMBERS = new Set([
  'id', 'name', 'description', 'tags', 'examples', 'inputModes', 'outputModes', 'security', 'securityRequirements',
]);

const snakeToCamel = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * ProtoJSON parsers accept `supported_interfaces` as well as `supportedInterfaces`;
 * the 1.0 schema allows both. Fold the snake_case form into the camelCase one
 * (the camelCase one wins) so no alias slips past the rewriting.
 */
function foldAliases(obj: Record<string, unknown>, allowed: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (allowed.has(key)) out[key] = value;
  }
  for (const [key, value] of Object.entries(obj)) {
    if (!key.includes('_')) continue;
    const camel = snakeToCamel(key);
    if (allowed.has(camel) && !Object.hasOwn(out, camel)) out[camel] = value;
  }
  return out;
}

export function rewriteCard(
  card: Record<string, unknown>,
  generation: ProtocolGeneration,
  opts: RewriteOptions,
): Record<string, unknown> {
  const src = foldAliases(card, CARD_MEMBERS);
  const out: Record<string, unknown> = {};
  const max = opts.maxCardTextBytes;

  for (const key of ['name', 'description', 'version', 'protocolVersion'] as const) {
    const text = cleanText(src[key], max);
    if (text !== undefined) out[key] = text;
  }
  if (isRecord(src.provider)) out.provider = rewriteProvider(src.provider, max);
  for (const key of ['iconUrl', 'documentationUrl'] as const) {
    const url = httpUrl(src[key]);
    if (url !== undefined) out[key] = url;
  }

  if (generation === '1.0') {
    out.supportedInterfaces = rewriteV10Interfaces(src.supportedInterfaces, opts);
    // Cards written for both generations also carry the 0.3 members; rewrite them too, or drop them.
    if (src.url !== undefined) {
      try {
        Object.assign(out, rewriteV03Interfaces(src, opts));
      } catch (err) {
        if (!(err instanceof CardProblemError)) throw err;
      }
    }
  } else {
    Object.assign(out, rewriteV03Interfaces(src, opts));
  }

  if (Array.isArray(src.skills)) out.skills = src.skills.filter(isRecord).slice(0, MAX_SKILLS).map((s) => rewriteSkill(s, max));
  if (src.securitySchemes !== undefined) out.securitySchemes = checkSchemeUrls(src.securitySchemes, ['securitySchemes']);

  for (const key of ['capabilities', 'defaultInputModes', 'defaultOutputModes', 'security', 'securityRequirements', 'supportsAuthenticatedExtendedCard'] as const) {
    if (src[key] !== undefined) out[key] = src[key];
  }
  if (opts.pushNotifications === false && isRecord(out.capabilities)) out.capabilities = withoutPush(out.capabilities);
  // One last walk over everything: what the steps above did not bound, this does.
  return sanitizeTree(out, max) as Record<string, unknown>;
}

/** Capabilities saying push notifications are not supported (both spellings a ProtoJSON parser reads replaced). */
function withoutPush(capabilities: Record<string, unknown>): Record<string, unknown> {
  const { push_notifications: _snake, pushNotifications: _camel, ...rest } = capabilities;
  return { ...rest, pushNotifications: false };
}

function rewriteProvider(provider: Record<string, unknown>, max: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const organization = cleanText(provider.organization, max);
  if (organization !== undefined) out.organization = organization;
  const url = httpUrl(provider.url);
  if (url !== undefined) out.url = url;
  return out;
}

function rewriteSkill(skill: Record<string, unknown>, max: number): Record<string, unknown> {
  const src = foldAliases(skill, SKILL_MEMBERS);
  const out: Record<string, unknown> = {};
  for (const key of ['id', 'name', 'description'] as const) {
    const text = cleanText(src[key], max);
    if (text !== undefined) out[key] = text;
  }
  for (const key of ['tags', 'examples', 'inputModes', 'outputModes'] as const) {
    const list = cleanTextList(src[key], MAX_SKILL_LIST_ITEMS, max);
    if (list !== undefined) out[key] = list;
  }
  for (const key of ['security', 'securityRequirements'] as const) {
    if (src[key] !== undefined) out[key] = src[key];
  }
  return out;
}

const NO_INTERFACE = "card offers no JSON-RPC interface on the configured remote's origin";
const NO_V10_INTERFACE = "card offers no JSON-RPC interface (and no HTTP+JSON one) on the configured remote's origin";

function rewriteV10Interfaces(value: unknown, opts: RewriteOptions): Record<string, unknown>[] {
  const kept = new Map<string, Record<string, unknown>>();
  const gatewayUrl = (binding: unknown): string | undefined =>
    binding === JSONRPC ? opts.gatewayRemoteUrl : binding === HTTP_JSON ? opts.httpJsonUrl : undefined;
  for (const raw of Array.isArray(value) ? value : []) {
    if (!isRecord(raw) || kept.size >= MAX_INTERFACES) continue;
    const entry = foldAliases(raw, new Set(['url', 'protocolBinding', 'protocolVersion', 'tenant']));
    // gRPC is put back by its own module (bindings/grpc/card-interfaces.ts); other origins would bypass the gateway.
    const url = gatewayUrl(entry.protocolBinding);
    if (url === undefined || !sameOrigin(entry.url, opts.remoteUrl)) continue;
    const rewritten: Record<string, unknown> = { url, protocolBinding: entry.protocolBinding };
    const version = cleanText(entry.protocolVersion, 32);
    if (version) rewritten.protocolVersion = version;
    const tenant = cleanText(entry.tenant, opts.maxCardTextBytes);
    if (tenant) rewritten.tenant = tenant;
    kept.set(JSON.stringify(rewritten), rewritten);
  }
  if (kept.size === 0 && opts.jsonRpcOptional && !opts.advertise) return [];
  if (kept.size === 0 && !opts.jsonRpcOptional) throw new CardProblemError(`supportedInterfaces: ${opts.httpJsonUrl === undefined ? NO_INTERFACE : NO_V10_INTERFACE}`);
  const list = [...kept.values()];
  // A card with gRPC only (jsonRpcOptional): the advertised bindings are transcoded to it, A2A 1.0's.
  const first = list[0] ?? { protocolVersion: '1.0' };
  const advertised = (binding: string, url: string | undefined): void => {
    if (url === undefined || list.some((e) => e.protocolBinding === binding)) return;
    list.push({ ...first, url, protocolBinding: binding });
  };
  if (opts.advertise?.jsonrpc) advertised(JSONRPC, opts.gatewayRemoteUrl);
  if (opts.advertise?.httpJson) advertised(HTTP_JSON, opts.httpJsonUrl);
  return list;
}

/** 0.3: `url` + `preferredTransport` (default JSONRPC) is one interface, `additionalInterfaces` the others. */
function rewriteV03Interfaces(src: Record<string, unknown>, opts: RewriteOptions): Record<string, unknown> {
  const preferred = src.preferredTransport ?? JSONRPC;
  const usable = (transport: unknown, url: unknown) => transport === JSONRPC && sameOrigin(url, opts.remoteUrl);
  const additional = Array.isArray(src.additionalInterfaces) ? src.additionalInterfaces.filter(isRecord) : [];
  const found = usable(preferred, src.url) || additional.some((i) => usable(i.transport, i.url));
  if (!found) throw new CardProblemError(`url/additionalInterfaces: ${NO_INTERFACE}`);
  const out: Record<string, unknown> = { url: opts.gatewayRemoteUrl, preferredTransport: JSONRPC };
  // Every usable interface rewrites to the same URL: after dedupe one entry is left.
  if (src.additionalInterfaces !== undefined) out.additionalInterfaces = [{ url: opts.gatewayRemoteUrl, transport: JSONRPC }];
  return out;
}

/**
 * Security scheme URLs (OAuth endpoints, OIDC discovery) are the remote's
 * business and stay as they are, but a caller may open them: anything not
 * http(s) makes the card unusable rather than silently half-usable.
 */
function checkSchemeUrls(value: unknown, path: (string | number)[], depth = 0): unknown {
  if (depth > CARD_BOUNDS.maxDepth) return undefined;
  if (Array.isArray(value)) return value.map((v, i) => checkSchemeUrls(v, [...path, i], depth + 1));
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' && /(Url|_url)$/.test(key)) {
      const url = httpUrl(item);
      if (url === undefined) throw new CardProblemError(`${pathOf([...path, key])} is not an http(s) URL`, 'INVALID_AGENT_CARD');
      out[key] = url;
    } else {
      out[key] = checkSchemeUrls(item, [...path, key], depth + 1);
    }
  }
  return out;
}

export type ExtendedCardRewrite =
  | { readonly ok: true; readonly generation: ProtocolGeneration; readonly card: Record<string, unknown> }
  | { readonly ok: false; readonly problem: string; readonly reason: CardProblemError['reason'] };

/**
 * For the result of `agent/getAuthenticatedExtendedCard` (0.3) or
 * `GetExtendedAgentCard` (1.0): the result is an agent card, rewritten the
 * same way as the public one.
 */
export function rewriteExtendedCardResult(result: unknown, opts: RewriteOptions): ExtendedCardRewrite {
  const validated = validateCard(result);
  if (!validated.ok) return { ok: false, problem: validated.problem, reason: 'INVALID_AGENT_CARD' };
  try {
    return { ok: true, generation: validated.generation, card: rewriteCard(validated.card, validated.generation, opts) };
  } catch (err) {
    if (err instanceof CardProblemError) return { ok: false, problem: err.problem, reason: err.reason };
    throw err;
  }
}
