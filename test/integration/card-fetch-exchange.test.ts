/**
 * Card fetches on the one upstream exchange (src/cards/card-fetch.ts over
 * src/upstream/exchange.ts) against a real card server on 127.0.0.1: the
 * decoded cap just at and one byte over (identity and gzip), the card
 * deadline (`timeouts.cardMs`) on the fetch's own abort point with no
 * signal of the caller's firing, and a caller's signal ending it sooner.
 * Outcomes only: no durations are asserted.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { CardFetchError, createCardFetcher, type CardFetchRecord } from '../../src/cards/card-fetch.js';
import { parseConfig } from '../../src/loader/load.js';
import { CallAborted } from '../../src/upstream/errors.js';
import { UpstreamPools } from '../../src/upstream/pools.js';
import { closeServer, delay, listenOnLoopback, trackConnections } from '../support/servers.js';

const CAP = 4096;
/** A JSON body of exactly `n` bytes. */
const bodyOf = (n: number) => Buffer.from(`{"p":"${'x'.repeat(n - 8)}"}`);

/** Each request: its path, and whether the gateway closed it before the end. */
const seen: { path: string; closed: boolean }[] = [];

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const entry = { path: req.url ?? '', closed: false };
  seen.push(entry);
  res.once('close', () => (entry.closed = !res.writableFinished));
  const [, kind, size] = /^\/(\w+)\/(\d+)/.exec(req.url ?? '') ?? [];
  const n = Number(size);
  switch (kind) {
    case 'identity':
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(bodyOf(n));
    case 'gzip':
      return void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(bodyOf(n)));
    case 'silent':
      return; // never a head: the card deadline ends it
    case 'slowbody':
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.write('{"p":'); // a head, then a body that never ends
    default:
      res.writeHead(404).end();
  }
});
const tracker = trackConnections(server);
const port = await listenOnLoopback(server);
const pools = new UpstreamPools();
t.teardown(async () => {
  await pools.close();
  await closeServer(server, tracker);
});

const records: CardFetchRecord[] = [];
const fetchCard = createCardFetcher({ pools, onFetch: (r) => records.push(r) });

/** The card at `path`; `cardMs` short only where the deadline is the point (a busy machine must not trip the others). */
const remoteAt = (path: string, cardMs = 30_000) =>
  parseConfig(`remotes:\n  r:\n    url: http://127.0.0.1:${port}/\n    agentCardUrl: http://127.0.0.1:${port}${path}\n    allowPrivateNetwork: true\n    timeouts: { cardMs: ${cardMs} }\n    limits: { maxCardBytes: ${CAP} }\n`).remotes.get('r')!;

const never = () => new AbortController().signal;

async function failureOf(promise: Promise<unknown>): Promise<CardFetchError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof CardFetchError) return err;
    throw err;
  }
  throw new Error('the fetch succeeded');
}

async function waitFor(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (const until = Date.now() + ms; !check(); await delay(10)) if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
}

for (const kind of ['identity', 'gzip']) {
  t.test(`${kind}: a card of exactly maxCardBytes (decoded) is read whole, one byte over is RESPONSE_TOO_LARGE`, async (t) => {
    const at = await fetchCard(remoteAt(`/${kind}/${CAP}`), never());
    t.equal(at.status, 200);
    t.ok(at.body.equals(bodyOf(CAP)), 'the whole body, decoded');
    t.equal(records.at(-1)?.bytes, CAP, 'the fetch record counts the decoded bytes');

    const over = await failureOf(fetchCard(remoteAt(`/${kind}/${CAP + 1}`), never()));
    t.equal(over.reason, 'RESPONSE_TOO_LARGE', 'one byte over');
    t.equal(over.httpStatus, 200);
    t.equal(records.at(-1)?.outcome, 'RESPONSE_TOO_LARGE');
  });
}

t.test('no head within cardMs: UPSTREAM_TIMEOUT from the fetch’s own deadline, and the request is cut', async (t) => {
  const before = seen.length;
  const failure = await failureOf(fetchCard(remoteAt('/silent/0', 300), never()));
  t.equal(failure.reason, 'UPSTREAM_TIMEOUT');
  t.equal(failure.detail, 'no card within 300 ms', 'the card deadline says so');
  await waitFor('the upstream request to be cut', () => seen.length === before + 1 && seen[before]!.closed);
  t.pass('cut');
});

t.test('a body that does not end within cardMs: UPSTREAM_TIMEOUT after the head', async (t) => {
  const failure = await failureOf(fetchCard(remoteAt('/slowbody/0', 300), never()));
  t.equal(failure.reason, 'UPSTREAM_TIMEOUT');
  t.equal(failure.httpStatus, 200, 'the head had come');
  t.equal(failure.detail, 'no card within 300 ms');
});

t.test('the caller’s signal ends the fetch sooner, with the reason it carries', async (t) => {
  const controller = new AbortController();
  const pending = failureOf(fetchCard(remoteAt('/silent/0'), controller.signal));
  await waitFor('the request to arrive', () => seen.at(-1)?.path === '/silent/0' && !seen.at(-1)!.closed);
  controller.abort(new CallAborted('CALLER_CLOSED'));
  const failure = await pending;
  t.equal(failure.reason, 'CALLER_CLOSED');
  t.equal(failure.detail, undefined, 'not the card deadline');

  const aborted = new AbortController();
  aborted.abort();
  const already = await failureOf(fetchCard(remoteAt('/identity/100'), aborted.signal));
  t.equal(already.reason, 'UPSTREAM_TIMEOUT', 'a signal aborted without a reason of the gateway’s is a deadline of the caller’s');
});
