import fc from 'fast-check';
import t from 'tap';
import { parseCacheControl } from '../../src/a2a/card-cache.js';
import { cardFreshness } from '../../src/cards/card-source.js';
import { cardCacheControl, cardEtag, cardVary, notModified } from '../../src/routes/card-caching.js';

const ETAG = cardEtag('{"name":"a"}');

t.test('cardEtag: strong, quoted, 27 base64url characters; equal bytes equal tags, one byte apart different', async (t) => {
  t.match(ETAG, /^"[A-Za-z0-9_-]{27}"$/);
  t.equal(cardEtag('{"name":"a"}'), ETAG);
  t.not(cardEtag('{"name":"b"}'), ETAG);
});

t.test('parseCacheControl and cardFreshness: what the gateway (a shared cache) may keep', async (t) => {
  const cases: Array<[string | undefined, { maxAgeMs: number | undefined; store: boolean }]> = [
    [undefined, { maxAgeMs: undefined, store: true }],
    ['public, max-age=3600', { maxAgeMs: 3_600_000, store: true }],
    ['max-age=600, s-maxage=60', { maxAgeMs: 60_000, store: true }],
    ['max-age=10, max-age=5', { maxAgeMs: 5_000, store: true }],
    ['max-age=abc', { maxAgeMs: undefined, store: true }],
    ['no-cache', { maxAgeMs: 0, store: false }],
    ['No-Cache="set-cookie", max-age=60', { maxAgeMs: 0, store: false }],
    ['no-store, max-age=600', { maxAgeMs: 0, store: false }],
    ['private, max-age=60, s-maxage=600', { maxAgeMs: 60_000, store: false }],
    ['private="x"', { maxAgeMs: undefined, store: false }],
  ];
  for (const [header, expected] of cases) t.same(cardFreshness(parseCacheControl(header)), expected, String(header));
});

t.test('cardCacheControl: the remote\'s no-store / no-cache / private kept, max-age what is left (whole seconds)', async (t) => {
  const d = (header?: string) => parseCacheControl(header);
  t.equal(cardCacheControl(undefined, 300_000), 'max-age=300');
  t.equal(cardCacheControl(d(), 1999), 'max-age=1', 'rounded down, never promising more than is left');
  t.equal(cardCacheControl(d(), 0), 'max-age=0', 'a stale card: 0');
  t.equal(cardCacheControl(d('no-cache'), 300_000), 'no-cache, max-age=0');
  t.equal(cardCacheControl(d('no-store'), 300_000), 'no-store, max-age=0');
  t.equal(cardCacheControl(d('private, max-age=60'), 60_000), 'private, max-age=60');
  t.equal(cardCacheControl(d('private, no-cache, no-store'), 60_000), 'private, no-cache, no-store, max-age=0');
});

t.test('cardVary: A2A-Version, plus the forwarded headers only when they are believed', async (t) => {
  t.equal(cardVary({ trustProxy: false }), 'A2A-Version');
  t.equal(cardVary({ trustProxy: true }), 'A2A-Version, X-Forwarded-Proto, X-Forwarded-Host');
});

t.test('notModified: If-Modified-Since at second resolution, just under and just over', async (t) => {
  const lastModified = Date.parse('Wed, 02 Dec 2026 10:00:00 GMT') + 999;
  const ims = (date: string) => notModified({ 'if-modified-since': date }, ETAG, lastModified);
  t.equal(ims('Wed, 02 Dec 2026 10:00:00 GMT'), true, 'the same second');
  t.equal(ims('Wed, 02 Dec 2026 09:59:59 GMT'), false, 'one second earlier');
  t.equal(ims('Thu, 03 Dec 2026 10:00:00 GMT'), true, 'later');
  t.equal(ims('not a date'), false);
  t.equal(notModified({}, ETAG, lastModified), false, 'no conditional header: send the card');
  t.equal(notModified({ 'if-none-match': '"x"', 'if-modified-since': 'Thu, 03 Dec 2026 10:00:00 GMT' }, ETAG, lastModified), false, 'If-None-Match decides');
});

const opaqueArb = fc.string({ unit: fc.constantFrom(...'abcXYZ019_-!#$%&\'()*+./:;<=>?@[]^`{|}~'.split('')), maxLength: 30 }).map((s) => `"${s}"`);
const tagArb = fc.tuple(fc.boolean(), opaqueArb).map(([weak, tag]) => `${weak ? 'W/' : ''}${tag}`);
const sepArb = fc.constantFrom(',', ', ', ' ,', ' , ', ',,', ', ,\t');

t.test('notModified: a well-formed If-None-Match list matches exactly when it holds the served tag (any form, any position)', async () => {
  fc.assert(
    fc.property(fc.array(tagArb, { maxLength: 6 }), fc.boolean(), fc.nat(), fc.boolean(), sepArb, (others, include, at, weak, sep) => {
      const list = others.filter((tag) => tag.replace(/^W\//, '') !== ETAG);
      if (include) list.splice(at % (list.length + 1), 0, `${weak ? 'W/' : ''}${ETAG}`);
      const header = list.join(sep);
      return notModified({ 'if-none-match': header }, ETAG, 0) === include;
    }),
  );
});

t.test('notModified: text that is not an entity-tag never makes a match out of nothing', async () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 60 }), (header) => {
      const matched = notModified({ 'if-none-match': header }, ETAG, 0);
      return !matched || header.trim() === '*' || header.includes(ETAG);
    }),
  );
});

t.test('notModified: a header-sized list of empty elements and tags is read to its end', async (t) => {
  const list = `${'"x", ,'.repeat(5000)}${ETAG}`;
  t.equal(notModified({ 'if-none-match': list }, ETAG, 0), true);
  t.equal(notModified({ 'if-none-match': ','.repeat(30_000) }, ETAG, 0), false);
});
