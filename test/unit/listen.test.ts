import t from 'tap';
import { callerPort, configPath, opsPort, parsePort, PortError } from '../../src/config/listen.js';

t.test('caller port: --port, else $A2A_EGRESS_PORT, else server.port, else 8080', async (t) => {
  t.equal(callerPort(9000, '7000', { A2A_EGRESS_PORT: '8000' }), 7000);
  t.equal(callerPort(9000, undefined, { A2A_EGRESS_PORT: '8000' }), 8000);
  t.equal(callerPort(9000, undefined, {}), 9000);
  t.equal(callerPort(9000, undefined, { A2A_EGRESS_PORT: '' }), 9000, 'an empty variable is unset');
  t.equal(callerPort(undefined, undefined, {}), 8080);
});

t.test('ops port: server.opsPort when set, else the caller port by the same rule', async (t) => {
  t.equal(opsPort({ port: 8080, opsPort: 9090 }, { A2A_EGRESS_PORT: '8000' }), 9090);
  t.equal(opsPort({ port: 8080 }, { A2A_EGRESS_PORT: '8000' }), 8000);
  t.equal(opsPort({ port: 8081 }, {}), 8081);
  t.equal(opsPort(undefined, {}), 8080, 'no server section');
});

t.test('ports: 0 and 65535 accepted; -1, 65536, fractions and words refused, naming the source', async (t) => {
  t.equal(parsePort('0', '--port'), 0);
  t.equal(parsePort('65535', '--port'), 65535);
  for (const bad of ['-1', '65536', '80.5', 'http', '', ' ']) t.throws(() => parsePort(bad, 'A2A_EGRESS_PORT'), new PortError('A2A_EGRESS_PORT: must be an integer 0..65535'), JSON.stringify(bad));
  t.throws(() => callerPort(8080, undefined, { A2A_EGRESS_PORT: '99999' }), /A2A_EGRESS_PORT: must be an integer/);
});

t.test('config path: --config, else $A2A_EGRESS_CONFIG, else config/gateway.yaml', async (t) => {
  t.equal(configPath('a.yaml', { A2A_EGRESS_CONFIG: 'b.yaml' }), 'a.yaml');
  t.equal(configPath(undefined, { A2A_EGRESS_CONFIG: 'b.yaml' }), 'b.yaml');
  t.equal(configPath(undefined, {}), 'config/gateway.yaml');
});
