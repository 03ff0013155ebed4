/**
 * Agent cards both ways: interfaces, the extended-card flag (spec 1.0
 * Appendix A.2.2), capabilities, skills, every security scheme, OAuth flows
 * and requirements; exact output, exact drops, valid for the target schema.
 */
import t, { type Test } from 'tap';
import type { ProtocolGeneration } from '../../src/a2a/operations.js';
import { bridgeCard, bridgeResult } from '../../src/a2a/bridge/index.js';
import { OPERATIONS } from '../../src/a2a/operations.js';
import { schemaProblem } from '../support/bridge-schemas.js';
import v03Sample from '../fixtures/cards/v03-spec-sample.json' with { type: 'json' };
import v10Sample from '../fixtures/cards/v10-spec-sample.json' with { type: 'json' };
import v03Grpc from '../fixtures/cards/v03-grpc-preferred.json' with { type: 'json' };
import v10Hostile from '../fixtures/cards/v10-hostile.json' with { type: 'json' };

function check(t: Test, from: ProtocolGeneration, input: unknown, expected: unknown, dropped: string[] = [], protocolVersion?: string): void {
  const to: ProtocolGeneration = from === '0.3' ? '1.0' : '0.3';
  const r = bridgeCard(from, to, input, protocolVersion === undefined ? {} : { protocolVersion });
  if (!r.ok) return void t.fail(r.problem);
  t.same(r.value, expected, `card ${from} → ${to}`);
  t.strictSame([...r.dropped].sort(), [...dropped].sort(), `card ${from} → ${to}: dropped`);
  t.equal(schemaProblem(to, 'result', 'GetExtendedAgentCard', r.value), undefined, `card ${from} → ${to}: valid`);
}

const base = { name: 'n', description: 'd', version: '1', defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [] };

const schemes03 = {
  key: { type: 'apiKey', in: 'header', name: 'X-Key', description: 'k' },
  basic: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  oauth: { type: 'oauth2', oauth2MetadataUrl: 'https://as.example/.well-known', flows: { authorizationCode: { authorizationUrl: 'https://as.example/a', tokenUrl: 'https://as.example/t', refreshUrl: 'https://as.example/r', scopes: { read: 'Read' } } } },
  oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://as.example/.well-known/openid-configuration' },
  mtls: { type: 'mutualTLS', description: 'client cert' },
};
const schemes10 = {
  key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key', description: 'k' } },
  basic: { httpAuthSecurityScheme: { scheme: 'bearer', bearerFormat: 'JWT' } },
  oauth: { oauth2SecurityScheme: { flows: { authorizationCode: { authorizationUrl: 'https://as.example/a', tokenUrl: 'https://as.example/t', refreshUrl: 'https://as.example/r', scopes: { read: 'Read' } } }, oauth2MetadataUrl: 'https://as.example/.well-known' } },
  oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: 'https://as.example/.well-known/openid-configuration' } },
  mtls: { mtlsSecurityScheme: { description: 'client cert' } },
};

const card03 = {
  ...base,
  url: 'https://gw.example/remotes/a/',
  preferredTransport: 'JSONRPC',
  protocolVersion: '0.3.0',
  additionalInterfaces: [{ url: 'https://gw.example/remotes/a/', transport: 'JSONRPC' }, { url: 'https://gw.example/remotes/a/rest', transport: 'HTTP+JSON' }],
  provider: { url: 'https://p.example', organization: 'P' },
  iconUrl: 'https://p.example/i.png',
  documentationUrl: 'https://p.example/docs',
  capabilities: { streaming: true, pushNotifications: false, extensions: [{ uri: 'https://ext.example/v1', description: 'e', required: true, params: { a: 1 } }] },
  supportsAuthenticatedExtendedCard: true,
  securitySchemes: schemes03,
  security: [{ oauth: ['read'] }, { key: [] }],
  skills: [{ id: 's', name: 'S', description: 'does', tags: ['t'], examples: ['e'], inputModes: ['a/b'], outputModes: ['c/d'], security: [{ oidc: ['openid'] }] }],
};
const card10 = {
  ...base,
  supportedInterfaces: [
    { url: 'https://gw.example/remotes/a/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'https://gw.example/remotes/a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ],
  provider: { url: 'https://p.example', organization: 'P' },
  iconUrl: 'https://p.example/i.png',
  documentationUrl: 'https://p.example/docs',
  capabilities: { streaming: true, pushNotifications: false, extensions: [{ uri: 'https://ext.example/v1', description: 'e', required: true, params: { a: 1 } }], extendedAgentCard: true },
  securitySchemes: schemes10,
  securityRequirements: [{ schemes: { oauth: { list: ['read'] } } }, { schemes: { key: { list: [] } } }],
  skills: [{ id: 's', name: 'S', description: 'does', tags: ['t'], examples: ['e'], inputModes: ['a/b'], outputModes: ['c/d'], securityRequirements: [{ schemes: { oidc: { list: ['openid'] } } }] }],
};

t.test('a full card both ways (every security scheme, requirements, skills, extensions)', async (t) => {
  check(t, '0.3', card03, card10);
  check(t, '1.0', card10, card03);
  const r = bridgeResult(OPERATIONS.GetExtendedAgentCard, '1.0', '0.3', card10);
  t.same(r.ok && r.value, card03, 'GetExtendedAgentCard results are cards');
});

t.test('interfaces: version stated for the target, duplicates once, tenant has no 0.3 place', async (t) => {
  const only = { ...base, capabilities: {} };
  check(t, '0.3', { ...only, url: 'https://a.example', protocolVersion: '0.2.9' },
    { ...only, supportedInterfaces: [{ url: 'https://a.example', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] });
  check(t, '0.3', { ...only, url: 'https://a.example', preferredTransport: 'GRPC', additionalInterfaces: [{ url: 'https://b.example' }] },
    { ...only, supportedInterfaces: [{ url: 'https://a.example', protocolBinding: 'GRPC', protocolVersion: '1.1' }] }, ['card.additionalInterfaces[]'], '1.1');
  check(t, '1.0', { ...only, supportedInterfaces: [
    { url: 'https://a.example', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme' },
    { url: 'https://a.example', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    { protocolBinding: 'GRPC' },
  ] }, { ...only, url: 'https://a.example', preferredTransport: 'JSONRPC', protocolVersion: '0.3.0' }, ['card.supportedInterfaces[].tenant', 'card.supportedInterfaces[]']);
  check(t, '1.0', { ...only, supportedInterfaces: [] }, { ...only, url: '', preferredTransport: 'JSONRPC', protocolVersion: '0.3.0' });
});

t.test('what the other generation has no place for is dropped and named', async (t) => {
  const only = { ...base, capabilities: {} };
  check(t, '0.3', { ...only, url: 'u', capabilities: { stateTransitionHistory: true }, signatures: [{ protected: 'p', signature: 's' }], securitySchemes: {
    multi: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 't', scopes: {} }, password: { tokenUrl: 't', scopes: {} } } },
    weird: { type: 'kerberos' },
  } }, { ...only, supportedInterfaces: [{ url: 'u', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], securitySchemes: {
    multi: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 't', scopes: {} } } } },
  } }, ['card.capabilities.stateTransitionHistory', 'card.signatures', 'card.securitySchemes.*.flows.password', 'card.securitySchemes.*']);
  check(t, '1.0', { ...only, supportedInterfaces: [], securitySchemes: {
    dev: { oauth2SecurityScheme: { flows: { deviceCode: { deviceAuthorizationUrl: 'd', tokenUrl: 't', scopes: {} } } } },
    pkce: { oauth2SecurityScheme: { flows: { authorizationCode: { authorizationUrl: 'a', tokenUrl: 't', scopes: { s: 'S', n: 3 }, pkceRequired: true } } } },
    body: { apiKeySecurityScheme: { location: 'body', name: 'k' } },
    two: { httpAuthSecurityScheme: { scheme: 'basic' }, mtlsSecurityScheme: {} },
  } }, { ...only, url: '', preferredTransport: 'JSONRPC', protocolVersion: '0.3.0', securitySchemes: {
    dev: { type: 'oauth2', flows: {} },
    pkce: { type: 'oauth2', flows: { authorizationCode: { authorizationUrl: 'a', tokenUrl: 't', scopes: { s: 'S' } } } },
    body: { type: 'apiKey', in: 'header', name: 'k' },
    two: { type: 'http', scheme: 'basic' },
  } }, [
    'card.securitySchemes.*.oauth2SecurityScheme.flows.deviceCode',
    'card.securitySchemes.*.oauth2SecurityScheme.flows.authorizationCode.pkceRequired',
    'card.securitySchemes.*.oauth2SecurityScheme.flows.authorizationCode.scopes.*',
    'card.securitySchemes.*.apiKeySecurityScheme.location',
    'card.securitySchemes.*.mtlsSecurityScheme',
  ]);
});

t.test('the gateway\'s card fixtures (spec samples, a gRPC-preferred card, a hostile card) validate in the other generation', async (t) => {
  const cases: [ProtocolGeneration, unknown, string[]][] = [
    ['0.3', v03Sample, ['card.signatures']],
    ['1.0', v10Sample, ['card.signatures']],
    ['0.3', v03Grpc, ['card.signatures']],
    ['1.0', v10Hostile, ['card.*', 'card.signatures', 'card.skills[].*']],
  ];
  for (const [from, card, dropped] of cases) {
    const to: ProtocolGeneration = from === '0.3' ? '1.0' : '0.3';
    const r = bridgeCard(from, to, card);
    if (!r.ok) return void t.fail(r.problem);
    t.equal(schemaProblem(to, 'result', 'GetExtendedAgentCard', r.value), undefined);
    t.strictSame([...r.dropped].sort(), dropped);
  }
});

t.test('a card that is not an object has no counterpart', async (t) => {
  t.match(bridgeCard('1.0', '0.3', []), { ok: false, code: -32006 });
  t.match(bridgeCard('0.3', '1.0', 'card'), { ok: false, code: -32006 });
});
