/**
 * The webhook listener: its own node:http server (it faces remotes, not
 * local agents), where remotes POST pushes to `<publicBaseUrl>/<ticket>`.
 * Each push, cheapest checks first, nothing read that need not be:
 *   POST → ticket opens (./ticket.ts) → not expired → its remote still
 *   configured → the minted credential presented (Authorization: Bearer or
 *   X-A2A-Notification-Token; constant time) → rate per config → media
 *   type → declared size → concurrency → body read within the size and
 *   time bounds → body checked, cleaned, redacted (./push-body.ts) →
 *   target still allowed → redelivery dropped (./dedupe.ts) → queued for
 *   delivery (./delivery.ts) → 202.
 * A refusal is an HTTP error with a google.rpc.Status body (./reasons.ts)
 * and never reaches the local agent. Every push and every delivery ends in
 * one metric increment and one log line with its reason.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { Redactor } from '../envelope/redact.js';
import { ConfigRateLimiter } from './config-rate.js';
import type { PushSettings } from './config.js';
import { RedeliveryWindow } from './dedupe.js';
import { PushDelivery, type DeliveryOptions, type DeliveryReport } from './delivery.js';
import type { PushMetrics } from './metrics.js';
import { checkPushBody } from './push-body.js';
import { pushRefusals, refusalBody, type PushRefusal } from './reasons.js';
import { credentialMatches, mintCredential, openTicket, ticketExpired, type PushTicket } from './ticket.js';

export interface PushListenerDeps {
  readonly settings: PushSettings;
  /** The remote a ticket names, as configured now; undefined when the gateway no longer has it. */
  readonly remote: (name: string) => { readonly redactor?: Redactor | undefined } | undefined;
  readonly logger: Logger;
  /** Built by the caller with the gateway's registry; optional for tests that only look at HTTP. */
  readonly metrics?: (queued: () => number) => PushMetrics;
  /** Wall clock for ticket expiry (ms since the epoch). */
  readonly now?: () => number;
  readonly delivery?: DeliveryOptions;
}

export interface PushListener {
  /** `http://host:port` as bound (the listener itself; remotes use `publicBaseUrl`). */
  readonly url: string;
  readonly port: number;
  readonly delivery: PushDelivery;
  close(): Promise<void>;
}

const MEDIA_TYPES = new Set(['application/json', 'application/a2a+json']);
/** Minted-credential redactors are built once per config (a Redactor compiles regexes), a bounded number kept. */
const MAX_CACHED_REDACTORS = 1024;
/** Push configs with a rate bucket at once (least recently used forgotten first). */
const MAX_RATE_BUCKETS = 100_000;

export async function startPushListener(deps: PushListenerDeps): Promise<PushListener> {
  const { settings, logger } = deps;
  const now = deps.now ?? Date.now;
  const rate = new ConfigRateLimiter(settings.rate, MAX_RATE_BUCKETS);
  const window = new RedeliveryWindow(settings.dedupe.windowMs, settings.dedupe.maxEntries);
  const redactors = new Map<string, Redactor>();
  const delivery = new PushDelivery(settings.delivery, (report) => onDelivered(report), deps.delivery);
  const metrics: PushMetrics | undefined = deps.metrics?.(() => delivery.queuedItems);
  let inFlight = 0;
  let closing = false;

  function onDelivered(r: DeliveryReport): void {
    metrics?.deliveries.inc({ remote: r.item.remote, outcome: r.outcome });
    if (r.attempts > 1) metrics?.retries.inc({ remote: r.item.remote }, r.attempts - 1);
    const line = { remote: r.item.remote, config: r.item.configRef, target: r.item.target.origin, outcome: r.outcome, attempts: r.attempts, status: r.status, cause: r.cause };
    if (r.outcome === 'delivered') logger.info(line, 'push delivered');
    else logger.warn(line, 'push not delivered');
  }

  /** The minted credential's redactor, built (regexes compiled) only for an authenticated push, cached per config. */
  const redactorFor = (credential: string): Redactor => {
    let redactor = redactors.get(credential);
    if (!redactor) {
      redactor = new Redactor([credential]);
      redactors.set(credential, redactor);
      if (redactors.size > MAX_CACHED_REDACTORS) redactors.delete(redactors.keys().next().value!);
    }
    return redactor;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    let remote = 'unknown';
    let ref = '';
    let bodyRead = false;
    const done = (status: number, outcome: string, extra: Record<string, unknown> = {}): void => {
      metrics?.received.inc({ remote, outcome });
      const line = { remote, config: ref || undefined, outcome, status, ms: Math.round(performance.now() - started), ...extra };
      if (status >= 500) logger.warn(line, 'push');
      else logger.info(line, 'push');
    };
    const refuse = (reason: PushRefusal, headers: Record<string, string> = {}, detail?: string): void => {
      const body = refusalBody(reason, detail === undefined ? {} : { detail });
      const status = pushRefusals[reason].status;
      // A body left unread is not drained: the connection ends with the answer.
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers, ...(bodyRead ? {} : { connection: 'close' }) });
      res.end(body);
      done(status, reason, detail === undefined ? {} : { detail });
    };

    if (closing) return refuse('PUSH_SHUTTING_DOWN');
    if (req.method !== 'POST') return refuse('PUSH_METHOD_NOT_ALLOWED', { allow: 'POST' });
    const ticketText = ticketOf(req.url ?? '', settings.basePath);
    if (ticketText === undefined) return refuse('PUSH_NOT_FOUND');
    const opened = openTicket(settings.keys, ticketText);
    if (!opened.ok) return refuse(opened.problem === 'unknown-key' ? 'PUSH_KEY_UNKNOWN' : 'PUSH_NOT_FOUND');
    ref = opened.ref;
    const ticket = opened.ticket;
    const remoteView = deps.remote(ticket.remote);
    if (!remoteView) return refuse('PUSH_REMOTE_UNKNOWN');
    remote = ticket.remote;
    if (ticketExpired(ticket, now(), settings.maxConfigAgeSeconds)) return refuse('PUSH_CONFIG_EXPIRED');

    const credential = mintCredential(opened.key, ticketText);
    const presented = presentedCredentials(req);
    if (presented.length === 0) return refuse('PUSH_CREDENTIAL_MISSING', { 'www-authenticate': 'Bearer' });
    // Every presented value is compared (no early exit on the first): all must match.
    if (!presented.map((p) => credentialMatches(credential, p)).every(Boolean)) return refuse('PUSH_CREDENTIAL_INVALID', { 'www-authenticate': 'Bearer' });

    const taken = rate.take(ref);
    if (!taken.ok) return refuse('PUSH_RATE_LIMITED', { 'retry-after': String(Math.ceil(taken.retryAfterMs / 1000)) });
    if (!acceptableMediaType(req)) return refuse('PUSH_UNSUPPORTED_MEDIA_TYPE');
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > settings.maxBodyBytes) return refuse('PUSH_TOO_LARGE');
    if (inFlight >= settings.maxConcurrent) return refuse('PUSH_BUSY', { 'retry-after': '1' });

    inFlight++;
    try {
      const read = await readBody(req, settings.maxBodyBytes, settings.requestTimeoutMs);
      if (read.kind !== 'ok') {
        if (read.kind === 'aborted') return done(499, 'PUSH_ABORTED');
        return refuse(read.kind === 'too-large' ? 'PUSH_TOO_LARGE' : 'PUSH_TIMEOUT');
      }
      bodyRead = true;
      const remoteRedactor = remoteView.redactor;
      const verdict = checkPushBody(read.body, {
        generation: ticket.remoteGeneration,
        deliverAs: ticket.callerGeneration,
        maxBytes: settings.maxBodyBytes,
        maxJsonDepth: settings.maxJsonDepth,
        taskId: ticket.taskId,
        redactors: remoteRedactor ? [redactorFor(credential), remoteRedactor] : [redactorFor(credential)],
      });
      if (!verdict.ok) return refuse(verdict.reason, {}, verdict.detail);
      if (verdict.cleaned > 0) metrics?.cleaned.inc({ remote, kind: 'sanitized' }, verdict.cleaned);
      if (verdict.redacted > 0) metrics?.cleaned.inc({ remote, kind: 'redacted' }, verdict.redacted);

      const target = settings.targets.check(ticket.target, [settings.webhookBase]);
      if (!target.ok) return refuse('PUSH_TARGET_NOT_ALLOWED');
      if (window.seenBefore(ref, verdict.json)) {
        res.writeHead(200, { 'cache-control': 'no-store' }).end();
        return done(200, 'duplicate');
      }
      const queued = delivery.enqueue({ remote, configRef: ref, target: target.url, rule: target.rule, headers: localHeaders(ticket), body: verdict.json });
      if (queued !== 'queued') {
        window.forget(ref, verdict.json);
        return refuse(queued, { 'retry-after': '5' });
      }
      res.writeHead(202, { 'cache-control': 'no-store' }).end();
      done(202, 'accepted', { bytes: read.body.length, cleaned: verdict.cleaned, redacted: verdict.redacted });
    } finally {
      inFlight--;
    }
  }

  const sockets = new Set<Socket>();
  const server: Server = createServer(
    {
      // The ticket is in the request line: room for the longest webhook URL the gateway hands out.
      maxHeaderSize: settings.maxWebhookUrlBytes + 16 * 1024,
      requestTimeout: settings.requestTimeoutMs + 1_000,
      headersTimeout: Math.min(settings.requestTimeoutMs, 60_000),
      keepAliveTimeout: 5_000,
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        logger.error({ err: err instanceof Error ? err.message : 'error' }, 'push listener internal error');
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'application/json', connection: 'close' }).end(refusalBody('PUSH_INTERNAL_ERROR'));
        } else res.destroy();
        metrics?.received.inc({ remote: 'unknown', outcome: 'PUSH_INTERNAL_ERROR' });
      });
    },
  );
  server.maxConnections = settings.maxConnections;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // exclusive: a cluster worker binds it itself, not through the primary's shared sockets (only worker 1 runs it).
    server.listen({ port: settings.port, host: settings.host, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    delivery,
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      await delivery.close();
    },
  };
}

/** The ticket in `<basePath>/<ticket>`; no query, no further segments. */
export function ticketOf(path: string, basePath: string): string | undefined {
  if (!path.startsWith(`${basePath}/`)) return undefined;
  const ticket = path.slice(basePath.length + 1);
  return ticket === '' || /[/?#%]/.test(ticket) ? undefined : ticket;
}

/** The credentials a push presents: `Authorization: Bearer <c>` and `X-A2A-Notification-Token: <c>` (any other Authorization counts as a wrong one). */
export function presentedCredentials(req: Pick<IncomingMessage, 'headers'>): string[] {
  const presented: string[] = [];
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string' && authorization.trim() !== '') presented.push(/^bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? authorization);
  const token = req.headers['x-a2a-notification-token'];
  if (typeof token === 'string') presented.push(token.trim());
  else if (Array.isArray(token)) presented.push(...token);
  return presented.filter((p) => p !== '');
}

function acceptableMediaType(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return false;
  const [type, ...params] = (req.headers['content-type'] ?? '').split(';');
  if (!MEDIA_TYPES.has(type!.trim().toLowerCase())) return false;
  return params.every((p) => {
    const [name, value] = p.split('=').map((s) => s.trim().toLowerCase());
    return name !== 'charset' || value === 'utf-8' || value === '"utf-8"';
  });
}

/** What the local agent's webhook expects: its own credentials, as an A2A sender would present them. */
export function localHeaders(ticket: PushTicket): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': ticket.callerGeneration === '1.0' ? 'application/a2a+json' : 'application/json',
    'user-agent': 'a2a-egress-push',
  };
  const scheme = ticket.auth?.schemes[0];
  if (scheme !== undefined && scheme !== '' && ticket.auth?.credentials !== undefined) headers.authorization = `${scheme} ${ticket.auth.credentials}`;
  if (ticket.token !== undefined) headers['x-a2a-notification-token'] = ticket.token;
  return headers;
}

type BodyRead = { readonly kind: 'ok'; readonly body: Buffer } | { readonly kind: 'too-large' | 'timeout' | 'aborted' };

/** Reads at most `max` bytes within `timeoutMs`; stops reading (and keeps nothing) past either. */
function readBody(req: IncomingMessage, max: number, timeoutMs: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (result: BodyRead): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      if (result.kind !== 'ok') req.pause();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) finish({ kind: 'too-large' });
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => finish({ kind: 'ok', body: Buffer.concat(chunks, size) }));
    req.once('aborted', () => finish({ kind: 'aborted' }));
    req.once('error', () => finish({ kind: 'aborted' }));
  });
}
