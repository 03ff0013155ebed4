/**
 * Reads `perf script -F comm,pid,tid,period,ip,sym,dso` output (Linux perf with
 * call chains, node started with --perf-basic-prof so JIT code has names) and
 * says where a process spent its on-CPU time:
 *   - self time per symbol: the frame that was running (JS, V8 builtin, V8/Node C++, kernel, libc);
 *   - self time charged to the nearest JS frame's module: which code caused the work,
 *     native work included (a writev in the kernel is charged to the JS that called it);
 *   - inclusive time per JS function: the share of samples with it anywhere on the stack.
 * Runnable alone: perf script -i perf.data -F comm,pid,tid,period,ip,sym,dso | npx tsx bench/perf-summary.ts [top]
 */
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface Frame {
  readonly sym: string;
  readonly dso: string;
}

export interface Sample {
  readonly thread: string;
  /** True on the process's main thread (tid = pid), where JavaScript runs. */
  readonly main: boolean;
  /** Leaf (the running frame) first. */
  readonly frames: readonly Frame[];
  /** What the sample stands for: nanoseconds of CPU for cpu-clock, cycles for the cycles event. */
  readonly period: number;
}

const HEADER = /^(\S.*?)\s+(\d+)\/(\d+)\s+(\d+)\s*$/;
/** The fields the reader expects, in this order. */
export const PERF_SCRIPT_FIELDS = 'comm,pid,tid,period,ip,sym,dso';
const FRAME = /^\s+([0-9a-f]+)\s+(.*?)\s+\(([^()]*)\)\s*$/;

/** Feed it perf script's lines one by one; `samples` holds what it read. */
export class PerfScriptReader {
  readonly samples: Sample[] = [];
  #current: { thread: string; main: boolean; frames: Frame[]; period: number } | undefined;

  line(text: string): void {
    const frame = FRAME.exec(text);
    if (frame && this.#current) {
      this.#current.frames.push({ sym: frame[2]!, dso: frame[3]! });
      return;
    }
    const header = HEADER.exec(text);
    if (header) {
      this.#flush();
      this.#current = { thread: header[1]!.trim(), main: header[2] === header[3], frames: [], period: Number(header[4]) };
      return;
    }
    if (text.trim() === '') this.#flush();
  }

  end(): Sample[] {
    this.#flush();
    return this.samples;
  }

  #flush(): void {
    if (this.#current && this.#current.frames.length > 0) this.samples.push(this.#current);
    this.#current = undefined;
  }
}

export function parsePerfScript(text: string): Sample[] {
  const reader = new PerfScriptReader();
  for (const line of text.split('\n')) reader.line(line);
  return reader.end();
}

export type FrameKind = 'JS' | 'WebAssembly' | 'V8 builtin' | 'V8 generated code' | 'V8/Node C++' | 'kernel' | 'libc and loader' | 'other native' | 'unknown';

/** A JIT frame's name from --perf-basic-prof: `JS:<tier><name> <script>:<line>:<col>`; tier * TurboFan, + Maglev, ^ Sparkplug, ~ interpreter. */
const JS_SYMBOL = /^JS:[*+^~]?(.*?) (\S+):(\d+):\d+$/;

export function kindOf(frame: Frame): FrameKind {
  const { sym, dso } = frame;
  // undici's HTTP parser (llhttp) is the WebAssembly a Node proxy runs.
  if (sym.startsWith('JS:wasm-function')) return 'WebAssembly';
  if (sym.startsWith('JS:')) return 'JS';
  if (sym.startsWith('Builtins_') || sym.startsWith('Builtin:')) return 'V8 builtin';
  if (dso.startsWith('[kernel')) return 'kernel';
  if (/^(Bytecode|RegExp|Stub|Handler|Eval|Script|Code|Function):/.test(sym) || /\/perf-\d+\.map$/.test(dso)) return 'V8 generated code';
  if (/\/node$/.test(dso)) return 'V8/Node C++';
  if (/\/(libc|ld-linux|libm|libstdc\+\+|libpthread|libgcc)[^/]*$/.test(dso)) return 'libc and loader';
  if (sym === '[unknown]' && dso === '[unknown]') return 'unknown';
  return 'other native';
}

/** `dist/proxy/unary.js:12`, `undici/lib/core/util.js:40`, `node:internal/http:8`: a frame's place, short. */
function shortScript(script: string): string {
  const path = script.replace(/^file:\/\//, '');
  if (path.includes('/node_modules/')) return path.replace(/^.*\/node_modules\//, '');
  return path.replace(/^.*\/(dist|src|bench)\//, '$1/');
}

/** Which code a script belongs to: `gateway <module>`, an npm package, or a Node internal area. */
export function areaOfScript(script: string): string {
  const path = script.replace(/^file:\/\//, '');
  if (path.startsWith('node:')) {
    const rest = path.slice(5).replace(/^internal\//, '');
    return `node:${rest.split('/')[0]!.replace(/\.js$/, '')}`;
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return pkg[1]!;
  const own = /\/(?:dist|src)\/(.+?)\.[jt]s$/.exec(path);
  if (own) return `gateway ${own[1]}`;
  return shortScript(path);
}

export interface JsFrame {
  readonly name: string;
  readonly script: string;
  readonly line: number;
}

export function jsFrame(frame: Frame): JsFrame | undefined {
  const m = JS_SYMBOL.exec(frame.sym);
  return m ? { name: m[1] || '(anonymous)', script: m[2]!, line: Number(m[3]) } : undefined;
}

/** The module a sample's work is charged to: the nearest JS frame's (native work included), or what ran without one. */
export function causeOf(sample: Sample): string {
  for (const f of sample.frames) {
    const js = jsFrame(f);
    if (js) return areaOfScript(js.script);
  }
  return sample.main ? `(no JS frame: ${kindOf(sample.frames[0]!)})` : '(no JS frame: other threads)';
}

/** A frame as one line: JS as `name where`, C++ without template arguments and parameters, native with its file. */
export function displayName(frame: Frame): string {
  const { name, where } = display(frame);
  return `${name}  ${where}`;
}

/** A readable symbol: JS as `name  where`, C++ without its template arguments and parameter list. */
function display(frame: Frame): { name: string; where: string } {
  const js = jsFrame(frame);
  if (js) return { name: js.name, where: `${shortScript(js.script)}:${js.line}` };
  let name = frame.sym;
  // Strip template arguments (nested), then a parameter list: v8::internal::Foo<Bar<Baz>>::Run(int) -> v8::internal::Foo<>::Run
  for (let prev = ''; prev !== name; ) {
    prev = name;
    name = name.replace(/<[^<>]*>/g, '<>');
  }
  name = name.replace(/\(.*\)$/, '');
  return { name: name.replace(/^Builtin:/, 'Builtins_'), where: frame.dso.startsWith('[') ? frame.dso : frame.dso.replace(/^.*\//, '') };
}

export interface Share {
  readonly name: string;
  readonly samples: number;
  /** Percent of all samples of the process (every thread). */
  readonly pct: number;
}

export interface SymbolShare extends Share {
  readonly kind: FrameKind;
  readonly where: string;
}

export interface PerfSummary {
  readonly samples: number;
  readonly threads: Share[];
  readonly kinds: Share[];
  readonly self: SymbolShare[];
  /** Self time charged to the module of the nearest JS frame on the stack (`(no JS frame)` when none). */
  readonly causes: Share[];
  /** The same, per JS function rather than per module. */
  readonly causeFunctions: SymbolShare[];
  readonly inclusive: SymbolShare[];
}

function ranked(counts: Map<string, number>, total: number): Share[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([name, samples]) => ({ name, samples, pct: Math.round((1000 * samples) / Math.max(1, total)) / 10 }));
}

const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

export function summarizePerf(samples: readonly Sample[], top = 30): PerfSummary {
  const threads = new Map<string, number>();
  const kinds = new Map<string, number>();
  const self = new Map<string, number>();
  const selfInfo = new Map<string, { kind: FrameKind; where: string; name: string }>();
  const causes = new Map<string, number>();
  const causeFunctions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const inclusiveInfo = new Map<string, { where: string; name: string }>();
  for (const s of samples) {
    // The main thread runs JavaScript; V8's helpers (GC, compiler) and libuv's pool have names of their own.
    bump(threads, s.main ? `${s.thread} (main thread: JavaScript, the event loop)` : `${s.thread} (other threads: V8 compiler and GC helpers, libuv pool)`);
    const leaf = s.frames[0]!;
    const kind = kindOf(leaf);
    bump(kinds, kind);
    const shown = display(leaf);
    const key = `${shown.name}\u0000${shown.where}`;
    bump(self, key);
    selfInfo.set(key, { kind, ...shown });
    const nearest = s.frames.map(jsFrame).find((f) => f !== undefined);
    bump(causes, causeOf(s));
    if (nearest) {
      const where = `${shortScript(nearest.script)}:${nearest.line}`;
      const k = `${nearest.name}\u0000${where}`;
      bump(causeFunctions, k);
      inclusiveInfo.set(k, { name: nearest.name, where });
    }
    const seen = new Set<string>();
    for (const f of s.frames) {
      const js = jsFrame(f);
      if (!js) continue;
      const where = `${shortScript(js.script)}:${js.line}`;
      const k = `${js.name}\u0000${where}`;
      if (seen.has(k)) continue;
      seen.add(k);
      bump(inclusive, k);
      inclusiveInfo.set(k, { name: js.name, where });
    }
  }
  const total = samples.length;
  const withInfo = (shares: Share[], info: Map<string, { name: string; where: string; kind?: FrameKind }>): SymbolShare[] =>
    shares.map((sh) => {
      const i = info.get(sh.name)!;
      return { ...sh, name: i.name, where: i.where, kind: i.kind ?? 'JS' };
    });
  return {
    samples: total,
    threads: ranked(threads, total),
    kinds: ranked(kinds, total),
    self: withInfo(ranked(self, total).slice(0, top), selfInfo),
    causes: ranked(causes, total),
    causeFunctions: withInfo(ranked(causeFunctions, total).slice(0, top), inclusiveInfo),
    inclusive: withInfo(ranked(inclusive, total).slice(0, top), inclusiveInfo),
  };
}

const pct = (p: number) => `${p.toFixed(1).padStart(5)}%`;

export function formatPerfSummary(s: PerfSummary, areaCount = 20): string {
  const lines = [`${s.samples} on-CPU samples of the process, all threads; every percentage is of all of them`, '', 'by thread:'];
  for (const t of s.threads) lines.push(`  ${pct(t.pct)}  ${t.name}`);
  lines.push('', 'self time by kind of code running:');
  for (const k of s.kinds) lines.push(`  ${pct(k.pct)}  ${k.name}`);
  const own = s.causes.filter((c) => c.name.startsWith('gateway ')).reduce((n, c) => n + c.pct, 0);
  lines.push('', `self time charged to the nearest JS frame's module (which code caused the work, native work included); the gateway's own modules together: ${own.toFixed(1)}%`);
  for (const c of s.causes.slice(0, areaCount)) lines.push(`  ${pct(c.pct)}  ${c.name}`);
  lines.push('', 'the same per JS function:');
  for (const f of s.causeFunctions) lines.push(`  ${pct(f.pct)}  ${f.name}  ${f.where}`);
  lines.push('', 'top symbols by self time:');
  for (const f of s.self) lines.push(`  ${pct(f.pct)}  ${f.kind.padEnd(17)}  ${f.name}  ${f.where}`);
  lines.push('', 'top JS functions by inclusive time (on the stack at all):');
  for (const f of s.inclusive) lines.push(`  ${pct(f.pct)}  ${f.name}  ${f.where}`);
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const reader = new PerfScriptReader();
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (l) => reader.line(l));
  lines.on('close', () => process.stdout.write(`${formatPerfSummary(summarizePerf(reader.end(), Number(process.argv[2] ?? 30)))}\n`));
}
