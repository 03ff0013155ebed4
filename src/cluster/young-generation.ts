/**
 * The size of V8's young generation the gateway runs with.
 *
 * A unary call allocates tens of kilobytes of short-lived objects (request and
 * reply objects, the decoded body, header lists, closures). With V8's default
 * semi-space of 16 MiB a busy gateway scavenges every ~30 ms and promotes about
 * a tenth of what it allocated, which a full collection then has to find dead.
 * With 32 MiB, scavenges are half as frequent: in alternating rounds of one run
 * the gateway spent 109 µs of CPU per call against 142 with the default, while
 * the bare dispatch hop, which allocates little, stayed at 53–57 (README,
 * "Performance"). It costs up to 32 MiB more resident memory under load.
 *
 * V8 reads the size once, when the process starts, so it is a flag of the
 * launchers: the image's NODE_OPTIONS (Dockerfile), `npm start`, and the
 * workers a primary forks (cluster/primary.ts), unless a size was chosen.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=32';

// V8 reads dashes and underscores alike in flag names.
const SEMI_SPACE_FLAG = /(?:^|\s)--max[-_]semi[-_]space[-_]size(?:[=\s]|$)/;

/** Whether the node arguments or NODE_OPTIONS already choose a semi-space size (then that choice stands). */
export function choosesSemiSpace(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return execArgv.some((arg) => SEMI_SPACE_FLAG.test(arg)) || SEMI_SPACE_FLAG.test(nodeOptions ?? '');
}

/** The node arguments of a forked worker: its primary's, with the gateway's young generation unless one was chosen. */
export function workerExecArgv(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  return choosesSemiSpace(execArgv, nodeOptions) ? [...execArgv] : [YOUNG_GENERATION_FLAG, ...execArgv];
}
