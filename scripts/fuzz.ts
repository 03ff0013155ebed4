/**
 * npm run fuzz [-- --runs N] [--seed S] [--workers W]
 *
 * fast-check over the unary normalizer and the SSE relay core (see
 * ./fuzz-targets.ts): N generated cases in total (default 1,000,000), half
 * for each target, spread over W worker threads (default: one per CPU, at
 * most 2). Prints progress and a final line with the run count and the number
 * of invariant violations; exits 1 on any violation, printing the shrunk
 * counterexample and the seed that replays it.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fuzzTarget, type TargetName, type TargetResult } from './fuzz-targets.js';

export const DEFAULT_RUNS = 1_000_000;
const TARGETS: readonly TargetName[] = ['normalizer', 'relay'];

interface WorkerJob {
  readonly runs: Record<TargetName, number>;
  readonly seed: number;
}

type WorkerMessage =
  | { readonly type: 'progress'; readonly target: TargetName; readonly done: number }
  | { readonly type: 'result'; readonly result: TargetResult };

function runWorker(job: WorkerJob): void {
  for (const target of TARGETS) {
    const result = fuzzTarget(target, job.runs[target], {
      seed: job.seed,
      batch: 5_000,
      onProgress: (t, done) => parentPort?.postMessage({ type: 'progress', target: t, done } satisfies WorkerMessage),
    });
    parentPort?.postMessage({ type: 'result', result } satisfies WorkerMessage);
  }
}

/** Splits `total` into `parts` near-equal integers. */
const split = (total: number, parts: number): number[] => Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));

interface CliOptions {
  readonly runs: number;
  readonly seed: number;
  readonly workers: number;
}

function parseCli(argv: string[]): CliOptions {
  const { values } = parseArgs({
    args: argv,
    options: { runs: { type: 'string' }, seed: { type: 'string' }, workers: { type: 'string' } },
    strict: true,
  });
  const int = (name: string, raw: string | undefined, fallback: number, min: number, max: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer ${min}..${max}`);
    return n;
  };
  return {
    runs: int('runs', values.runs, DEFAULT_RUNS, 2, 1_000_000_000),
    seed: int('seed', values.seed, Math.floor(Math.random() * 0x7fffffff), 0, 0x7fffffff),
    workers: int('workers', values.workers, Math.min(2, availableParallelism()), 1, 64),
  };
}

async function main(): Promise<number> {
  const opts = parseCli(process.argv.slice(2));
  const started = performance.now();
  const perTarget = { normalizer: Math.ceil(opts.runs / 2), relay: Math.floor(opts.runs / 2) };
  const normalizerShares = split(perTarget.normalizer, opts.workers);
  const relayShares = split(perTarget.relay, opts.workers);
  process.stdout.write(`fuzz: ${opts.runs} runs (normalizer ${perTarget.normalizer}, relay ${perTarget.relay}), seed ${opts.seed}, ${opts.workers} worker(s)\n`);

  const done = new Map<string, number>();
  const results: TargetResult[] = [];
  let lastPrint = 0;
  const progress = (): void => {
    const now = performance.now();
    if (now - lastPrint < 5_000) return;
    lastPrint = now;
    const sums = TARGETS.map((t) => [...done].filter(([k]) => k.endsWith(t)).reduce((n, [, v]) => n + v, 0));
    const total = sums.reduce((a, b) => a + b, 0);
    const seconds = ((now - started) / 1000).toFixed(0);
    process.stdout.write(`  ${total}/${opts.runs} (normalizer ${sums[0]}, relay ${sums[1]}) ${seconds} s\n`);
  };

  await Promise.all(
    Array.from({ length: opts.workers }, (_, k) => {
      const job: WorkerJob = { runs: { normalizer: normalizerShares[k] ?? 0, relay: relayShares[k] ?? 0 }, seed: (opts.seed + k * 1_000_003) % 0x7fffffff };
      // The worker runs this same TypeScript file: on Node 20 a loader registered in the main
      // thread does not reach workers, so the worker registers tsx itself before importing it.
      const bootstrap = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
      const worker = new Worker(bootstrap, { eval: true, workerData: job, execArgv: [] });
      return new Promise<void>((resolve, reject) => {
        worker.on('message', (msg: WorkerMessage) => {
          if (msg.type === 'progress') {
            done.set(`${k}:${msg.target}`, msg.done);
            progress();
          } else results.push(msg.result);
        });
        worker.once('error', reject);
        worker.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fuzz worker ${k} exited with ${code}`))));
      });
    }),
  );

  const runs = results.reduce((n, r) => n + r.runs, 0);
  const violations = results.reduce((n, r) => n + r.violations, 0);
  for (const r of results) if (r.report) process.stdout.write(`\n${r.target}: invariant violated\n${r.report}\n`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const byTarget = TARGETS.map((t) => `${t} ${results.filter((r) => r.target === t).reduce((n, r) => n + r.runs, 0)}`).join(', ');
  process.stdout.write(`fuzz: ${runs} runs (${byTarget}) in ${seconds} s: ${violations} invariant violations\n`);
  return violations === 0 ? 0 : 1;
}

if (!isMainThread) {
  runWorker(workerData as WorkerJob);
} else {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`fuzz: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(2);
    },
  );
}
