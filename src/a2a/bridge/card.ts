/**
 * Agent cards, 0.3 ↔ 1.0. 0.3 names one endpoint (`url` + `preferredTransport`)
 * and lists others in `additionalInterfaces`, with one `protocolVersion` for
 * the card; 1.0 lists every endpoint in `supportedInterfaces[]` with its
 * binding and version. `supportsAuthenticatedExtendedCard` moved into
 * `capabilities.extendedAgentCard` (spec 1.0 Appendix A.2.2); security shapes
 * are in security.ts.
 *
 * The bridged card describes what the caller speaks to the gateway, so every
 * interface states the target generation (`protocolVersion`, default
 * TARGET_PROTOCOL_VERSION). Signatures are dropped: they sign the other
 * generation's bytes and could not verify.
 */
import { Code } from '../../envelope/codes.js';
import type { ProtocolGeneration } from '../operations.js';
import {
  copyBoolean,
  copyNonEmptyString,
  copyString,
  copyStringList,
  copyStruct,
  done,
  Drops,
  isRecord,
  join,
  mapList,
  noCounterpart,
  readMembers,
  requiredString,
  stringList,
  type Bridged,
  type JsonObject,
} from './json.js';
import { hasId } from './message.js';
import { requirementsTo, securitySchemesTo } from './security.js';

/** The version a bridged card's interfaces state, per target generation (0.3's schema default; 1.0's Major.Minor). */
export const TARGET_PROTOCOL_VERSION: Readonly<Record<ProtocolGeneration, string>> = { '0.3': '0.3.0', '1.0': '1.0' };
/** A 0.3 card without `preferredTransport` means JSON-RPC (0.3 schema default). */
export const DEFAULT_TRANSPORT_03 = 'JSONRPC';

const SHARED = ['name', 'description', 'version', 'provider', 'iconUrl', 'documentationUrl', 'capabilities', 'securitySchemes', 'defaultInputModes', 'defaultOutputModes', 'skills', 'signatures'];
const CARD_03 = [...SHARED, 'url', 'preferredTransport', 'additionalInterfaces', 'protocolVersion', 'security', 'supportsAuthenticatedExtendedCard'];
// `security` is not a 1.0 member, but the 1.0 spec's own sample card (§8.5) writes its requirements there, 0.3-shaped.
const CARD_10 = [...SHARED, 'supportedInterfaces', 'securityRequirements', 'security'];
const CAPABILITIES_03 = ['streaming', 'pushNotifications', 'stateTransitionHistory', 'extensions'];
const CAPABILITIES_10 = ['streaming', 'pushNotifications', 'extensions', 'extendedAgentCard'];
const EXTENSION = ['uri', 'description', 'required', 'params'];
const SKILL_SHARED = ['id', 'name', 'description', 'tags', 'examples', 'inputModes', 'outputModes'];
const INTERFACE_10 = ['url', 'protocolBinding', 'protocolVersion', 'tenant'];

export interface BridgeCardOptions {
  /** What every interface of the bridged card states as its protocol version; default TARGET_PROTOCOL_VERSION[to]. */
  readonly protocolVersion?: string;
}

function extensionTo(generation: ProtocolGeneration, value: unknown, path: string, drops: Drops): JsonObject {
  const from = generation === '1.0' ? '0.3' : '1.0';
  const e = readMembers(value, EXTENSION, from, path, drops)!;
  const out: JsonObject = { uri: requiredString(e, 'uri', path, drops) };
  (generation === '0.3' ? copyNonEmptyString : copyStringSame)(e, 'description', out, path, drops);
  copyBoolean(e, 'required', out, 'required', path, drops);
  copyStruct(e, 'params', out, 'params', path, drops);
  return out;
}

function copyStringSame(from: JsonObject, name: string, to: JsonObject, path: string, drops: Drops): void {
  copyString(from, name, to, name, path, drops);
}

function capabilitiesTo(generation: ProtocolGeneration, value: unknown, extendedCard: unknown, out: JsonObject, path: string, drops: Drops): void {
  const from = generation === '1.0' ? '0.3' : '1.0';
  const c = readMembers(value, from === '0.3' ? CAPABILITIES_03 : CAPABILITIES_10, from, path, drops) ?? (value === undefined ? {} : (drops.add(path), {}));
  const caps: JsonObject = {};
  copyBoolean(c, 'streaming', caps, 'streaming', path, drops);
  copyBoolean(c, 'pushNotifications', caps, 'pushNotifications', path, drops);
  // stateTransitionHistory (0.3) is gone from 1.0: tasks carry their history either way.
  if (c.stateTransitionHistory !== undefined && c.stateTransitionHistory !== false) drops.add(join(path, 'stateTransitionHistory'));
  const extensions = mapList(c.extensions, join(path, 'extensions'), drops, (e, p) => (hasId(e, 'uri') ? extensionTo(generation, e, p, drops) : void drops.add(p)));
  if (extensions !== undefined) caps.extensions = extensions;
  if (generation === '1.0') {
    if (typeof extendedCard === 'boolean') caps.extendedAgentCard = extendedCard;
    else if (extendedCard !== undefined) drops.add('card.supportsAuthenticatedExtendedCard');
    out.capabilities = caps;
  } else {
    out.capabilities = caps;
    copyBoolean(c, 'extendedAgentCard', out, 'supportsAuthenticatedExtendedCard', path, drops);
  }
}

function skillTo(generation: ProtocolGeneration, value: unknown, path: string, drops: Drops): JsonObject {
  const from = generation === '1.0' ? '0.3' : '1.0';
  const security = from === '0.3' ? 'security' : 'securityRequirements';
  const s = readMembers(value, [...SKILL_SHARED, security], from, path, drops)!;
  const out: JsonObject = {
    id: requiredString(s, 'id', path, drops),
    name: requiredString(s, 'name', path, drops),
    description: requiredString(s, 'description', path, drops),
    tags: s.tags === undefined ? [] : (stringList(s.tags, join(path, 'tags'), drops) ?? []),
  };
  for (const list of ['examples', 'inputModes', 'outputModes']) copyStringList(s, list, out, list, path, drops);
  const requirements = requirementsTo(generation, s[security], join(path, security), drops);
  if (requirements !== undefined) out[generation === '1.0' ? 'securityRequirements' : 'security'] = requirements;
  return out;
}

function provider(value: unknown, out: JsonObject, path: string, drops: Drops, from: ProtocolGeneration): void {
  if (value === undefined) return;
  const p = readMembers(value, ['url', 'organization'], from, path, drops);
  if (!p) return void drops.add(path);
  out.provider = { url: requiredString(p, 'url', path, drops), organization: requiredString(p, 'organization', path, drops) };
}

/** Interfaces as [url, binding] pairs, first occurrence first, duplicates (which differ only by version) once. */
function distinct(interfaces: readonly (readonly [string, string])[]): (readonly [string, string])[] {
  const seen = new Set<string>();
  return interfaces.filter(([url, binding]) => {
    const key = `${binding} ${url}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function interfacesTo10(c: JsonObject, version: string, drops: Drops): JsonObject[] {
  const primary: (readonly [string, string])[] = [];
  if (typeof c.url === 'string') {
    const binding = typeof c.preferredTransport === 'string' ? c.preferredTransport : DEFAULT_TRANSPORT_03;
    if (c.preferredTransport !== undefined && typeof c.preferredTransport !== 'string') drops.add('card.preferredTransport');
    primary.push([c.url, binding]);
  } else if (c.url !== undefined) {
    drops.add('card.url');
  }
  const more = mapList(c.additionalInterfaces, 'card.additionalInterfaces', drops, (i, p) => {
    const intf = readMembers(i, ['url', 'transport'], '0.3', p, drops);
    return typeof intf?.url === 'string' && typeof intf.transport === 'string' ? ([intf.url, intf.transport] as const) : void drops.add(p);
  });
  return distinct([...primary, ...(more ?? [])]).map(([url, protocolBinding]) => ({ url, protocolBinding, protocolVersion: version }));
}

function interfacesTo03(c: JsonObject, version: string, out: JsonObject, drops: Drops): void {
  const list = mapList(c.supportedInterfaces, 'card.supportedInterfaces', drops, (i, p) => {
    const intf = readMembers(i, INTERFACE_10, '1.0', p, drops);
    if (typeof intf?.url !== 'string') return void drops.add(p);
    // 0.3 has no tenant: a caller of the bridged card cannot name one.
    if (intf.tenant !== undefined && intf.tenant !== '') drops.add(join(p, 'tenant'));
    return [intf.url, typeof intf.protocolBinding === 'string' && intf.protocolBinding !== '' ? intf.protocolBinding : DEFAULT_TRANSPORT_03] as const;
  });
  const interfaces = distinct(list ?? []);
  const [primary] = interfaces;
  out.url = primary?.[0] ?? '';
  out.preferredTransport = primary?.[1] ?? DEFAULT_TRANSPORT_03;
  out.protocolVersion = version;
  // 0.3 §5.6: additionalInterfaces lists every interface, the main one included.
  if (interfaces.length > 1) out.additionalInterfaces = interfaces.map(([url, transport]) => ({ url, transport }));
}

/** An agent card written in `from`, as a card of `to`. */
export function bridgeCard(from: ProtocolGeneration, to: ProtocolGeneration, card: unknown, options: BridgeCardOptions = {}): Bridged<JsonObject> {
  const drops = new Drops();
  if (from === to) return done(isRecord(card) ? card : {}, drops);
  const c = readMembers(card, from === '0.3' ? CARD_03 : CARD_10, from, 'card', drops);
  if (!c) return noCounterpart(Code.InvalidAgentResponse, 'the agent card is not an object', drops);
  const version = options.protocolVersion ?? TARGET_PROTOCOL_VERSION[to];
  const out: JsonObject = { name: requiredString(c, 'name', 'card', drops), description: requiredString(c, 'description', 'card', drops) };
  if (to === '1.0') out.supportedInterfaces = interfacesTo10(c, version, drops);
  else interfacesTo03(c, version, out, drops);
  provider(c.provider, out, 'card.provider', drops, from);
  out.version = requiredString(c, 'version', 'card', drops);
  (to === '0.3' ? copyNonEmptyString : copyStringSame)(c, 'documentationUrl', out, 'card', drops);
  capabilitiesTo(to, c.capabilities, c.supportsAuthenticatedExtendedCard, out, 'card.capabilities', drops);
  const schemes = securitySchemesTo(to, c.securitySchemes, 'card.securitySchemes', drops);
  if (schemes !== undefined) out.securitySchemes = schemes;
  const requirements =
    from === '0.3'
      ? requirementsTo('1.0', c.security, 'card.security', drops)
      : c.securityRequirements === undefined && c.security !== undefined
        ? requirementsTo('0.3', requirementsTo('1.0', c.security, 'card.security', drops), 'card.security', drops)
        : requirementsTo('0.3', c.securityRequirements, 'card.securityRequirements', drops);
  if (requirements !== undefined) out[to === '1.0' ? 'securityRequirements' : 'security'] = requirements;
  if (from === '1.0' && c.securityRequirements !== undefined && c.security !== undefined) drops.add('card.security');
  out.defaultInputModes = c.defaultInputModes === undefined ? [] : (stringList(c.defaultInputModes, 'card.defaultInputModes', drops) ?? []);
  out.defaultOutputModes = c.defaultOutputModes === undefined ? [] : (stringList(c.defaultOutputModes, 'card.defaultOutputModes', drops) ?? []);
  out.skills = mapList(c.skills ?? [], 'card.skills', drops, (s, p) => (hasId(s, 'id') ? skillTo(to, s, p, drops) : void drops.add(p))) ?? [];
  (to === '0.3' ? copyNonEmptyString : copyStringSame)(c, 'iconUrl', out, 'card', drops);
  if (c.signatures !== undefined) drops.add('card.signatures');
  return done(out, drops);
}
