import t from 'tap';
import { parseTargetPolicy, TargetPolicy } from '../../src/push/targets.js';

function policy(entries: string[], allowPrivate = false): TargetPolicy {
  const p = parseTargetPolicy(entries, allowPrivate);
  if (!p.ok) throw new Error(p.problem);
  return p.policy;
}

const verdict = (p: TargetPolicy, url: string, self: string[] = []): string => {
  const c = p.check(url, self);
  return c.ok ? c.rule : c.problem;
};

t.test('the default ("loopback"): http or https to localhost, 127/8 and ::1, any port and path; nothing else', async (t) => {
  const p = policy(['loopback']);
  for (const url of ['http://127.0.0.1:3000/hook', 'https://localhost/x', 'http://127.1.2.3/', 'http://[::1]:8080/a?b=c', 'http://LOCALHOST:1/']) {
    t.equal(verdict(p, url), 'loopback', url);
  }
  t.match(verdict(p, 'https://agent.example.com/hook'), /not in server.push.allowedTargets/);
  t.match(verdict(p, 'http://agent.example.com/hook'), /must be https/);
  t.match(verdict(p, 'http://10.0.0.5/hook'), /must be https/);
  t.match(verdict(p, 'http://0.0.0.0:3000/'), /must be https/, '0.0.0.0 is not loopback');
  t.match(verdict(p, 'http://localhost.evil.example/'), /must be https/);
});

t.test('§13.2 rules hold for every entry', async (t) => {
  const p = policy(['loopback', 'https://agent.example.com']);
  t.match(verdict(p, 'http://user:pw@127.0.0.1/h'), /must not contain credentials/);
  t.match(verdict(p, 'https://user@agent.example.com/h'), /must not contain credentials/);
  t.match(verdict(p, 'http://127.0.0.1/h#frag'), /fragment/);
  t.match(verdict(p, 'http://127.0.0.1/h#'), /fragment/);
  t.match(verdict(p, 'ftp://127.0.0.1/h'), /http or https/);
  t.match(verdict(p, 'file:///etc/passwd'), /http or https/);
  t.match(verdict(p, 'javascript:alert(1)'), /http or https/);
  t.match(verdict(p, '/relative'), /not a valid absolute URL/);
  t.match(verdict(p, `http://127.0.0.1/${'a'.repeat(2048)}`), /longer than 2048 bytes/);
  t.equal(verdict(p, `http://127.0.0.1/${'a'.repeat(2048 - 'http://127.0.0.1/'.length)}`), 'loopback', 'exactly 2048 bytes');
});

t.test('URL prefix entries: scheme, host, wildcard, port, path on a segment boundary', async (t) => {
  const p = policy(['https://agent.example.com/hooks', 'https://*.corp.example:*', 'http://sidecar.internal:8080']);
  t.equal(verdict(p, 'https://agent.example.com/hooks'), 'public');
  t.equal(verdict(p, 'https://agent.example.com/hooks/a2a?x=1'), 'public');
  t.match(verdict(p, 'https://agent.example.com/hooksX'), /not in/, 'prefix ends on a segment boundary');
  t.match(verdict(p, 'https://agent.example.com/other'), /not in/);
  t.match(verdict(p, 'https://agent.example.com:8443/hooks'), /not in/, 'no port in the entry = the default port only');
  t.match(verdict(p, 'http://agent.example.com/hooks'), /must be https/, 'an https entry does not allow http');
  t.equal(verdict(p, 'https://a.corp.example:9000/x'), 'public');
  t.equal(verdict(p, 'https://a.b.corp.example/x'), 'public');
  t.match(verdict(p, 'https://corp.example/x'), /not in/, 'the wildcard needs a label');
  t.match(verdict(p, 'https://evilcorp.example/x'), /not in/);
  t.equal(verdict(p, 'http://sidecar.internal:8080/h'), 'public', 'http where the entry says http');
  t.match(verdict(p, 'http://sidecar.internal:8081/h'), /must be https/);
});

t.test('private addresses: only as an IP literal written in an entry, or with allowPrivateTargets', async (t) => {
  const p = policy(['http://10.1.2.3:8080', 'https://*.example.com:*', 'https://169.254.169.254']);
  t.equal(verdict(p, 'http://10.1.2.3:8080/h'), 'any', 'the literal the operator wrote');
  t.equal(verdict(p, 'https://169.254.169.254/latest'), 'any', 'written, so allowed (the operator asked for it)');
  t.equal(verdict(p, 'https://hooks.example.com/h'), 'public', 'names must resolve to public addresses');
  const wide = policy(['https://*.example.com'], true);
  t.equal(verdict(wide, 'https://hooks.example.com/h'), 'any');
  t.match(parseTargetPolicy(['https://*.10.0.0.1'], false), { ok: false, problem: /wildcard needs a domain name/ });
});

t.test("the gateway's own webhook is never a target (no loops)", async (t) => {
  const p = policy(['loopback']);
  t.match(verdict(p, 'http://127.0.0.1:9000/push/abc', ['http://127.0.0.1:9000/push']), /own webhook/);
  t.equal(verdict(p, 'http://127.0.0.1:9000/pushX', ['http://127.0.0.1:9000/push']), 'loopback');
});

t.test('entries that are not a URL prefix are refused at load, naming the entry', async (t) => {
  for (const bad of ['*', 'https://', 'https://a.example/x?y', 'https://a.example/x#y', 'https://u@a.example', 'ftp://a.example', 'https://a*.example', 'https://a.example:99999']) {
    t.match(parseTargetPolicy([bad], false), { ok: false, problem: /entry 1/ }, bad);
  }
});

t.test('connect-time rule: every resolved address must fit the rule', async (t) => {
  t.ok(TargetPolicy.addressAllowed('loopback', '127.0.0.1'));
  t.ok(TargetPolicy.addressAllowed('loopback', '::1'));
  t.ok(TargetPolicy.addressAllowed('loopback', '::ffff:127.0.0.2'));
  t.notOk(TargetPolicy.addressAllowed('loopback', '10.0.0.1'));
  t.notOk(TargetPolicy.addressAllowed('loopback', '93.184.216.34'));
  t.ok(TargetPolicy.addressAllowed('public', '93.184.216.34'));
  for (const a of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '192.168.1.1', 'fd00::1', '::ffff:10.0.0.1']) t.notOk(TargetPolicy.addressAllowed('public', a), a);
  t.ok(TargetPolicy.addressAllowed('any', '10.0.0.1'));
});
