/**
 * npm run soak -- --minutes 10   (or --seconds N; --rate R req/s total, --callers C)
 *
 * Starts, all on 127.0.0.1, four remotes (well-behaved, slow, hostile cycling
 * through every hostile case, flapping: stopped and restarted on its port
 * every few seconds) and one gateway process (`node dist/cli.js`), then sends
 * mixed unary and streaming traffic at a steady rate from several callers,
 * restarting the well-behaved remote halfway. Every call carries a unique id
 * and every reply is checked (scripts/soak-traffic.ts). Prints a report and
 * a final `SOAK_REPORT {json}` line; exits 1 if a reply had a wrong id or was
 * invalid, a call was lost, the gateway crashed, or a call was never answered.
 * `--kill-gateway-after S` kills the gateway on purpose: a self-test that the
 * soak notices a crash.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { HOSTILE_CASE_NAMES, startHostileUpstream } from '../test/support/hostile-upstream.js';
import { RestartableServer, flap, wellBehavedAgent } from './soak-upstreams.js';
import { soakCall, type CallSpec, type Verdict } from './soak-traffic.js';

interface Options {
  readonly seconds: number;
  readonly rate: number;
  readonly callers: number;
  /** Self-test of the soak's own crash detection: SIGKILL the gateway after this many seconds. */
  readonly killGatewayAfter?: number;
}

function parseCli(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: 'string' },
      seconds: { type: 'string' },
      rate: { type: 'string' },
      callers: { type: 'string' },
      'kill-gateway-after': { type: 'string' },
    },
    strict: true,
  });
  const num = (name: string, raw: string | undefined, fallback: number, min: number, max: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number ${min}..${max}`);
    return n;
  };
  const seconds = values.seconds !== undefined ? num('seconds', values.seconds, 0, 1, 86_400) : num('minutes', values.minutes, 10, 1 / 60, 1_440) * 60;
  const kill = values['kill-gateway-after'];
  return {
    seconds,
    rate: num('rate', values.rate, 200, 1, 5_000),
    callers: Math.round(num('callers', values.callers, 20, 1, 500)),
    ...(kill !== undefined ? { killGatewayAfter: num('kill-gateway-after', kill, 0, 0, 86_400) } : {}),
  };
}

const STREAM_METHOD = 'SendStreamingMessage';

function gatewayConfig(urls: { good: string; slow: string; hostile: string; flapping: string }): string {
  const remote = (url: string, extra = '') => `    url: ${url}/\n    allowPrivateNetwork: true\n${extra}`;
  return `server:
  host: 127.0.0.1
  logLevel: info
  drainMs: 3000
  maxConnections: 10000
defaults:
  timeouts: { connectMs: 1000, headersMs: 2000, totalMs: 2500, streamIdleMs: 1500, streamNoDataMs: 2000, maxStreamMs: 5000, keepAliveMs: 500 }
  limits: { maxResponseBytes: 262144, maxEventBytes: 65536, maxStreamBytes: 262144, maxStreamEvents: 200, maxConcurrent: 512, maxQueued: 512 }
  # A short cooldown, so a restarted remote's circuit closes again within the run.
  circuitBreaker: { cooldownMs: 2000 }
remotes:
  good:
${remote(urls.good)}  slow:
${remote(urls.slow)}  hostile:
${remote(urls.hostile, '    circuitBreaker: { failureThreshold: 10000 }\n')}  flapping:
${remote(urls.flapping, '    circuitBreaker: { failureThreshold: 5, cooldownMs: 1000 }\n')}`;
}

/** Picks the next call: a fixed mix of remotes and kinds, the hostile cases in turn. */
function callPicker() {
  let hostileTurn = 0;
  let seq = 0;
  return (caller: number): CallSpec => {
    seq++;
    // Unique ids, some numbers and some strings (the gateway must keep each type).
    const id = seq % 5 === 0 ? seq : `c${caller}-${seq}`;
    const r = Math.random();
    if (r < 0.3) return { path: '/remotes/good/', method: 'SendMessage', streaming: false, id };
    if (r < 0.45) return { path: '/remotes/good/', method: STREAM_METHOD, streaming: true, id };
    if (r < 0.55) {
      const slowPath = ['slow-headers/ms=300', 'slow-body/ms=200', 'slow-headers/ms=3000'][seq % 3]!;
      return { path: `/remotes/slow/${slowPath}`, method: 'GetTask', streaming: false, id };
    }
    if (r < 0.85) {
      const name = HOSTILE_CASE_NAMES[hostileTurn++ % HOSTILE_CASE_NAMES.length]!;
      const wrongId = hostileTurn % 3 === 0 ? '/wrongId=1' : '';
      // Each case alternately as a unary and as a streaming call, so both paths meet every case.
      const streaming = Math.floor(hostileTurn / HOSTILE_CASE_NAMES.length) % 2 === 1 ? !name.startsWith('sse-') : name.startsWith('sse-');
      return { path: `/remotes/hostile/${name}${wrongId}`, method: streaming ? STREAM_METHOD : 'SendMessage', streaming, id };
    }
    const streaming = r > 0.95;
    return { path: '/remotes/flapping/', method: streaming ? STREAM_METHOD : 'SendMessage', streaming, id };
  };
}

interface Rss {
  readonly rssKiB: number;
  readonly hwmKiB: number;
}

function readRss(pid: number): Rss | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssKiB: kib('VmRSS'), hwmKiB: kib('VmHWM') };
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const opts = parseCli(process.argv.slice(2));
  if (!existsSync('dist/cli.js')) {
    process.stdout.write('soak: dist/cli.js missing, building\n');
    const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
    if (build.status !== 0) throw new Error('build failed');
  }

  const good = new RestartableServer(wellBehavedAgent());
  const flapping = new RestartableServer(wellBehavedAgent(200));
  await good.start();
  await flapping.start();
  const slowAndHostile = await startHostileUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'a2a-egress-soak-'));
  const configPath = join(dir, 'gateway.yaml');
  writeFileSync(configPath, gatewayConfig({ good: good.url, slow: slowAndHostile.url, hostile: slowAndHostile.url, flapping: flapping.url }));

  const child = spawn(process.execPath, ['dist/cli.js', '--config', configPath, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Never leave a gateway behind, however the soak itself ends.
  process.once('exit', () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  let crashed = false;
  let stopping = false;
  let stderrTail = '';
  let callLogLines = 0;
  let partial = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.once('exit', () => {
    if (!stopping) crashed = true;
  });
  child.stderr.on('data', (c: Buffer) => (stderrTail = (stderrTail + c.toString('utf8')).slice(-4000)));
  const gatewayUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      const lines = (partial + c.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.includes('"msg":"call"')) callLogLines++;
        const m = /"address":"(http:\/\/[^"]+)"/.exec(line);
        if (m?.[1]) resolve(m[1]);
      }
    });
    void exited.then((code) => reject(new Error(`gateway exited with ${code} before listening: ${stderrTail}`)));
  });
  const pid = child.pid!;
  const rssStart = readRss(pid);
  let peakRssKiB = rssStart?.rssKiB ?? 0;
  const rssTimer = setInterval(() => {
    const now = readRss(pid);
    if (now) peakRssKiB = Math.max(peakRssKiB, now.rssKiB);
  }, 500);
  process.stdout.write(`soak: gateway pid ${pid} at ${gatewayUrl}, ${opts.seconds} s at ${opts.rate} req/s from ${opts.callers} callers\n`);

  const killer = opts.killGatewayAfter === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), opts.killGatewayAfter * 1000);
  const flapStop = new AbortController();
  const flapping$ = flap(flapping, 3_000, 1_000, flapStop.signal);
  // Enough sockets per caller that a call never waits in the caller's own queue: its deadline measures the gateway.
  const agents = Array.from({ length: opts.callers }, () => new Agent({ connections: 256, pipelining: 1 }));
  const pick = callPicker();
  const counts = { calls: 0, replies: 0, wrongId: 0, invalid: 0, lost: 0, streams: 0, events: 0 };
  const outcomes = new Map<string, number>();
  const problems: string[] = [];
  const inFlight = new Set<Promise<void>>();
  const record = (spec: CallSpec, v: Verdict): void => {
    if (v.kind === 'lost') counts.lost++;
    else counts.replies++;
    if (v.kind === 'wrong-id') counts.wrongId++;
    if (v.kind === 'invalid') counts.invalid++;
    if (v.kind === 'ok') {
      const key = `${spec.path.split('/')[2]} ${v.outcome}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      if (spec.streaming) counts.streams++;
      counts.events += v.events;
    } else if (problems.length < 20) problems.push(`${v.kind} ${spec.method} ${spec.path}: ${v.problem}`);
  };

  const started = performance.now();
  const durationMs = opts.seconds * 1000;
  let restartedGood = false;
  let lastProgress = started;
  // Open loop: calls start on schedule whatever earlier calls are doing; a late tick catches up (a few at a time).
  while (performance.now() - started < durationMs && !crashed) {
    const elapsed = performance.now() - started;
    const due = Math.floor((elapsed / 1000) * opts.rate);
    for (let n = 0; counts.calls < due && n < 20; n++) {
      const caller = counts.calls % opts.callers;
      const spec = pick(caller);
      counts.calls++;
      const p: Promise<void> = soakCall(agents[caller]!, gatewayUrl, spec).then((v) => record(spec, v)).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    if (!restartedGood && elapsed > durationMs / 2) {
      restartedGood = true;
      void good.stop().then(() => sleep(500)).then(() => good.start());
    }
    if (performance.now() - lastProgress > 10_000) {
      lastProgress = performance.now();
      const rss = readRss(pid);
      process.stdout.write(`  ${(elapsed / 1000).toFixed(0)} s: ${counts.calls} calls, ${counts.replies} replies, ${inFlight.size} in flight, lost ${counts.lost}, wrong id ${counts.wrongId}, invalid ${counts.invalid}, RSS ${((rss?.rssKiB ?? 0) / 1024).toFixed(1)} MiB\n`);
    }
    await sleep(10);
  }

  // Let the calls in flight finish: every one is bounded by the caller deadline.
  await Promise.race([Promise.all(inFlight), sleep(25_000)]);
  const unanswered = inFlight.size;
  clearTimeout(killer);
  const rssEnd = readRss(pid);
  clearInterval(rssTimer);
  flapStop.abort();
  await flapping$;

  const remoteStops = { flapping: flapping.stops, good: good.stops };
  stopping = true;
  const aliveAtEnd = !crashed;
  if (aliveAtEnd) child.kill('SIGTERM');
  const exitCode = await Promise.race([exited, sleep(15_000).then(() => 'timeout' as const)]);
  if (exitCode === 'timeout') child.kill('SIGKILL');
  await Promise.all(agents.map((a) => a.destroy()));
  await Promise.all([good.stop(), flapping.stop(), slowAndHostile.close()]);
  rmSync(dir, { recursive: true, force: true });

  const mib = (kib: number | undefined) => Math.round(((kib ?? 0) / 1024) * 10) / 10;
  const report = {
    seconds: Math.round((performance.now() - started) / 100) / 10,
    rate: opts.rate,
    callers: opts.callers,
    calls: counts.calls,
    replies: counts.replies,
    wrongId: counts.wrongId,
    invalid: counts.invalid,
    lost: counts.lost + unanswered,
    unanswered,
    crashes: crashed ? 1 : 0,
    gatewayExitOnSigterm: aliveAtEnd ? exitCode : 'crashed',
    streams: counts.streams,
    streamEvents: counts.events,
    callLogLines,
    remoteStops,
    rssMiB: { start: mib(rssStart?.rssKiB), peak: mib(Math.max(peakRssKiB, rssEnd?.hwmKiB ?? 0)), end: mib(rssEnd?.rssKiB) },
    outcomes: Object.fromEntries([...outcomes].sort(([a], [b]) => a.localeCompare(b))),
    problems,
  };
  printReport(report);
  if (crashed) process.stdout.write(`gateway stderr (tail):\n${stderrTail}\n`);
  const failed = report.wrongId > 0 || report.invalid > 0 || report.lost > 0 || report.crashes > 0 || report.calls !== report.replies;
  return failed ? 1 : 0;
}

function printReport(r: Record<string, unknown> & { outcomes: Record<string, number>; problems: string[]; rssMiB: Record<string, number> }): void {
  const row = (k: string, v: unknown) => process.stdout.write(`  ${k.padEnd(26)} ${String(v)}\n`);
  process.stdout.write('\nsoak report\n');
  for (const key of ['seconds', 'calls', 'replies', 'wrongId', 'lost', 'invalid', 'crashes', 'gatewayExitOnSigterm', 'streams', 'streamEvents', 'callLogLines']) row(key, r[key]);
  row('remote stops (flap/restart)', JSON.stringify(r.remoteStops));
  row('gateway RSS MiB', `start ${r.rssMiB.start}, peak ${r.rssMiB.peak}, end ${r.rssMiB.end}`);
  process.stdout.write('  outcomes (remote reason: count)\n');
  for (const [k, v] of Object.entries(r.outcomes)) process.stdout.write(`    ${k.padEnd(40)} ${v}\n`);
  for (const p of r.problems) process.stdout.write(`  problem: ${p}\n`);
  process.stdout.write(`SOAK_REPORT ${JSON.stringify(r)}\n`);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
