/**
 * Delivery of accepted pushes to the local agents' own webhooks, with the
 * local agent's own authentication, retried with bounded exponential
 * backoff, never buffering without bound:
 * - one queue per local agent (URL origin), delivered one at a time in
 *   arrival order (task updates must not overtake each other); a push
 *   stays counted in its queue until it is delivered or given up;
 * - bounds on pushes per queue, bytes in all queues, and queues: past any
 *   of them `enqueue` says PUSH_QUEUE_FULL and the listener answers 503,
 *   so the remote keeps the push and retries (delivery is at least once);
 * - a 2xx is delivered; a 4xx other than 408/429 is refused for good
 *   (PUSH_TARGET_REJECTED); anything else (connection failure, timeout,
 *   408, 429, 5xx) is retried up to `maxAttempts`, then PUSH_DELIVERY_FAILED;
 * - sockets connect only to addresses the target's allowlist rule allows
 *   (checked on every resolved address: DNS rebinding is refused too):
 *   PUSH_DELIVERY_DENIED. No redirects are followed.
 * Every push ends in exactly one report (`onOutcome`).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, request, type Dispatcher } from 'undici';
import type { PushDeliveryConfig } from '../config/push.js';
import type { DeliveryOutcome } from './reasons.js';
import { TargetPolicy, type AddressRule } from './targets.js';

export interface DeliveryItem {
  readonly remote: string;
  /** The config's ref (ticket hash), for logs. */
  readonly configRef: string;
  readonly target: URL;
  readonly rule: AddressRule;
  /** content-type and the local agent's own authorization / token headers. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface DeliveryReport {
  readonly item: DeliveryItem;
  readonly outcome: DeliveryOutcome;
  readonly attempts: number;
  /** The local agent's last HTTP status, when it answered. */
  readonly status?: number;
  /** Why the last attempt failed (an error code, 'timeout', or `HTTP <status>`), for logs. */
  readonly cause?: string;
}

export type EnqueueResult = 'queued' | 'PUSH_QUEUE_FULL' | 'PUSH_SHUTTING_DOWN';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

export interface DeliveryOptions {
  /** Jitter source in [0, 1); injectable for tests. */
  readonly random?: () => number;
  /** DNS resolver under the address check; injectable for tests. */
  readonly resolver?: LookupFunction;
}

class DeliveryDenied extends Error {
  override readonly name = 'DeliveryDenied';
  readonly code = 'PUSH_DELIVERY_DENIED';
}

interface TargetQueue {
  readonly items: DeliveryItem[];
}

/** How much of a local agent's reply is read (and dropped) before the connection is given up. */
const MAX_REPLY_BYTES = 64 * 1024;

type Attempt = { readonly kind: 'delivered' | 'rejected' | 'retry' | 'denied'; readonly status?: number; readonly cause?: string };

export class PushDelivery {
  readonly #queues = new Map<string, TargetQueue>();
  readonly #dispatchers: Readonly<Record<AddressRule, Dispatcher>>;
  readonly #stop = new AbortController();
  readonly #random: () => number;
  readonly #running = new Set<Promise<void>>();
  #queuedBytes = 0;
  #queuedItems = 0;

  constructor(
    private readonly config: PushDeliveryConfig,
    private readonly onOutcome: (report: DeliveryReport) => void,
    opts: DeliveryOptions = {},
  ) {
    this.#random = opts.random ?? Math.random;
    const resolver = opts.resolver ?? (dnsLookup as LookupFunction);
    const agent = (rule: AddressRule): Dispatcher =>
      new Agent({
        connect: { timeout: config.timeoutMs, lookup: guardedLookup(rule, resolver) },
        headersTimeout: config.timeoutMs,
        bodyTimeout: config.timeoutMs,
        connections: 4,
        keepAliveTimeout: 4_000,
      });
    this.#dispatchers = { loopback: agent('loopback'), public: agent('public'), any: agent('any') };
  }

  get queuedItems(): number {
    return this.#queuedItems;
  }

  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  enqueue(item: DeliveryItem): EnqueueResult {
    if (this.#stop.signal.aborted) return 'PUSH_SHUTTING_DOWN';
    const key = item.target.origin;
    const bytes = Buffer.byteLength(item.body, 'utf8');
    const queue = this.#queues.get(key);
    if (queue ? queue.items.length >= this.config.maxQueuedPerTarget : this.#queues.size >= this.config.maxTargets) return 'PUSH_QUEUE_FULL';
    if (this.#queuedBytes + bytes > this.config.maxQueuedBytes) return 'PUSH_QUEUE_FULL';
    this.#queuedBytes += bytes;
    this.#queuedItems++;
    if (queue) {
      queue.items.push(item);
      return 'queued';
    }
    const fresh: TargetQueue = { items: [item] };
    this.#queues.set(key, fresh);
    const run = this.#drain(key, fresh).finally(() => this.#running.delete(run));
    this.#running.add(run);
    return 'queued';
  }

  /** Stops: attempts in flight are aborted, every push still queued is reported PUSH_DROPPED_SHUTDOWN. */
  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.allSettled([...this.#running]);
    await Promise.allSettled(Object.values(this.#dispatchers).map((d) => d.destroy()));
  }

  async #drain(key: string, queue: TargetQueue): Promise<void> {
    while (queue.items.length > 0) {
      const item = queue.items[0]!;
      const report = this.#stop.signal.aborted ? { item, outcome: 'PUSH_DROPPED_SHUTDOWN' as const, attempts: 0 } : await this.#deliver(item);
      queue.items.shift();
      this.#queuedBytes -= Buffer.byteLength(item.body, 'utf8');
      this.#queuedItems--;
      this.onOutcome(report);
    }
    this.#queues.delete(key);
  }

  async #deliver(item: DeliveryItem): Promise<DeliveryReport> {
    let last: Attempt = { kind: 'retry' };
    for (let attempt = 1; attempt <= this.config.maxAttempts; attempt++) {
      last = await this.#attempt(item);
      const base = { item, attempts: attempt, ...(last.status === undefined ? {} : { status: last.status }), ...(last.cause === undefined ? {} : { cause: last.cause }) };
      if (this.#stop.signal.aborted) return { ...base, outcome: 'PUSH_DROPPED_SHUTDOWN' };
      if (last.kind === 'delivered') return { ...base, outcome: 'delivered' };
      if (last.kind === 'rejected') return { ...base, outcome: 'PUSH_TARGET_REJECTED' };
      if (last.kind === 'denied') return { ...base, outcome: 'PUSH_DELIVERY_DENIED' };
      if (attempt < this.config.maxAttempts && !(await this.#sleep(this.backoffMs(attempt)))) return { ...base, outcome: 'PUSH_DROPPED_SHUTDOWN' };
    }
    return {
      item,
      outcome: 'PUSH_DELIVERY_FAILED',
      attempts: this.config.maxAttempts,
      ...(last.status === undefined ? {} : { status: last.status }),
      ...(last.cause === undefined ? {} : { cause: last.cause }),
    };
  }

  /** Backoff before attempt `attempt + 1`: the exponential ceiling, half of it fixed and half jittered. */
  backoffMs(attempt: number): number {
    const ceiling = Math.min(this.config.maxMs, this.config.baseMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(ceiling / 2 + (this.#random() * ceiling) / 2);
  }

  async #attempt(item: DeliveryItem): Promise<Attempt> {
    const host = item.target.hostname.startsWith('[') ? item.target.hostname.slice(1, -1) : item.target.hostname;
    // An IP literal is never looked up: check it here.
    if (isIP(host) !== 0 && !TargetPolicy.addressAllowed(item.rule, host)) return { kind: 'denied', cause: 'address' };
    const signal = AbortSignal.any([this.#stop.signal, AbortSignal.timeout(this.config.timeoutMs)]);
    try {
      const res = await request(item.target, {
        method: 'POST',
        headers: item.headers,
        body: item.body,
        dispatcher: this.#dispatchers[item.rule],
        signal,
      });
      await res.body.dump({ limit: MAX_REPLY_BYTES }).catch(() => undefined);
      const status = res.statusCode;
      if (status >= 200 && status <= 299) return { kind: 'delivered', status };
      const retryable = status === 408 || status === 429 || status >= 500;
      return { kind: retryable ? 'retry' : 'rejected', status, cause: `HTTP ${status}` };
    } catch (err) {
      if (codesOf(err).includes('PUSH_DELIVERY_DENIED')) return { kind: 'denied', cause: 'address' };
      if (signal.aborted && !this.#stop.signal.aborted) return { kind: 'retry', cause: 'timeout' };
      return { kind: 'retry', cause: codesOf(err)[0] ?? 'error' };
    }
  }

  /** Resolves true after `ms`, false at once if the delivery is being closed. */
  #sleep(ms: number): Promise<boolean> {
    const stop = this.#stop.signal;
    if (stop.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        stop.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      stop.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** Error codes of an error and its causes (undici wraps socket errors). */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/** Checks every address a name resolves to against the target's rule before a socket connects. */
export function guardedLookup(rule: AddressRule, resolver: LookupFunction): LookupFunction {
  if (rule === 'any') return resolver;
  return (hostname, options, callback) => {
    resolver(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const all = Array.isArray(address) ? address : [{ address, family: family ?? 0 }];
      if (all.length === 0 || all.some((a) => !TargetPolicy.addressAllowed(rule, a.address))) {
        return callback(new DeliveryDenied('address not allowed for this push target') as NodeJS.ErrnoException, '', 0);
      }
      callback(null, address, family);
    });
  };
}
