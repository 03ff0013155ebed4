import t from 'tap';
import { upstreamPath } from '../../src/routes/remote-path.js';

const base = new URL('http://127.0.0.1:9/agents/a1?tenant=x');
const bare = new URL('http://127.0.0.1:9/');
const slashed = new URL('http://127.0.0.1:9/agents/a1/');

t.test('upstreamPath: the base URL itself (no suffix, a lone slash, or a query only) keeps its path and query', async () => {
  for (const suffix of ['', '/', '?q=1', '/?q=1']) {
    t.equal(upstreamPath(base, suffix), '/agents/a1?tenant=x', JSON.stringify(suffix));
    t.equal(upstreamPath(bare, suffix), '/', JSON.stringify(suffix));
    t.equal(upstreamPath(slashed, suffix), '/agents/a1/', JSON.stringify(suffix));
  }
});

t.test('upstreamPath: segments after the base are joined under it; empty segments dropped; the caller\'s query never', async () => {
  t.equal(upstreamPath(base, '/v1/card'), '/agents/a1/v1/card?tenant=x');
  t.equal(upstreamPath(base, '//v1//card/?x=1'), '/agents/a1/v1/card?tenant=x');
  t.equal(upstreamPath(slashed, '/message:send'), '/agents/a1/message:send');
  t.equal(upstreamPath(bare, '/tasks/t-1:cancel'), '/tasks/t-1:cancel');
  t.equal(upstreamPath(bare, '//'), '/');
});

t.test('upstreamPath: dot segments, encodings and backslashes are refused', async () => {
  for (const suffix of ['/..', '/.', '/a/../b', '/%2e%2e', '/a%2Fb', '/a\\b', '/a%00', '/ a']) {
    t.equal(upstreamPath(base, suffix), undefined, JSON.stringify(suffix));
  }
});
