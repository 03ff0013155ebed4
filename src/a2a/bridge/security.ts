/**
 * Security schemes and requirements of agent cards. 0.3 follows OpenAPI
 * (`{type: "apiKey", in, name}`, several OAuth flows side by side,
 * requirements as `{name: [scopes]}`); 1.0 wraps each scheme in the member
 * that names it (`{apiKeySecurityScheme: {location, name}}`), has one OAuth
 * flow (a proto oneof, which adds `deviceCode` and `pkceRequired`), and writes
 * requirements as `{schemes: {name: {list: [scopes]}}}`.
 */
import { copyBoolean, copyNonEmptyString, copyString, Drops, isRecord, join, mapList, mapObject, readMembers, requiredString, stringList, type JsonObject } from './json.js';

/** [0.3 `type`, 1.0 member, [0.3 member, 1.0 member, required][]]: one row per kind of scheme. */
export const SECURITY_SCHEMES: readonly (readonly [v03: string, v10: string, members: readonly (readonly [string, string, boolean])[]])[] = [
  ['apiKey', 'apiKeySecurityScheme', [['in', 'location', true], ['name', 'name', true], ['description', 'description', false]]],
  ['http', 'httpAuthSecurityScheme', [['scheme', 'scheme', true], ['bearerFormat', 'bearerFormat', false], ['description', 'description', false]]],
  ['oauth2', 'oauth2SecurityScheme', [['flows', 'flows', true], ['oauth2MetadataUrl', 'oauth2MetadataUrl', false], ['description', 'description', false]]],
  ['openIdConnect', 'openIdConnectSecurityScheme', [['openIdConnectUrl', 'openIdConnectUrl', true], ['description', 'description', false]]],
  ['mutualTLS', 'mtlsSecurityScheme', [['description', 'description', false]]],
];

/** OAuth flows in proto order (1.0 keeps the first a 0.3 card lists), with the members each has and which are required. */
export const OAUTH_FLOWS: readonly (readonly [flow: string, required: readonly string[], optional: readonly string[]])[] = [
  ['authorizationCode', ['authorizationUrl', 'tokenUrl'], ['refreshUrl']],
  ['clientCredentials', ['tokenUrl'], ['refreshUrl']],
  ['implicit', ['authorizationUrl'], ['refreshUrl']],
  ['password', ['tokenUrl'], ['refreshUrl']],
  ['deviceCode', ['deviceAuthorizationUrl', 'tokenUrl'], ['refreshUrl']],
];
const FLOWS_03 = new Set(['authorizationCode', 'clientCredentials', 'implicit', 'password']);
const API_KEY_LOCATIONS_03 = new Set(['cookie', 'header', 'query']);

function scopes(value: unknown, path: string, drops: Drops): Record<string, string> {
  return mapObject(value ?? {}, path, drops, (scope, p) => (typeof scope === 'string' ? scope : void drops.add(p))) ?? {};
}

function flowTo(generation: '0.3' | '1.0', flow: string, value: unknown, path: string, drops: Drops): JsonObject {
  const [, required, optional] = OAUTH_FLOWS.find(([name]) => name === flow)!;
  const f = readMembers(value, [...required, ...optional, 'scopes', 'pkceRequired'], generation === '1.0' ? '0.3' : '1.0', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = {};
  for (const member of required) out[member] = requiredString(f, member, path, drops);
  for (const member of optional) (generation === '0.3' ? copyNonEmptyString : copyStringTo)(f, member, out, path, drops);
  out.scopes = scopes(f.scopes, join(path, 'scopes'), drops);
  if (flow === 'authorizationCode' && generation === '1.0') copyBoolean(f, 'pkceRequired', out, 'pkceRequired', path, drops);
  else if (f.pkceRequired !== undefined && f.pkceRequired !== false) drops.add(join(path, 'pkceRequired'));
  return out;
}

function copyStringTo(from: JsonObject, name: string, to: JsonObject, path: string, drops: Drops): void {
  copyString(from, name, to, name, path, drops);
}

/** 0.3 lists flows side by side, 1.0 holds one: the first in proto order is kept. */
function flowsTo(generation: '0.3' | '1.0', value: unknown, path: string, drops: Drops): JsonObject {
  const names = OAUTH_FLOWS.map(([name]) => name);
  const flows = readMembers(value, names, generation === '1.0' ? '0.3' : '1.0', path, drops) ?? (drops.add(path), {});
  const out: JsonObject = {};
  for (const name of names) {
    if (flows[name] === undefined) continue;
    const fits = generation === '1.0' ? Object.keys(out).length === 0 : FLOWS_03.has(name);
    if (fits) out[name] = flowTo(generation, name, flows[name], join(path, name), drops);
    else drops.add(join(path, name));
  }
  return out;
}

function schemeTo10(value: unknown, path: string, drops: Drops): JsonObject | undefined {
  const type = isRecord(value) ? value.type : undefined;
  const row = SECURITY_SCHEMES.find(([v03]) => v03 === type);
  if (!row) return void drops.add(path);
  const [, member, members] = row;
  const s = readMembers(value, ['type', ...members.map(([m03]) => m03)], '0.3', path, drops)!;
  const inner: JsonObject = {};
  for (const [m03, m10, required] of members) {
    if (m03 === 'flows') inner.flows = flowsTo('1.0', s.flows, join(path, 'flows'), drops);
    else if (required) inner[m10] = requiredString(s, m03, path, drops);
    else copyString(s, m03, inner, m10, path, drops);
  }
  return { [member]: inner };
}

function schemeTo03(value: unknown, path: string, drops: Drops): JsonObject | undefined {
  const wrapper = readMembers(value, SECURITY_SCHEMES.map(([, m10]) => m10), '1.0', path, drops);
  const present = SECURITY_SCHEMES.filter(([, m10]) => wrapper?.[m10] !== undefined);
  const row = present[0];
  if (!wrapper || !row) return void drops.add(path);
  for (const [, extra] of present.slice(1)) drops.add(join(path, extra));
  const [type, member, members] = row;
  const innerPath = join(path, member);
  const s = readMembers(wrapper[member], members.map(([, m10]) => m10), '1.0', innerPath, drops) ?? (drops.add(innerPath), {});
  const out: JsonObject = { type };
  for (const [m03, m10, required] of members) {
    if (m10 === 'flows') {
      out.flows = flowsTo('0.3', s.flows, join(innerPath, 'flows'), drops);
    } else if (m10 === 'location') {
      // 1.0 widened `in` to free text; 0.3 knows three places. Elsewhere is read as a header (OpenAPI's usual place).
      const location = requiredString(s, 'location', innerPath, drops);
      if (!API_KEY_LOCATIONS_03.has(location)) drops.add(join(innerPath, 'location'));
      out.in = API_KEY_LOCATIONS_03.has(location) ? location : 'header';
    } else if (required) {
      out[m03] = requiredString(s, m10, innerPath, drops);
    } else if (s[m10] !== '') {
      copyString(s, m10, out, m03, innerPath, drops);
    }
  }
  return out;
}

/** `securitySchemes` (a map of name → scheme) of a card, into `generation`. */
export function securitySchemesTo(generation: '0.3' | '1.0', value: unknown, path: string, drops: Drops): Record<string, JsonObject> | undefined {
  return mapObject(value, path, drops, (s, p) => (generation === '1.0' ? schemeTo10(s, p, drops) : schemeTo03(s, p, drops)));
}

/** A list of security requirements (card or skill), into `generation`. */
export function requirementsTo(generation: '0.3' | '1.0', value: unknown, path: string, drops: Drops): JsonObject[] | undefined {
  return mapList(value, path, drops, (r, p) => {
    if (generation === '1.0') {
      const schemes = mapObject(r, p, drops, (list, lp) => {
        const scopes = stringList(list, lp, drops);
        return scopes === undefined ? undefined : { list: scopes };
      });
      return schemes === undefined ? undefined : { schemes };
    }
    const req = readMembers(r, ['schemes'], '1.0', p, drops);
    if (!req) return void drops.add(p);
    return mapObject(req.schemes ?? {}, join(p, 'schemes'), drops, (entry, ep) => {
      const list = readMembers(entry, ['list'], '1.0', ep, drops);
      return list === undefined ? void drops.add(ep) : (stringList(list.list ?? [], join(ep, 'list'), drops) ?? []);
    });
  });
}
