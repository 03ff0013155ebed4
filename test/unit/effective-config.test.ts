import t from 'tap';
import { effectiveConfig, maskUrl, MASK } from '../../src/commands/effective-config.js';
import { parseConfig } from '../../src/loader/load.js';

t.test('maskUrl hides a password and keeps everything else', async (t) => {
  t.equal(maskUrl('redis://user:secret@h:6379/0'), `redis://user:${MASK}@h:6379/0`);
  t.equal(maskUrl('rediss://:secret@h'), `rediss://:${MASK}@h`);
  t.equal(maskUrl('https://h.example/a2a'), 'https://h.example/a2a', 'nothing to hide');
  t.equal(maskUrl('not a url'), MASK, 'what cannot be parsed is not shown at all');
});

t.test('the effective config: defaults merged, credentials by name, secrets never shown', async (t) => {
  const config = parseConfig(
    `server: { publicBaseUrl: 'https://gw:pw-in-base@gw.example/' }
defaults: { limits: { maxErrorMessageBytes: 120 } }
remotes:
  w:
    url: https://w.example/a2a
    agentCardUrl: 'https://card:pw-in-card@w.example/card.json'
    auth: { type: header, name: x-api-key, valueEnv: W_KEY }
    rateLimit: { perSecond: 1, burst: 2, store: { type: redis, url: 'redis://:pw-in-redis@r:6379' } }
    methods: [GetTask]
`,
    'e.yaml',
  );
  const shown = effectiveConfig(config) as { server: Record<string, unknown>; remotes: Record<string, Record<string, unknown>> };
  const text = JSON.stringify(shown);
  for (const secret of ['pw-in-base', 'pw-in-card', 'pw-in-redis']) t.notOk(text.includes(secret), `${secret} masked`);
  t.equal(shown.server.drainMs, 10_000, 'server defaults');
  const w = shown.remotes.w!;
  t.equal((w.limits as Record<string, number>).maxErrorMessageBytes, 120, 'from defaults');
  t.equal((w.limits as Record<string, number>).maxJsonDepth, 64, 'built in');
  t.same(w.auth, { type: 'header', name: 'x-api-key', valueEnv: 'W_KEY' });
  t.same(w.methods, ['GetTask']);
  t.equal(w.url, 'https://w.example/a2a');
  const withTls = { ...config, remotes: new Map([['t', { ...config.remotes.get('w')!, tls: { ca: Buffer.from('ca'), key: Buffer.from('private-key-bytes'), minVersion: 'TLSv1.3' as const } }]]) };
  const tls = (effectiveConfig(withTls) as { remotes: Record<string, { tls: unknown }> }).remotes.w!.tls;
  t.same(tls, { ca: 'PEM, 2 bytes', key: MASK, minVersion: 'TLSv1.3' }, 'TLS summarised, the private key masked');
});

t.test('the effective config shows the version bridge keys, set or not', async (t) => {
  const config = parseConfig(
    `remotes:\n  a: { url: https://a.example/a2a, versions: ['0.3'], unversionedCard: '0.3' }\n  b: { url: https://b.example/a2a }\n`,
    'v.yaml',
  );
  const shown = effectiveConfig(config) as { remotes: Record<string, Record<string, unknown>> };
  t.same([shown.remotes.a!.versions, shown.remotes.a!.unversionedCard], [['0.3'], '0.3']);
  t.same([shown.remotes.b!.versions, shown.remotes.b!.unversionedCard], ['from the card', 'remote']);
});
