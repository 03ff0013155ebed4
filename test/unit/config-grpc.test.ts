/**
 * The gRPC keys of the config: `server.grpc` (shared listener, host, TLS)
 * and `remotes.<name>.grpc` (the remote's gRPC endpoint, its own gRPC
 * listener), their defaults, the problems the loader reports with file and
 * line, and the reload contract (listeners stay as started, the target is live).
 */
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/loader/load.js';
import { planReload } from '../../src/config/reload.js';
import { effectiveConfig, MASK } from '../../src/commands/effective-config.js';
import { tempDir } from '../support/temp-dir.js';

const remote = (grpc = '') => `
remotes:
  agent:
    url: https://agent.example.com/a2a${grpc}`;

const problemsOf = (yaml: string): string[] => {
  try {
    parseConfig(yaml, 'gw.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return [...(err.problems ?? [err.message])];
    throw err;
  }
  return [];
};

t.test('no gRPC keys: no gRPC config at all', async (t) => {
  const config = parseConfig(remote());
  t.equal(config.server.grpc, undefined);
  t.equal(config.remotes.get('agent')!.grpc, undefined);
});

t.test('server.grpc: loopback by default, the shared port optional; a remote’s own listener takes server.grpc.host', async (t) => {
  const config = parseConfig(`server: { grpc: { port: 9090 } }${remote('\n    grpc: { target: "agent.example.com:8443", listen: { port: 9091 } }')}`);
  t.same(config.server.grpc, { host: '127.0.0.1', port: 9090 });
  t.same(config.remotes.get('agent')!.grpc, { target: 'agent.example.com:8443', listen: { host: '127.0.0.1', port: 9091 } });
  const hosted = parseConfig(`server: { grpc: { host: 0.0.0.0 } }${remote('\n    grpc: { listen: { port: 0, publicTarget: "gw.example.com:9443" } }')}`);
  t.same(hosted.server.grpc, { host: '0.0.0.0' }, 'no shared listener without a port');
  t.same(hosted.remotes.get('agent')!.grpc, { listen: { host: '0.0.0.0', port: 0, publicTarget: 'gw.example.com:9443' } });
});

t.test('server.grpc.tls: files read; requireClientCert needs caFile', async (t) => {
  const dir = tempDir('a2a-egress-grpc-config-');
  for (const name of ['cert.pem', 'key.pem', 'ca.pem']) writeFileSync(join(dir, name), `${name} bytes`);
  const config = parseConfig(`server: { grpc: { port: 0, tls: { certFile: ${dir}/cert.pem, keyFile: ${dir}/key.pem, caFile: ${dir}/ca.pem, requireClientCert: true } } }${remote()}`);
  t.equal(config.server.grpc?.tls?.cert.toString(), 'cert.pem bytes');
  t.equal(config.server.grpc?.tls?.ca?.toString(), 'ca.pem bytes');
  t.equal(config.server.grpc?.tls?.requireClientCert, true);
  const shown = effectiveConfig(config) as { server: { grpc: unknown } };
  t.same(shown.server.grpc, { host: '127.0.0.1', port: 0, tls: { ca: 'PEM, 12 bytes', cert: 'PEM, 14 bytes', key: MASK, requireClientCert: true } }, 'a2a-egress check: the key never shown');
  t.notMatch(JSON.stringify(effectiveConfig(config)), /key\.pem bytes/);
  t.match(problemsOf(`server: { grpc: { tls: { certFile: ${dir}/cert.pem, keyFile: ${dir}/key.pem, requireClientCert: true } } }${remote()}`).join('\n'), /server\.grpc\.tls: requireClientCert needs caFile/);
  t.match(problemsOf(`server: { grpc: { tls: { certFile: ${dir}/missing.pem, keyFile: ${dir}/key.pem } } }${remote()}`).join('\n'), /^gw\.yaml:1: server\.grpc\.tls\.certFile: cannot read .*missing\.pem: ENOENT/);
  t.match(problemsOf(`server: { grpc: { tls: { certFile: ${dir}/cert.pem } } }${remote()}`).join('\n'), /server\.grpc\.tls\.keyFile: is required/);
});

t.test('problems: a target that is not a gRPC endpoint, two listeners on one port, unknown keys', async (t) => {
  t.match(problemsOf(remote('\n    grpc: { target: "https://agent.example.com/a2a/grpc" }')), [/^gw\.yaml:5: remotes\.agent\.grpc\.target: gRPC target must not have a path$/]);
  t.match(problemsOf(remote('\n    grpc: { target: "ftp://agent.example.com:21" }')), [/remotes\.agent\.grpc\.target: gRPC target scheme ftp: is not one of/]);
  t.match(problemsOf(`server: { grpc: { port: 9090 } }${remote('\n    grpc: { listen: { port: 9090 } }')}`), [/remotes\.agent\.grpc\.listen\.port: 127\.0\.0\.1:9090 is also server\.grpc\.port/]);
  t.same(problemsOf(`server: { grpc: { port: 0 } }${remote('\n    grpc: { listen: { port: 0 } }')}`), [], 'port 0 never clashes');
  t.match(problemsOf(remote('\n    grpc: { targt: "x:1" }')), [/remotes\.agent\.grpc\.targt: unknown key; did you mean "target"\?/]);
  t.match(problemsOf(remote('\n    grpc: { listen: { port: 1, publicTarget: "no port here" } }')), [/publicTarget: must match pattern/]);
  t.match(problemsOf(`server: { grpc: { port: 70000 } }${remote()}`), [/server\.grpc\.port: must be <= 65535/]);
});

t.test('reload: gRPC listeners stay as started and are named; the target takes effect', async (t) => {
  const before = parseConfig(`server: { grpc: { port: 9090 } }${remote('\n    grpc: { target: "a.example.com:1", listen: { port: 9091 } }')}`);
  const after = parseConfig(`server: { grpc: { port: 9092 } }${remote('\n    grpc: { target: "b.example.com:2", listen: { port: 9093 } }')}
  added:
    url: https://added.example.com/
    grpc: { listen: { port: 9094 } }`);
  const plan = planReload(before, after);
  t.same([...plan.restartNeeded].sort(), ['remotes.added.grpc.listen', 'remotes.agent.grpc.listen', 'server.grpc']);
  t.same(plan.config.server.grpc, { host: '127.0.0.1', port: 9090 });
  t.same(plan.config.remotes.get('agent')!.grpc, { target: 'b.example.com:2', listen: { host: '127.0.0.1', port: 9091 } });
  t.equal(plan.config.remotes.get('added')!.grpc, undefined, 'a new remote gets no gRPC listener until a restart');
  t.same(planReload(before, before).restartNeeded, [], 'nothing changed, nothing named');
});
