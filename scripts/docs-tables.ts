/**
 * Generates the README's config reference and error tables from the one
 * source they describe (the TypeBox schema, the built-in defaults and the
 * error catalogue). `npx tsx scripts/docs-tables.ts` prints them; `--write`
 * updates README.md and config/gateway.schema.json (the config's JSON Schema);
 * test/unit/docs-tables.test.ts fails when the README drifts from them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { reloadEffect } from '../src/config/reload.js';
import { builtinCircuitBreaker, builtinLimits, builtinListenHost, builtinPolicy, builtinRetries, builtinServer, builtinTimeouts } from '../src/config/defaults.js';
import { CircuitBreakerSchema, GrpcListenerTlsSchema, GrpcListenSchema, GrpcServerSchema, LimitsSchema, ListenSchema, RemoteGrpcSchema, RateLimitSchema, RateLimitStoreSchema, RetrySchema, ServerSchema, TimeoutsSchema, TlsSchema } from '../src/config/schema.js';
import { configJsonSchemaText } from '../src/config/json-schema.js';
import { gatewayErrors, REMOTE_ERROR_REASON } from '../src/envelope/codes.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_STORE_TIMEOUT_MS } from '../src/policy/redis-bucket.js';
import { builtinPush, PushDedupeSchema, PushDeliverySchema, PushRateSchema, PushServerSchema } from '../src/config/push.js';
import { builtinTraces, TracesSchema } from '../src/config/traces.js';

interface JsonSchemaLike {
  type?: string;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  anyOf?: { const?: unknown }[];
  pattern?: string;
  format?: string;
  properties?: Record<string, JsonSchemaLike>;
}

const fmt = (n: number): string => (Number.isInteger(n) && Math.abs(n) >= 10_000 ? n.toLocaleString('en-US').replace(/,/g, '_') : String(n));

function typeOf(s: JsonSchemaLike): string {
  if (s.anyOf) return s.anyOf.map((a) => JSON.stringify(a.const)).join(' \\| ');
  if (s.type === 'integer' || s.type === 'number') {
    const lower = s.minimum !== undefined ? fmt(s.minimum) : s.exclusiveMinimum !== undefined ? `${fmt(s.exclusiveMinimum)} (exclusive)` : '';
    const upper = s.maximum !== undefined ? fmt(s.maximum) : '';
    return lower || upper ? `${s.type} ${lower}..${upper}` : s.type;
  }
  return s.type ?? 'any';
}

function rows(prefix: string, schema: JsonSchemaLike, defaults: Record<string, unknown> = {}): string[] {
  return Object.entries(schema.properties ?? {})
    .filter(([, s]) => s.type !== 'object' && !s.properties)
    .map(([key, s]) => {
      const d = defaults[key];
      const shown = d === undefined ? '—' : typeof d === 'number' ? fmt(d) : JSON.stringify(d);
      return `| \`${prefix}${key}\` | ${typeOf(s)} | ${shown} | ${reload(`${prefix}${key}`)} | ${s.description ?? ''} |`;
    });
}

/** The "on reload" column, from src/config/reload.ts: `live` (takes effect) or `restart`. */
const reload = (key: string): string => (reloadEffect(key) === 'restart' ? '**restart**' : 'live');

/** A hand-written row (keys whose schema is a union or needs a friendlier type); the reload column is added here. */
const row = (key: string, type: string, shown: string, meaning: string): string => `| \`${key}\` | ${type} | ${shown} | ${reload(key)} | ${meaning} |`;

export function configReference(): string {
  const header = ['| key | type and bounds | default | on reload | meaning |', '|---|---|---|---|---|'];
  return [
    ...header,
    ...rows('server.', ServerSchema as JsonSchemaLike, builtinServer as unknown as Record<string, unknown>),
    ...rows('server.grpc.', GrpcServerSchema as JsonSchemaLike, { host: builtinListenHost }),
    ...rows('server.grpc.tls.', GrpcListenerTlsSchema as JsonSchemaLike, { requireClientCert: false }),
    row('server.auth', '`{ type: bearer, tokensEnv: NAME }`', 'off', 'callers must send `Authorization: Bearer <token>`; tokens from env NAME, comma-separated'),
    row('server.push', 'object', 'off', 'the push notification webhook listener (docs/push-notifications.md); without it push configs are refused with PUSH_NOT_ENABLED'),
    ...rows('server.push.', PushServerSchema as JsonSchemaLike, builtinPush as unknown as Record<string, unknown>).filter((r) => !/^\| `server\.push\.(allowedTargets|keys)`/.test(r)),
    row('server.push.keys', '`{ env: NAME }` \\| `{ file: path }`, required', '—', 'ticket keys: base64 of 32 random bytes each, newest first (`openssl rand -base64 32`)'),
    row('server.push.allowedTargets', 'list of `loopback` / URL prefixes', JSON.stringify(builtinPush.allowedTargets), 'local webhooks callers may register (http:// only where written)'),
    ...rows('server.push.rate.', PushRateSchema as JsonSchemaLike, builtinPush.rate as unknown as Record<string, unknown>),
    ...rows('server.push.dedupe.', PushDedupeSchema as JsonSchemaLike, builtinPush.dedupe as unknown as Record<string, unknown>),
    ...rows('server.push.delivery.', PushDeliverySchema as JsonSchemaLike, builtinPush.delivery as unknown as Record<string, unknown>),
    row('telemetry.traces', 'object', 'off', 'OpenTelemetry trace export over OTLP/HTTP (protobuf)'),
    ...rows('telemetry.traces.', TracesSchema as JsonSchemaLike, builtinTraces as unknown as Record<string, unknown>).filter((r) => !r.startsWith('| `telemetry.traces.headers`')),
    row('telemetry.traces.headers', '`{ <name>: { valueEnv: NAME } }`', '{}', 'headers sent with every export; each value from an environment variable, never from the file'),
    row('remotes.<name>.url', 'http(s) URL, required', '—', 'the remote’s A2A JSON-RPC URL; no credentials in it (use `auth`)'),
    row('remotes.<name>.agentCardUrl', 'http(s) URL', '`<origin>/.well-known/agent-card.json`', 'where the remote’s card is'),
    row('remotes.<name>.methods', 'list of A2A method names', 'all', 'methods callers may use; anything else is -32601'),
    row('remotes.<name>.binding', '"auto" \\| "jsonrpc" \\| "http+json" \\| "grpc"', '"auto"', 'what the gateway speaks to the remote (see [HTTP+JSON](#httpjson-and-transcoding)); with jsonrpc or http+json, `url` is that binding’s endpoint; with grpc, `grpc.target` or the card’s gRPC interface'),
    row('remotes.<name>.advertiseBindings', 'boolean', 'true', 'the rewritten card lists every binding the gateway serves for this remote, also those the remote lacks'),
    row('remotes.<name>.versions', 'list of `"0.3"`, `"1.0"`', 'what its card says', 'A2A generations the remote speaks over JSON-RPC; a caller of the other one is translated (version bridge)'),
    row('remotes.<name>.unversionedCard', '`remote` \\| `"0.3"` \\| `"1.0"`', '`remote`', 'the card a caller without `A2A-Version` gets: the remote’s own, or bridged to that generation (a caller naming a version always gets its generation’s card)'),
    row('remotes.<name>.auth', '`{type: bearer, tokenEnv}` \\| `{type: bearer, tokenFile}` \\| `{type: header, name, valueEnv}`', 'none', 'credential the gateway adds to every upstream request (at least 8 bytes; never returned to a caller)'),
    ...rows('remotes.<name>.tls.', TlsSchema as JsonSchemaLike),
    ...rows('remotes.<name>.listen.', ListenSchema as JsonSchemaLike, { host: builtinListenHost }),
    ...rows('remotes.<name>.grpc.', RemoteGrpcSchema as JsonSchemaLike),
    ...rows('remotes.<name>.grpc.listen.', GrpcListenSchema as JsonSchemaLike, { host: 'server.grpc.host' }),
    row('allowPrivateNetwork', 'boolean', 'false', 'let the remote resolve to loopback/private/link-local/CGNAT/metadata addresses'),
    row('keepRemoteErrorData', 'boolean', 'false', 'pass up to 4 sanitized `@type` objects from a remote error’s `data`'),
    row('maxUpstreamConnections', 'integer 1..10_000', String(builtinPolicy.maxUpstreamConnections), 'sockets the gateway opens to this remote (its HTTP pool, or its gRPC sessions); `maxConnections`, its old name, is still read with a warning'),
    row('forwardHeaders', 'list of lower-case header names', '[]', 'caller headers forwarded besides the A2A and trace headers (may name authorization, cookie)'),
    ...rows('timeouts.', TimeoutsSchema as JsonSchemaLike, builtinTimeouts as unknown as Record<string, unknown>),
    ...rows('limits.', LimitsSchema as JsonSchemaLike, builtinLimits as unknown as Record<string, unknown>),
    ...rows('rateLimit.', RateLimitSchema as JsonSchemaLike),
    ...rows('rateLimit.store.', RateLimitStoreSchema as JsonSchemaLike, { keyPrefix: DEFAULT_KEY_PREFIX, timeoutMs: DEFAULT_STORE_TIMEOUT_MS }),
    ...rows('circuitBreaker.', CircuitBreakerSchema as JsonSchemaLike, builtinCircuitBreaker as unknown as Record<string, unknown>),
    ...rows('retries.', RetrySchema as JsonSchemaLike, builtinRetries as unknown as Record<string, unknown>),
  ].join('\n');
}

export function reasonTable(): string {
  const lines = ['| reason | code | message |', '|---|---|---|'];
  lines.push(`| \`${REMOTE_ERROR_REASON}\` | the remote’s own code (-32603 if it sent none) | the remote’s message, sanitized and bounded |`);
  for (const [reason, spec] of Object.entries(gatewayErrors)) lines.push(`| \`${reason}\` | ${spec.code} | ${spec.message} |`);
  return lines.join('\n');
}

/** The README with both generated tables put between their markers. */
export function withTables(readme: string): string {
  return [
    ['config', configReference()],
    ['reasons', reasonTable()],
  ].reduce((text, [name, table]) => {
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    const a = text.indexOf(start);
    const b = text.indexOf(end);
    if (a === -1 || b === -1) throw new Error(`README has no ${start} ... ${end} markers`);
    return `${text.slice(0, a + start.length)}\n${table}\n${text.slice(b)}`;
  }, readme);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    const readme = new URL('../README.md', import.meta.url);
    writeFileSync(readme, withTables(readFileSync(readme, 'utf8')));
    // The config's JSON Schema is generated from the same source: one command regenerates both.
    writeFileSync(new URL('../config/gateway.schema.json', import.meta.url), configJsonSchemaText());
  } else {
    process.stdout.write(`${configReference()}\n\n${reasonTable()}\n`);
  }
}
