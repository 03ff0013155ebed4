import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import t from 'tap';
import { PushKeyRing, parsePushKeys } from '../../src/push/keys.js';
import { credentialMatches, mintCredential, openTicket, sealTicket, ticketExpired, type PushTicket } from '../../src/push/ticket.js';

const key = (): Buffer => randomBytes(32);
const TICKET: PushTicket = {
  target: 'http://127.0.0.1:3000/hooks/a2a',
  auth: { schemes: ['Bearer'], credentials: 'local-agent-secret' },
  token: 'caller-token',
  remote: 'weather',
  taskId: 'task-1',
  configId: 'cfg-1',
  callerGeneration: '0.3',
  remoteGeneration: '1.0',
  issuedAt: 1_800_000_000,
};

t.test('a sealed ticket opens to what was sealed, and hides it from whoever holds the URL', async (t) => {
  const ring = new PushKeyRing([key()]);
  const text = sealTicket(ring, TICKET);
  t.match(text, /^[A-Za-z0-9_-]+$/, 'URL-safe');
  for (const secret of ['127.0.0.1', 'hooks', 'local-agent-secret', 'caller-token', 'task-1', 'weather']) {
    t.notOk(text.includes(secret) || Buffer.from(text, 'base64url').includes(secret), `${secret} not readable in the ticket`);
  }
  const opened = openTicket(ring, text);
  t.ok(opened.ok);
  if (opened.ok) {
    t.same(opened.ticket, TICKET);
    t.match(opened.ref, /^[0-9a-f]{16}$/);
  }
  t.not(sealTicket(ring, TICKET), text, 'a fresh IV each time: two configs never share a ticket');
  // Minimal ticket: no optional members.
  const minimal: PushTicket = { target: 'http://localhost/h', remote: 'r', callerGeneration: '1.0', remoteGeneration: '1.0', issuedAt: 1 };
  const m = openTicket(ring, sealTicket(ring, minimal));
  t.same(m.ok && m.ticket, minimal);
});

t.test('length: 33 bytes of overhead plus the JSON, in base64url', async (t) => {
  const ring = new PushKeyRing([key()]);
  const text = sealTicket(ring, TICKET);
  const json = JSON.stringify({ u: TICKET.target, r: TICKET.remote, g: '0.3', rg: '1.0', iat: TICKET.issuedAt, a: { s: ['Bearer'], c: 'local-agent-secret' }, k: 'caller-token', t: 'task-1', i: 'cfg-1' });
  t.equal(Buffer.from(text, 'base64url').length, 1 + 4 + 12 + Buffer.byteLength(json) + 16);
  t.equal(text.length, Math.ceil(((33 + Buffer.byteLength(json)) * 4) / 3));
});

t.test('rotation: the first key seals, every key opens; a removed key is "unknown-key"', async (t) => {
  const [oldKey, newKey] = [key(), key()];
  const before = new PushKeyRing([oldKey]);
  const during = new PushKeyRing([newKey, oldKey]);
  const after = new PushKeyRing([newKey]);
  const old = sealTicket(before, TICKET);
  const fresh = sealTicket(during, TICKET);
  t.ok(openTicket(during, old).ok, 'old tickets still open during rotation');
  t.ok(openTicket(after, fresh).ok, 'new tickets are sealed with the new key');
  t.same(openTicket(after, old), { ok: false, problem: 'unknown-key' });
  const o = openTicket(during, old);
  const f = openTicket(during, fresh);
  t.ok(o.ok && f.ok && !o.key.id.equals(f.key.id));
});

t.test('altered, truncated or foreign text never opens', async (t) => {
  const ring = new PushKeyRing([key()]);
  const text = sealTicket(ring, TICKET);
  const bytes = Buffer.from(text, 'base64url');
  for (let i = 5; i < bytes.length; i += 7) {
    const altered = Buffer.from(bytes);
    altered[i] = altered[i]! ^ 0x01;
    t.same(openTicket(ring, altered.toString('base64url')), { ok: false, problem: 'forged' }, `byte ${i} flipped`);
  }
  t.same(openTicket(ring, bytes.subarray(0, bytes.length - 1).toString('base64url')), { ok: false, problem: 'forged' });
  const version2 = Buffer.from(bytes);
  version2[0] = 2;
  t.same(openTicket(ring, version2.toString('base64url')), { ok: false, problem: 'malformed' });
  for (const bad of ['', 'a', 'not base64!', 'x'.repeat(70_000), `${text}/x`]) t.equal(openTicket(ring, bad).ok, false);
  // Another gateway's ring (or this one after rotation) does not know the key.
  t.same(openTicket(new PushKeyRing([key()]), text), { ok: false, problem: 'unknown-key' });
});

t.test('the minted credential is derived from the ticket, differs per ticket and per key, compared in constant time', async (t) => {
  const ring = new PushKeyRing([key()]);
  const a = sealTicket(ring, TICKET);
  const b = sealTicket(ring, TICKET);
  const ca = mintCredential(ring.current, a);
  t.match(ca, /^[A-Za-z0-9_-]{43}$/);
  t.equal(mintCredential(ring.current, a), ca, 'same ticket, same credential (nothing stored)');
  t.not(mintCredential(ring.current, b), ca);
  t.not(mintCredential(new PushKeyRing([key()]).current, a), ca);
  t.ok(credentialMatches(ca, ca));
  t.notOk(credentialMatches(ca, `${ca}x`));
  t.notOk(credentialMatches(ca, ''));
  t.notOk(credentialMatches(ca, ca.slice(0, -1)));
});

t.test('expiry: too old, or issued implausibly far ahead', async (t) => {
  const now = TICKET.issuedAt * 1000;
  t.notOk(ticketExpired(TICKET, now + 100_000, 100), 'exactly max age is still valid');
  t.ok(ticketExpired(TICKET, now + 101_000, 100), 'one second over');
  t.notOk(ticketExpired(TICKET, now - 300_000, 100), 'a replica 5 minutes behind');
  t.ok(ticketExpired(TICKET, now - 301_000, 100));
});

t.test('keys: base64 or base64url of 32 bytes, newest first, never printed', async (t) => {
  const a = key();
  const b = key();
  const parsed = parsePushKeys(`# current\n${a.toString('base64')}\n${b.toString('base64url')} # previous\n`);
  t.ok(parsed.ok);
  if (!parsed.ok) return;
  t.equal(parsed.ring.size, 2);
  t.same(parsed.ring.current, new PushKeyRing([a]).current);
  const shown = `${String(parsed.ring)} ${JSON.stringify({ ring: parsed.ring })} ${inspect(parsed.ring)}`;
  t.notOk(shown.includes(a.toString('base64')) || shown.includes(a.toString('hex')), 'no key in any printed form');
  t.match(parsePushKeys(''), { ok: false, problem: /no key/ });
  t.match(parsePushKeys(randomBytes(31).toString('base64')), { ok: false, problem: /key 1 is not base64 of exactly 32 bytes/ });
  t.match(parsePushKeys(`${a.toString('base64')},${a.toString('base64url')}`), { ok: false, problem: /key 2 is given twice/ });
  t.match(parsePushKeys(Array.from({ length: 17 }, () => key().toString('base64')).join(',')), { ok: false, problem: /more than 16/ });
  const problem = parsePushKeys(`${a.toString('base64')},zz${a.toString('base64')}`);
  t.notOk(!problem.ok && problem.problem.includes(a.toString('base64').slice(0, 10)), 'a problem never quotes a key');
});
