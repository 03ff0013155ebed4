/**
 * The `auth` section of a remote (and of the trace exporter's headers): where
 * a credential comes from, as TypeBox schemas (one source for the types and
 * the JSON Schema). The credential source that reads them at run time is
 * policy/credentials.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { HOP_BY_HOP } from '../http/hop-by-hop.js';

/** Header names a credential may not take: they would break or hijack the HTTP exchange. */
export const FORBIDDEN_CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  ...HOP_BY_HOP,
  'host',
  'content-length',
  'content-type',
]);

const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

// JSON Schema patterns have no case-insensitive flag, so spell each forbidden
// name as [cC][oO]... inside a negative lookahead. (The names hold only
// letters and '-', which needs no escape outside a class, even with the u flag.)
const caseless = (word: string): string =>
  [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');
export const CREDENTIAL_HEADER_NAME_PATTERN =
  `^(?!(?:${[...FORBIDDEN_CREDENTIAL_HEADERS].map(caseless).join('|')})$)[!#$%&'*+.^_\`|~0-9A-Za-z-]+$`;

const EnvName = (description: string) => Type.String({ pattern: ENV_NAME_PATTERN, description });

export const BearerEnvAuthSchema = Type.Object(
  { type: Type.Literal('bearer'), tokenEnv: EnvName('environment variable holding the token') },
  { additionalProperties: false },
);
export const BearerFileAuthSchema = Type.Object(
  {
    type: Type.Literal('bearer'),
    tokenFile: Type.String({ minLength: 1, description: 'file holding the token; re-read when it changes' }),
  },
  { additionalProperties: false },
);
export const HeaderAuthSchema = Type.Object(
  {
    type: Type.Literal('header'),
    name: Type.String({ pattern: CREDENTIAL_HEADER_NAME_PATTERN, description: 'header to set, e.g. x-api-key' }),
    valueEnv: EnvName('environment variable holding the header value'),
  },
  { additionalProperties: false },
);
export const AuthSchema = Type.Union([BearerEnvAuthSchema, BearerFileAuthSchema, HeaderAuthSchema]);

export type BearerEnvAuth = Static<typeof BearerEnvAuthSchema>;
export type BearerFileAuth = Static<typeof BearerFileAuthSchema>;
export type HeaderAuth = Static<typeof HeaderAuthSchema>;
export type AuthConfig = Static<typeof AuthSchema>;
