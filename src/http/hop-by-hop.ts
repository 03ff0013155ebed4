/**
 * HTTP facts every layer may need, kept at the bottom of the folder graph:
 * the config schema refuses them as credential header names (config/auth.ts)
 * and the header policy never forwards them (policy/header-policy.ts).
 */

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1), plus proxy credentials. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);
