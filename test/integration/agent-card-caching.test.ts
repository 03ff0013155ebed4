/**
 * HTTP caching of the card the gateway serves (A2A 1.0 §8.6; RFC 9110 §13,
 * RFC 9111): a strong ETag of the bytes actually served, Last-Modified, 304
 * for If-None-Match / If-Modified-Since, Cache-Control that keeps the
 * meaning of the remote's no-cache / no-store / private capped by the
 * gateway's TTL, and Vary. Real gateway, real upstream on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import t from 'tap';
import { request } from 'undici';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { closeServer, listenOnLoopback, trackConnections } from '../support/servers.js';

let origin = '';
/** Per card path: the Cache-Control the remote sends, its description (change it to change the card), whether it fails. */
const remoteState = new Map<string, { cacheControl?: string; description: string; down?: boolean }>();
const hits = new Map<string, number>();

function card(description: string): string {
  return JSON.stringify({
    name: 'caching',
    description,
    version: '1.0.0',
    supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  });
}

function upstream(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '';
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const state = remoteState.get(path);
  if (!state || state.down) {
    res.writeHead(state ? 503 : 404);
    return void res.end();
  }
  res.writeHead(200, { 'content-type': 'application/json', ...(state.cacheControl ? { 'cache-control': state.cacheControl } : {}), etag: 'W/"remote-tag"' });
  res.end(card(state.description));
}

const server = createServer(upstream);
const tracker = trackConnections(server);
let gw: RunningGateway;
let proxied: RunningGateway;
const REMOTES = ['plain', 'long', 'nocache', 'nostore', 'private', 'changing'];

t.before(async () => {
  const port = await listenOnLoopback(server);
  origin = `http://127.0.0.1:${port}`;
  remoteState.set('/plain/card.json', { description: 'plain' });
  remoteState.set('/long/card.json', { cacheControl: 'public, max-age=3600', description: 'long' });
  remoteState.set('/nocache/card.json', { cacheControl: 'no-cache', description: 'nocache' });
  remoteState.set('/nostore/card.json', { cacheControl: 'no-store, max-age=600', description: 'nostore' });
  remoteState.set('/private/card.json', { cacheControl: 'private, max-age=60', description: 'private' });
  remoteState.set('/changing/card.json', { cacheControl: 'max-age=0', description: 'v1' });
  const remotes = REMOTES.map((name) => `  ${name}:\n    url: ${origin}/a2a\n    agentCardUrl: ${origin}/${name}/card.json`).join('\n');
  const yaml = (server: string) => `${server}defaults:\n  allowPrivateNetwork: true\n  timeouts: { cardCacheTtlMs: 300000 }\nremotes:\n${remotes}\n`;
  gw = await startGateway(yaml(''));
  proxied = await startGateway(yaml('server:\n  trustProxy: true\n'));
});
t.teardown(async () => {
  await gw?.close();
  await proxied?.close();
  await closeServer(server, tracker);
});

async function getCard(base: string, name: string, headers: Record<string, string> = {}) {
  const res = await request(`${base}/remotes/${name}/.well-known/agent-card.json`, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

t.test('a strong ETag of the served bytes, Last-Modified, Vary; the remote\'s own validators are not passed on', async (t) => {
  const a = await getCard(gw.url, 'plain');
  t.equal(a.status, 200);
  t.match(String(a.headers.etag), /^"[A-Za-z0-9_-]{27}"$/, 'strong (no W/), opaque');
  t.not(a.headers.etag, 'W/"remote-tag"');
  t.ok(Date.parse(String(a.headers['last-modified'])) > 0, 'an HTTP date');
  t.equal(a.headers.vary, 'A2A-Version');
  const again = await getCard(gw.url, 'plain');
  t.equal(again.headers.etag, a.headers.etag, 'the same bytes: the same tag');
  t.equal(again.headers['last-modified'], a.headers['last-modified']);
  const otherHost = await getCard(gw.url, 'plain', { host: 'gateway.example:8443' });
  t.not(otherHost.text, a.text, 'the card names the caller\'s base URL');
  t.not(otherHost.headers.etag, a.headers.etag, 'other bytes: another tag');
});

t.test('If-None-Match: a matching tag (strong, weak, in a list, or *) is 304 with the validators and no body; anything else 200', async (t) => {
  const { headers } = await getCard(gw.url, 'plain');
  const etag = String(headers.etag);
  for (const ifNoneMatch of [etag, `W/${etag}`, `"nope", ${etag}`, `, ,"nope",,${etag} ,`, '*']) {
    const r = await getCard(gw.url, 'plain', { 'if-none-match': ifNoneMatch });
    t.equal(r.status, 304, ifNoneMatch);
    t.equal(r.text, '', 'no body');
    t.equal(r.headers.etag, etag);
    t.ok(r.headers['cache-control'] && r.headers['last-modified'] && r.headers.vary, 'validators and caching headers on a 304');
  }
  for (const ifNoneMatch of ['"nope"', etag.slice(0, -2) + '"', 'not-a-tag', `not-a-tag, ${etag}`, '']) {
    const r = await getCard(gw.url, 'plain', { 'if-none-match': ifNoneMatch });
    t.equal(r.status, 200, ifNoneMatch);
    t.ok(JSON.parse(r.text).name);
  }
});

t.test('If-Modified-Since: not modified since → 304; an earlier date or an invalid one → 200; If-None-Match decides when both are sent', async (t) => {
  const { headers } = await getCard(gw.url, 'plain');
  const lastModified = Date.parse(String(headers['last-modified']));
  const at = (ms: number) => new Date(ms).toUTCString();
  t.equal((await getCard(gw.url, 'plain', { 'if-modified-since': at(lastModified) })).status, 304, 'exactly Last-Modified');
  t.equal((await getCard(gw.url, 'plain', { 'if-modified-since': at(lastModified + 60_000) })).status, 304, 'later');
  t.equal((await getCard(gw.url, 'plain', { 'if-modified-since': at(lastModified - 1000) })).status, 200, 'one second earlier');
  t.equal((await getCard(gw.url, 'plain', { 'if-modified-since': 'yesterday-ish' })).status, 200, 'not a date');
  const both = await getCard(gw.url, 'plain', { 'if-none-match': '"nope"', 'if-modified-since': at(lastModified + 60_000) });
  t.equal(both.status, 200, 'a non-matching If-None-Match wins over a fresh If-Modified-Since');
});

t.test('Cache-Control keeps the remote\'s meaning, capped by the gateway\'s TTL', async (t) => {
  t.equal((await getCard(gw.url, 'plain')).headers['cache-control'] !== undefined, true);
  // max-age is what is left of the cached entry's life, in whole seconds: a busy machine may take seconds between
  // the fetch and this read, so the bound is checked from above with that slack, never an exact second.
  const maxAge = (value: unknown, prefix = ''): number => {
    const m = new RegExp(`^${prefix}max-age=(\\d+)$`).exec(String(value));
    return m ? Number(m[1]) : Number.NaN;
  };
  const plainAge = maxAge((await getCard(gw.url, 'plain')).headers['cache-control']);
  t.ok(plainAge <= 300 && plainAge >= 290, `none from the remote: the gateway's TTL (max-age=${plainAge})`);
  const longAge = maxAge((await getCard(gw.url, 'long')).headers['cache-control']);
  t.ok(longAge <= 300 && longAge >= 290, `public, max-age=3600: capped at cardCacheTtlMs (max-age=${longAge})`);
  t.equal((await getCard(gw.url, 'nocache')).headers['cache-control'], 'no-cache, max-age=0');
  t.equal((await getCard(gw.url, 'nostore')).headers['cache-control'], 'no-store, max-age=0');
  const privateAge = maxAge((await getCard(gw.url, 'private')).headers['cache-control'], 'private, ');
  t.ok(privateAge <= 60 && privateAge >= 50, `private, max-age=60 kept (max-age=${privateAge})`);
});

t.test('no-cache, no-store and private cards are not kept by the gateway (a shared cache): fetched for every request', async (t) => {
  for (const name of ['nocache', 'nostore', 'private', 'long']) {
    const path = `/${name}/card.json`;
    await getCard(gw.url, name);
    const before = hits.get(path) ?? 0;
    await getCard(gw.url, name);
    await getCard(gw.url, name);
    t.equal((hits.get(path) ?? 0) - before, name === 'long' ? 0 : 2, name);
  }
});

t.test('a no-store card is never served stale when the remote fails; a kept one is', async (t) => {
  const state = remoteState.get('/nostore/card.json')!;
  state.down = true;
  t.teardown(() => void (state.down = false));
  t.equal((await getCard(gw.url, 'nostore')).status, 502, 'nothing kept to fall back on');
});

t.test('Last-Modified holds while the remote\'s card is unchanged, and moves when it changes (ETag too)', async (t) => {
  const first = await getCard(gw.url, 'changing');
  const same = await getCard(gw.url, 'changing');
  t.equal(same.headers['last-modified'], first.headers['last-modified'], 'refetched (max-age=0), unchanged: the same date');
  t.equal(same.headers.etag, first.headers.etag);
  remoteState.get('/changing/card.json')!.description = 'v2';
  const changed = await getCard(gw.url, 'changing');
  t.ok(Date.parse(String(changed.headers['last-modified'])) > Date.parse(String(first.headers['last-modified'])), 'later');
  t.not(changed.headers.etag, first.headers.etag);
  const stale = await getCard(gw.url, 'changing', { 'if-modified-since': String(first.headers['last-modified']) });
  t.equal(stale.status, 200, 'a caller holding the old card gets the new one');
});

t.test('Vary names the forwarded headers when the gateway believes them (trustProxy)', async (t) => {
  const r = await getCard(proxied.url, 'plain', { 'x-forwarded-host': 'public.example', 'x-forwarded-proto': 'https' });
  t.equal(r.headers.vary, 'A2A-Version, X-Forwarded-Proto, X-Forwarded-Host');
  t.match(r.text, 'https://public.example/remotes/plain/');
});
