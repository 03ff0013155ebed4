/**
 * The config file's shape, its bounds and its TypeScript types, from one
 * source: TypeBox builds the JSON Schema that ajv validates and the static
 * types the code uses. Built-in defaults live in ./defaults.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { A2A_METHODS } from '../a2a/methods.js';
import { AuthSchema, type AuthConfig } from './auth.js';
import { PushServerFileSchema, type PushServerFile } from './push.js';
import { TelemetrySchema, type TelemetryFile } from './traces.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

const ms = (max: number, description: string) =>
  Type.Integer({ minimum: 1, maximum: max, description });
const bytes = (min: number, max: number, description: string) =>
  Type.Integer({ minimum: min, maximum: max, description });

const HOUR = 3_600_000;

export const TimeoutsSchema = Type.Object(
  {
    connectMs: ms(HOUR, 'TCP+TLS connect to the remote'),
    headersMs: ms(HOUR, 'from request sent to response headers received'),
    totalMs: ms(24 * HOUR, 'whole unary call, including reading the body'),
    streamIdleMs: ms(24 * HOUR, 'a stream with no bytes at all for this long is ended'),
    streamNoDataMs: ms(24 * HOUR, 'a stream with no data event for this long is ended, even if comments arrive'),
    maxStreamMs: ms(7 * 24 * HOUR, 'total lifetime of one stream'),
    keepAliveMs: ms(HOUR, 'interval of the gateway’s own SSE keep-alive comments'),
    cardMs: ms(HOUR, 'whole fetch of the remote’s agent card'),
    queueTimeoutMs: ms(HOUR, 'longest a call waits for a concurrency slot before OVERLOADED'),
    cardCacheTtlMs: ms(24 * HOUR, 'longest a fetched agent card is reused (the remote’s max-age may shorten it)'),
    cardCacheStaleMs: ms(7 * 24 * HOUR, 'how long past expiry the last good card is served while the remote fails'),
  },
  { additionalProperties: false },
);

export const LimitsSchema = Type.Object(
  {
    maxRequestBytes: bytes(64, 64 * MiB, 'caller request body'),
    maxResponseBytes: bytes(64, 1 * GiB, 'decoded unary response body'),
    maxErrorMessageBytes: bytes(16, 64 * KiB, 'error.message after sanitizing (UTF-8 bytes)'),
    maxJsonDepth: Type.Integer({ minimum: 2, maximum: 1000, description: 'nesting depth of a remote JSON body' }),
    maxEventBytes: bytes(64, 256 * MiB, 'one SSE event'),
    maxStreamBytes: bytes(64, 64 * GiB, 'a whole SSE stream'),
    maxStreamEvents: Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'events in one stream' }),
    maxCardBytes: bytes(64, 16 * MiB, 'decoded agent card body'),
    maxConcurrent: Type.Integer({ minimum: 1, maximum: 100_000, description: 'calls in flight to this remote (streams included); divided among server.workers' }),
    maxQueued: Type.Integer({ minimum: 0, maximum: 100_000, description: 'calls waiting for a slot; one more is OVERLOADED at once; divided among server.workers' }),
    maxCardTextBytes: bytes(16, 64 * KiB, 'each agent card text (name, descriptions, ...) after sanitizing (UTF-8 bytes)'),
    validateResults: Type.Boolean({ description: 'check each result (and stream event) against the A2A schema; an invalid one becomes -32006 INVALID_RESULT' }),
  },
  { additionalProperties: false },
);

export const TlsSchema = Type.Object(
  {
    caFile: Type.String({ minLength: 1, description: 'PEM file of CAs trusted for this remote (replaces the system store)' }),
    certFile: Type.String({ minLength: 1, description: 'client certificate (PEM) for mTLS' }),
    keyFile: Type.String({ minLength: 1, description: 'client private key (PEM) for mTLS' }),
    minVersion: Type.Union([Type.Literal('TLSv1.2'), Type.Literal('TLSv1.3')]),
  },
  { additionalProperties: false },
);

/** Where a rate-limit bucket lives when several replicas must share it; unset = in process. */
export const RateLimitStoreSchema = Type.Object(
  {
    type: Type.Literal('redis', { description: '"redis", the only shared store so far' }),
    url: Type.String({ pattern: '^rediss?://', maxLength: 2048, description: 'redis:// or rediss:// URL (a password in it is never logged)' }),
    keyPrefix: Type.Optional(Type.String({ maxLength: 256, description: 'prepended to the remote name to make the bucket key' })),
    timeoutMs: Type.Optional(ms(60_000, 'longest a call waits for the store; slower or unreachable means the call is allowed (fail open)')),
  },
  { additionalProperties: false },
);

export const RateLimitSchema = Type.Object(
  {
    perSecond: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'sustained calls per second (token refill rate); without a store, divided among server.workers' }),
    burst: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'bucket size: calls allowed at once after a quiet period; without a store, divided among server.workers' }),
    store: Type.Optional(RateLimitStoreSchema),
  },
  { additionalProperties: false },
);

export const CircuitBreakerSchema = Type.Object(
  {
    failureThreshold: Type.Integer({ minimum: 1, maximum: 10_000, description: 'consecutive transport failures or 5xx that open the circuit (each worker of server.workers has its own breaker, opening at ceil(threshold / workers))' }),
    windowMs: ms(24 * HOUR, 'the failures must fall within this window'),
    cooldownMs: ms(24 * HOUR, 'how long an open circuit fails fast before one probe is let through'),
  },
  { additionalProperties: false },
);

export const RetrySchema = Type.Object(
  {
    attempts: Type.Integer({ minimum: 1, maximum: 10, description: 'total attempts for read-only methods (1 = no retry)' }),
    baseMs: ms(60_000, 'first backoff ceiling; doubles per attempt, full jitter'),
    maxMs: ms(600_000, 'largest backoff ceiling'),
  },
  { additionalProperties: false },
);

/** What `defaults` may set and what each remote may override. */
const PolicyProperties = {
  rateLimit: RateLimitSchema,
  circuitBreaker: Type.Partial(CircuitBreakerSchema),
  retries: Type.Partial(RetrySchema),
  maxUpstreamConnections: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    description: 'sockets the gateway opens to this remote (its HTTP pool, or its gRPC sessions); divided among server.workers (at least 1 each)',
  }),
  // The old name of maxUpstreamConnections (src/config/renamed-keys.ts): still read, with a warning.
  maxConnections: Type.Integer({ minimum: 1, maximum: 10_000, deprecated: true, description: 'deprecated: the old name of maxUpstreamConnections' }),
  forwardHeaders: Type.Array(Type.String({ pattern: '^[a-z0-9!#$%&\'*+.^_`|~-]+$', maxLength: 128 }), {
    maxItems: 64,
    uniqueItems: true,
    description: 'caller headers (lower case) forwarded to the remote besides the A2A and trace headers; may name authorization or cookie',
  }),
  allowPrivateNetwork: Type.Boolean({ description: 'allow the remote to resolve to loopback/private/link-local addresses' }),
  keepRemoteErrorData: Type.Boolean({ description: 'pass a bounded array of @type objects from a remote error’s data' }),
  timeouts: Type.Partial(TimeoutsSchema),
  limits: Type.Partial(LimitsSchema),
};

export const DefaultsSchema = Type.Partial(Type.Object(PolicyProperties, { additionalProperties: false }), {
  additionalProperties: false,
});

/** A listener of the remote's own: the remote served at its root, as under /remotes/<name>/ on the shared one. */
export const ListenSchema = Type.Object(
  {
    host: Type.Optional(Type.String({ minLength: 1, description: 'address of the remote’s own listener' })),
    port: Type.Integer({ minimum: 0, maximum: 65535, description: 'port of the remote’s own listener (0 = any free port); needs a restart to change' }),
    publicBaseUrl: Type.Optional(
      Type.String({ format: 'uri', pattern: '^https?://', description: 'this listener’s URL as callers see it; used in the remote’s rewritten card' }),
    ),
  },
  { additionalProperties: false },
);

/** TLS of the gateway's gRPC listeners (cleartext HTTP/2 unless set); with `caFile` + `requireClientCert`, mTLS. */
export const GrpcListenerTlsSchema = Type.Object(
  {
    certFile: Type.String({ minLength: 1, description: 'server certificate chain (PEM) of the gRPC listeners' }),
    keyFile: Type.String({ minLength: 1, description: 'server private key (PEM) of the gRPC listeners' }),
    caFile: Type.Optional(Type.String({ minLength: 1, description: 'PEM file of CAs that sign accepted client certificates' })),
    requireClientCert: Type.Optional(Type.Boolean({ description: 'mTLS: refuse gRPC callers without a client certificate signed by caFile' })),
  },
  { additionalProperties: false },
);

/** The gateway's gRPC side for callers (docs/grpc-binding.md): a shared listener and the TLS of every gRPC listener. */
export const GrpcServerSchema = Type.Object(
  {
    host: Type.Optional(Type.String({ minLength: 1, description: 'address of the gRPC listeners (a remote’s own one may set its own)' })),
    port: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 65535, description: 'shared gRPC listener: callers name the remote in the metadata key a2a-egress-remote (0 = any free port; unset = none)' }),
    ),
    tls: Type.Optional(GrpcListenerTlsSchema),
  },
  { additionalProperties: false },
);

/** A gRPC listener of the remote's own: the port is the remote, which is what its rewritten card advertises. */
export const GrpcListenSchema = Type.Object(
  {
    host: Type.Optional(Type.String({ minLength: 1, description: 'address of the remote’s own gRPC listener' })),
    port: Type.Integer({ minimum: 0, maximum: 65535, description: 'port of the remote’s own gRPC listener (0 = any free port)' }),
    publicTarget: Type.Optional(
      Type.String({ pattern: '^[A-Za-z0-9.:\\[\\]-]+:[0-9]{1,5}$', maxLength: 300, description: 'host:port callers use for this listener; the GRPC interface of the rewritten card (default: the bound address)' }),
    ),
  },
  { additionalProperties: false },
);

/** How the gateway speaks gRPC to a remote, and the remote's own gRPC listener. */
export const RemoteGrpcSchema = Type.Object(
  {
    target: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'the remote’s gRPC endpoint: host:port (TLS when url is https), grpc://, grpcs://, http(s)://host:port (default: the GRPC interface of its 1.0 card on the host of url)',
      }),
    ),
    listen: Type.Optional(GrpcListenSchema),
  },
  { additionalProperties: false },
);

export const RemoteSchema = Type.Object(
  {
    url: Type.String({ format: 'uri', pattern: '^https?://', description: 'the remote’s A2A JSON-RPC URL' }),
    agentCardUrl: Type.Optional(
      Type.String({ format: 'uri', pattern: '^https?://', description: 'where the remote’s card is (default: <origin of url>/.well-known/agent-card.json)' }),
    ),
    tls: Type.Optional(Type.Partial(TlsSchema)),
    auth: Type.Optional(AuthSchema),
    methods: Type.Optional(
      Type.Array(Type.Union([...A2A_METHODS.keys()].map((m) => Type.Literal(m))), {
        uniqueItems: true,
        description: 'A2A methods callers may use on this remote (default: all)',
      }),
    ),
    versions: Type.Optional(
      Type.Array(Type.Union([Type.Literal('0.3'), Type.Literal('1.0')]), {
        minItems: 1,
        uniqueItems: true,
        description: 'A2A generations the remote speaks over JSON-RPC; callers of the other one are translated (default: what its card says)',
      }),
    ),
    unversionedCard: Type.Optional(
      Type.Union([Type.Literal('remote'), Type.Literal('0.3'), Type.Literal('1.0')], {
        description: 'the card a caller without A2A-Version gets: as the remote wrote it, or bridged to that generation',
      }),
    ),
    listen: Type.Optional(ListenSchema),
    binding: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('jsonrpc'), Type.Literal('http+json'), Type.Literal('grpc')], {
        description:
          'what the gateway speaks to the remote: auto = for HTTP+JSON callers the first interface of the remote’s card (same origin as url; gRPC on its host) the gateway carries, JSON-RPC at url without a card; JSON-RPC callers keep JSON-RPC at url; gRPC callers get gRPC when grpc.target is set or the card lists it, else as HTTP+JSON callers. jsonrpc or http+json: url is that binding’s endpoint; grpc: the remote’s gRPC endpoint (grpc.target or its card) for every caller (default: auto)',
      }),
    ),
    advertiseBindings: Type.Optional(
      Type.Boolean({ description: 'the rewritten card lists every binding the gateway serves for this remote (JSON-RPC and HTTP+JSON), also those the remote lacks (default: true)' }),
    ),
    grpc: Type.Optional(RemoteGrpcSchema),
    ...Type.Partial(Type.Object(PolicyProperties)).properties,
  },
  { additionalProperties: false },
);

/** What the gateway speaks to a remote (remotes.<name>.binding). */
export type UpstreamBindingChoice = 'auto' | 'jsonrpc' | 'http+json' | 'grpc';

export const REMOTE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$';

export const CallerAuthSchema = Type.Object(
  {
    type: Type.Literal('bearer'),
    tokensEnv: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', description: 'env var holding accepted caller tokens, comma-separated' }),
  },
  { additionalProperties: false },
);

export const ServerSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, description: 'address to listen on' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, description: 'caller port (0 = any free port); `--port` overrides it' }),
    opsPort: Type.Integer({ minimum: 0, maximum: 65535, description: 'serve /healthz, /readyz, /metrics on this port only (same host)' }),
    drainMs: Type.Integer({ minimum: 0, maximum: 600_000, description: 'on SIGTERM, how long in-flight unary calls may finish' }),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { description: 'pino level; `info` writes one line per call' },
    ),
    publicBaseUrl: Type.Optional(
      Type.String({ format: 'uri', pattern: '^https?://', description: 'the gateway’s URL as callers see it; used in rewritten agent cards' }),
    ),
    trustProxy: Type.Boolean({ description: 'believe X-Forwarded-Proto/Host when building URLs for callers' }),
    auth: CallerAuthSchema,
    maxConnections: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'caller sockets accepted at once; divided among server.workers' }),
    maxRequestsPerSocket: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'requests per caller keep-alive socket (0 = unlimited)' }),
    requestTimeoutMs: Type.Integer({ minimum: 0, maximum: 24 * HOUR, description: 'time a caller may take to send its whole request (0 = off)' }),
    maxEventLoopDelayMs: Type.Integer({ minimum: 0, maximum: 60_000, description: 'answer GATEWAY_OVERLOADED while the event loop lags more than this (0 = off)' }),
    maxBufferedBytes: Type.Integer({ minimum: 1 * MiB, maximum: 64 * GiB, description: 'bytes held for all remotes together (bodies being read, events being assembled); past it a call gets GATEWAY_OVERLOADED; divided among server.workers' }),
    maxHeapUsedBytes: Type.Integer({ minimum: 0, maximum: 64 * GiB, description: 'answer GATEWAY_OVERLOADED while the heap is larger than this (0 = off)' }),
    workers: Type.Integer({
      minimum: 1,
      maximum: 64,
      description: 'processes serving callers (node:cluster; 1 = a single process). Per-process limits are divided among them (README: Several cores)',
    }),
    grpc: GrpcServerSchema,
    push: PushServerFileSchema,
  },
  { additionalProperties: false },
);

export const ConfigFileSchema = Type.Object(
  {
    server: Type.Optional(Type.Partial(ServerSchema)),
    defaults: Type.Optional(DefaultsSchema),
    telemetry: Type.Optional(TelemetrySchema),
    remotes: Type.Record(Type.String({ pattern: REMOTE_NAME_PATTERN }), RemoteSchema, {
      additionalProperties: false,
      minProperties: 1,
    }),
  },
  { additionalProperties: false },
);

export type ConfigFile = Static<typeof ConfigFileSchema>;
export type Timeouts = Static<typeof TimeoutsSchema>;
export type Limits = Static<typeof LimitsSchema>;
export type ServerConfig = Omit<Static<typeof ServerSchema>, 'opsPort' | 'auth' | 'publicBaseUrl' | 'grpc' | 'push'> & {
  opsPort?: number;
  auth?: Static<typeof CallerAuthSchema>;
  publicBaseUrl?: string;
  /** `server.grpc` with its TLS files read; unset = no shared gRPC listener and cleartext remote listeners. */
  grpc?: GrpcServerConfig;
  /** The webhook listener for push notifications (absent: push configs are refused with PUSH_NOT_ENABLED). */
  push?: PushServerFile;
};

export interface GrpcServerConfig {
  readonly host: string;
  /** The shared gRPC listener's port; unset = none. */
  readonly port?: number;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer; readonly ca?: Buffer; readonly requireClientCert: boolean };
}

/** `remotes.<name>.grpc` resolved; `listen.host` defaulted (server.grpc.host, else loopback). */
export interface RemoteGrpcConfig {
  readonly target?: string;
  readonly listen?: { readonly host: string; readonly port: number; readonly publicTarget?: string };
}
export type RateLimit = Static<typeof RateLimitSchema>;
export type RateLimitStore = Static<typeof RateLimitStoreSchema>;
export type CircuitBreakerConfig = Static<typeof CircuitBreakerSchema>;
export type RetryConfig = Static<typeof RetrySchema>;
export interface ListenConfig {
  readonly host: string;
  readonly port: number;
  readonly publicBaseUrl?: string;
}

/** A remote after defaults are merged in: every policy key is present. */
export interface RemoteConfig {
  readonly name: string;
  readonly url: URL;
  /** Explicit agent card location; unset means `<origin of url>/.well-known/agent-card.json`. */
  readonly agentCardUrl?: URL;
  readonly allowPrivateNetwork: boolean;
  readonly keepRemoteErrorData: boolean;
  /** Sockets to this remote: the file's `maxUpstreamConnections` (or its deprecated name `maxConnections`). */
  readonly maxUpstreamConnections: number;
  readonly rateLimit?: Readonly<RateLimit>;
  readonly circuitBreaker: Readonly<CircuitBreakerConfig>;
  readonly retries: Readonly<RetryConfig>;
  readonly auth?: AuthConfig;
  readonly forwardHeaders: readonly string[];
  readonly methods: ReadonlySet<string>;
  /** `remotes.<name>.versions`: the generations the remote speaks (version bridge); unset means what its card says. */
  readonly versions?: readonly ('0.3' | '1.0')[];
  /** `remotes.<name>.unversionedCard`: the card a caller without A2A-Version gets (default: the remote's own). */
  readonly unversionedCard?: 'remote' | '0.3' | '1.0';
  /** A listener of the remote's own (`remotes.<name>.listen`); read at start-up only. */
  readonly listen?: ListenConfig;
  /** `remotes.<name>.binding`: what the gateway speaks upstream (src/routes/upstream-binding.ts). */
  readonly binding: UpstreamBindingChoice;
  /** `remotes.<name>.advertiseBindings`: the card lists every binding served for this remote. */
  readonly advertiseBindings: boolean;
  /** gRPC towards the remote and its own gRPC listener (`remotes.<name>.grpc`; `listen` read at start-up only). */
  readonly grpc?: RemoteGrpcConfig;
  /** TLS options with files already read; handed to undici's connector as-is. */
  readonly tls: ResolvedTls;
  readonly timeouts: Readonly<Timeouts>;
  readonly limits: Readonly<Limits>;
}

export interface ResolvedTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly minVersion?: 'TLSv1.2' | 'TLSv1.3';
}

export interface GatewayConfig {
  readonly server: Readonly<ServerConfig>;
  readonly remotes: ReadonlyMap<string, RemoteConfig>;
  /** `telemetry` as written (header values are read from the environment when the gateway starts). */
  readonly telemetry?: TelemetryFile;
  /** What the loader accepted but warns about (a deprecated key name), each `file:line: key: what to do`; absent when none. */
  readonly warnings?: readonly string[];
}
