/**
 * The CI version of `npm run soak`: the real script (real gateway process,
 * real remotes that misbehave, flap and restart) for a short run, then its
 * exit code and its report. SOAK_SECONDS / SOAK_RATE change the run.
 */
import { spawn } from 'node:child_process';
import t from 'tap';
import { checkEnvelope, checkStream } from '../../scripts/soak-traffic.js';

const seconds = Number(process.env.SOAK_SECONDS ?? '') || 30;
const rate = Number(process.env.SOAK_RATE ?? '') || 100;

// The run plus start-up, the bounded wait for calls in flight and shutdown.
t.setTimeout((seconds + 90) * 1000);

interface SoakReport {
  calls: number;
  replies: number;
  wrongId: number;
  invalid: number;
  lost: number;
  crashes: number;
  gatewayExitOnSigterm: number | string;
  streams: number;
  callLogLines: number;
  remoteStops: { flapping: number; good: number };
  rssMiB: { start: number; peak: number; end: number };
  outcomes: Record<string, number>;
  problems: string[];
}

function runSoak(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/soak.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test(`soak for ${seconds} s at ${rate} req/s: every call answered with its own id, no crash`, async (t) => {
  const run = await runSoak(['--seconds', String(seconds), '--rate', String(rate), '--callers', '10']);
  const line = run.stdout.split('\n').find((l) => l.startsWith('SOAK_REPORT '));
  t.ok(line, `a report line (stderr: ${run.stderr.slice(-500)})`);
  if (!line) return;
  const report = JSON.parse(line.slice('SOAK_REPORT '.length)) as SoakReport;
  t.comment(run.stdout.slice(run.stdout.indexOf('soak report')));

  t.equal(run.code, 0, 'exit 0');
  t.ok(report.calls >= seconds * rate * 0.9, `about ${seconds * rate} calls made (${report.calls})`);
  t.equal(report.replies, report.calls, 'a reply for every call');
  t.equal(report.wrongId, 0, 'no reply with a wrong id');
  t.equal(report.invalid, 0, 'no invalid reply');
  t.equal(report.lost, 0, 'no lost reply');
  t.equal(report.crashes, 0, 'no gateway crash');
  t.equal(report.gatewayExitOnSigterm, 0, 'the gateway exits 0 on SIGTERM afterwards');
  t.equal(report.callLogLines, report.calls, 'one call log line per call');
  t.ok(report.streams > 0, 'streams were part of the mix');
  t.ok(report.remoteStops.flapping >= 2, 'the flapping remote went down and came back');
  t.equal(report.remoteStops.good, 1, 'the well-behaved remote was restarted once');
  t.ok(Object.keys(report.outcomes).some((k) => k.startsWith('hostile ') && k !== 'hostile ok'), 'hostile cases were normalized');
  t.ok(report.rssMiB.start > 0 && report.rssMiB.peak >= report.rssMiB.start, 'RSS sampled');
});

t.test('the soak notices a gateway crash: exit 1 and the crash reported', async (t) => {
  const run = await runSoak(['--seconds', '6', '--rate', '50', '--callers', '5', '--kill-gateway-after', '2']);
  const line = run.stdout.split('\n').find((l) => l.startsWith('SOAK_REPORT '));
  t.ok(line, 'a report line');
  const report = JSON.parse(line?.slice('SOAK_REPORT '.length) ?? '{}') as SoakReport;
  t.equal(run.code, 1, 'exit 1');
  t.equal(report.crashes, 1);
  t.equal(report.gatewayExitOnSigterm, 'crashed');
  t.ok(report.calls < 6 * 50, 'traffic stopped at the crash');
});

t.test('the reply checks: wrong ids, broken envelopes and broken streams are caught', async (t) => {
  const info = '[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UPSTREAM_RESET","domain":"a2a-egress"}]';
  const err = (id: string) => `{"jsonrpc":"2.0","id":${id},"error":{"code":-32603,"message":"m","data":${info}}}`;
  t.match(checkEnvelope('{"jsonrpc":"2.0","id":"a","result":{}}', 'a'), { kind: 'ok', outcome: 'ok' });
  t.match(checkEnvelope(err('"a"'), 'a'), { kind: 'ok', outcome: 'UPSTREAM_RESET' });
  t.match(checkEnvelope('{"jsonrpc":"2.0","id":"b","result":{}}', 'a'), { kind: 'wrong-id' });
  t.match(checkEnvelope('{"jsonrpc":"2.0","id":"7","result":{}}', 7), { kind: 'wrong-id' }, 'the id type counts');
  t.match(checkEnvelope('{"jsonrpc":"2.0","id":"a","result":{},"error":{}}', 'a'), { kind: 'invalid' });
  t.match(checkEnvelope('{"jsonrpc":"2.0","id":"a"}', 'a'), { kind: 'invalid' });
  t.match(checkEnvelope('<html>', 'a'), { kind: 'invalid' });
  t.match(checkEnvelope('{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}', 'a'), { kind: 'invalid' }, 'no ErrorInfo');
  const a2aFirst = '[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_AGENT_RESPONSE","domain":"a2a-protocol.org"},'
    + '{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_JSON","domain":"a2a-egress"}]';
  t.match(checkEnvelope(`{"jsonrpc":"2.0","id":"a","error":{"code":-32006,"message":"m","data":${a2aFirst}}}`, 'a'), { kind: 'ok', outcome: 'INVALID_JSON' }, 'the gateway\'s reason, found by its domain');
  const foreign = '[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"X","domain":"example.com"}]';
  t.match(checkEnvelope(`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m","data":${foreign}}}`, 'a'), { kind: 'invalid' }, 'no ErrorInfo of the gateway\'s');

  const ok = 'data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
  t.match(checkStream(`${ok}: keep-alive\n\n${ok}data: ${err('1')}\n\n`, 1), { kind: 'ok', outcome: 'UPSTREAM_RESET', events: 3 });
  t.match(checkStream(`data: ${err('1')}\n\n${ok}`, 1), { kind: 'invalid' }, 'an event after the error');
  t.match(checkStream(ok.replace('"id":1', '"id":2'), 1), { kind: 'wrong-id' });
  t.match(checkStream(ok.slice(0, -1), 1), { kind: 'invalid' }, 'an unfinished event');
  t.match(checkStream(': keep-alive\n\n', 1), { kind: 'invalid' }, 'no event at all');
  t.match(checkStream('event: x\ndata: {}\n\n', 1), { kind: 'invalid' }, 'more than a data line');
});

t.test('bad arguments exit 2 without starting anything', async (t) => {
  const run = await runSoak(['--seconds', '0']);
  t.equal(run.code, 2);
  t.match(run.stderr, /--seconds must be a number/);
});
