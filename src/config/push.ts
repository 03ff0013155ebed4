/**
 * `server.push`: the webhook listener remotes push task updates to, and the
 * rules for the local agents the gateway delivers them to, as a TypeBox
 * fragment of src/config/schema.ts (optional: without it push configs are
 * refused with PUSH_NOT_ENABLED) and its built-in defaults. push/config.ts
 * turns the validated object into the settings the push modules use.
 */
import { Type, type Static } from '@sinclair/typebox';

const KiB = 1024;
const MiB = 1024 * KiB;
const HOUR_MS = 3_600_000;
const DAY_S = 86_400;

const ENV_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

export const PushKeysSchema = Type.Union([
  Type.Object(
    { env: Type.String({ pattern: ENV_NAME_PATTERN, description: 'environment variable holding the keys: base64 of 32 random bytes each, comma- or space-separated, newest first' }) },
    { additionalProperties: false },
  ),
  Type.Object(
    { file: Type.String({ minLength: 1, description: 'file holding the keys, one per line (# comments allowed), newest first' }) },
    { additionalProperties: false },
  ),
]);

export const PushRateSchema = Type.Object(
  {
    perSecond: Type.Number({ exclusiveMinimum: 0, maximum: 100_000, description: 'pushes accepted per second for one push config (token refill rate)' }),
    burst: Type.Integer({ minimum: 1, maximum: 100_000, description: 'pushes accepted back to back for one push config' }),
  },
  { additionalProperties: false },
);

export const PushDedupeSchema = Type.Object(
  {
    windowMs: Type.Integer({ minimum: 1_000, maximum: 7 * 24 * HOUR_MS, description: 'a push with the same content for the same config within this window is acknowledged and dropped' }),
    maxEntries: Type.Integer({ minimum: 16, maximum: 10_000_000, description: 'pushes remembered for that (oldest forgotten first)' }),
  },
  { additionalProperties: false },
);

export const PushDeliverySchema = Type.Object(
  {
    timeoutMs: Type.Integer({ minimum: 1, maximum: HOUR_MS, description: 'one delivery attempt to the local agent, connect to response' }),
    maxAttempts: Type.Integer({ minimum: 1, maximum: 100, description: 'attempts per push (1 = no retry); a 4xx other than 408/429 is not retried' }),
    baseMs: Type.Integer({ minimum: 1, maximum: HOUR_MS, description: 'first backoff; doubles per attempt, with jitter' }),
    maxMs: Type.Integer({ minimum: 1, maximum: 24 * HOUR_MS, description: 'largest backoff' }),
    maxQueuedPerTarget: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'pushes waiting for one local agent (origin); one more is refused with PUSH_QUEUE_FULL' }),
    maxQueuedBytes: Type.Integer({ minimum: 64 * KiB, maximum: 64 * 1024 * MiB, description: 'bytes of pushes waiting for all local agents together' }),
    maxTargets: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'local agents (origins) with pushes waiting at once' }),
  },
  { additionalProperties: false },
);

export const PushServerSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, description: 'address of the webhook listener (it faces remotes: bind a public address deliberately)' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, description: 'port of the webhook listener (0 = any free port)' }),
    publicBaseUrl: Type.String({ format: 'uri', pattern: '^https?://', description: 'the webhook listener as remotes reach it; push config URLs are <publicBaseUrl>/<ticket>' }),
    keys: PushKeysSchema,
    allowedTargets: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
      maxItems: 1024,
      uniqueItems: true,
      description: 'local webhook URLs callers may register: "loopback", or URL prefixes (https://host[:port][/path], *.domain, port *; http:// only where written)',
    }),
    allowPrivateTargets: Type.Boolean({ description: 'let non-loopback targets resolve to private, link-local or CGNAT addresses' }),
    maxBodyBytes: Type.Integer({ minimum: 1 * KiB, maximum: 64 * MiB, description: 'one push body' }),
    maxJsonDepth: Type.Integer({ minimum: 2, maximum: 1000, description: 'nesting depth of a push body' }),
    maxConcurrent: Type.Integer({ minimum: 1, maximum: 100_000, description: 'pushes being received and checked at once; one more gets 503 PUSH_BUSY' }),
    maxConnections: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'sockets the webhook listener accepts at once' }),
    requestTimeoutMs: Type.Integer({ minimum: 1, maximum: HOUR_MS, description: 'time a remote may take to send a whole push' }),
    maxConfigAgeSeconds: Type.Integer({ minimum: 60, maximum: 366 * DAY_S, description: 'pushes for a push config registered longer ago are refused (410); keep keys at least this long' }),
    maxWebhookUrlBytes: Type.Integer({ minimum: 256, maximum: 65_536, description: 'longest gateway webhook URL the gateway hands a remote (the caller’s URL and credentials travel in it, encrypted)' }),
    rate: PushRateSchema,
    dedupe: PushDedupeSchema,
    delivery: PushDeliverySchema,
  },
  { additionalProperties: false },
);

/** What the YAML may hold under `server.push`: everything but `port`, `publicBaseUrl` and `keys` has a default. */
export const PushServerFileSchema = Type.Object(
  {
    ...Type.Partial(Type.Omit(PushServerSchema, ['port', 'publicBaseUrl', 'keys', 'rate', 'dedupe', 'delivery'])).properties,
    ...Type.Pick(PushServerSchema, ['port', 'publicBaseUrl', 'keys']).properties,
    rate: Type.Optional(Type.Partial(PushRateSchema)),
    dedupe: Type.Optional(Type.Partial(PushDedupeSchema)),
    delivery: Type.Optional(Type.Partial(PushDeliverySchema)),
  },
  { additionalProperties: false },
);

export type PushServerFile = Static<typeof PushServerFileSchema>;
export type PushServerConfig = Static<typeof PushServerSchema>;
export type PushRate = Static<typeof PushRateSchema>;
export type PushDedupe = Static<typeof PushDedupeSchema>;
export type PushDeliveryConfig = Static<typeof PushDeliverySchema>;

export const builtinPush = {
  host: '127.0.0.1',
  allowedTargets: ['loopback'],
  allowPrivateTargets: false,
  maxBodyBytes: 1 * MiB,
  maxJsonDepth: 64,
  maxConcurrent: 64,
  maxConnections: 1024,
  requestTimeoutMs: 10_000,
  maxConfigAgeSeconds: 30 * DAY_S,
  maxWebhookUrlBytes: 8 * KiB,
  rate: { perSecond: 20, burst: 40 },
  dedupe: { windowMs: 600_000, maxEntries: 100_000 },
  delivery: {
    timeoutMs: 10_000,
    maxAttempts: 5,
    baseMs: 250,
    maxMs: 30_000,
    maxQueuedPerTarget: 256,
    maxQueuedBytes: 64 * MiB,
    maxTargets: 1024,
  },
} as const satisfies Omit<PushServerConfig, 'port' | 'publicBaseUrl' | 'keys'>;
