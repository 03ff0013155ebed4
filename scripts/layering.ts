/**
 * The folder graph of src/: which folder imports which, type imports included.
 * test/unit/layering.test.ts holds it acyclic and in the order of LAYERS (below); run this to see it:
 *
 *   npx tsx scripts/layering.ts            every cycle (with each import on it), or "no cycles"
 *   npx tsx scripts/layering.ts --edges    every folder → folder edge with its imports
 *   npx tsx scripts/layering.ts --diagram  the layer order (LAYERS) as docs/architecture.md shows it
 *
 * A node is a folder directly under src/ (src/bindings/grpc/x.ts belongs to
 * `bindings`); a file at the root of src/ (server.ts, cli.ts, version.ts, ...)
 * is a node of its own, because the root is not a layer: cli.ts is the entry
 * point above everything, server.ts the composition root, version.ts a leaf.
 * Imports are read with TypeScript's parser (already a dev dependency), so
 * comments and strings never count, and `import type`, `export ... from`,
 * `import('...')` calls and `import('...').T` types all do.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface ImportSite {
  /** The importing file, relative to src/. */
  readonly file: string;
  readonly specifier: string;
  /** `import type`, `export type`, every specifier `type`, or a type position `import('...').T`. */
  readonly typeOnly: boolean;
}

/** `from → to → the imports that make that edge`. */
export type FolderGraph = Map<string, Map<string, ImportSite[]>>;

/** The node a path under src/ belongs to: its first folder, or the file itself at the root. */
export function nodeOf(pathUnderSrc: string): string {
  return pathUnderSrc.split(/[\\/]/)[0]!;
}

/** The .ts files under `dir` (declarations left out), sorted. */
export function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    // A link counts: npm test reads src/ through build/tests/, where each .ts is linked beside its .js.
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

function allSpecifiersTyped(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

/** Every relative import of one file's text, with whether it is type-only. */
export function importsOf(fileName: string, text: string): { specifier: string; typeOnly: boolean }[] {
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: allSpecifiersTyped(node.importClause) });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly || (named !== undefined && named.length > 0 && named.every((e) => e.isTypeOnly)) });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) found.push({ specifier: arg.text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((i) => i.specifier.startsWith('.'));
}

/** The folder graph of the TypeScript under `srcDir`: edges between different nodes only. */
export function folderGraph(srcDir: string): FolderGraph {
  const graph: FolderGraph = new Map();
  for (const path of typeScriptFiles(srcDir)) {
    const file = relative(srcDir, path);
    const from = nodeOf(file);
    if (!graph.has(from)) graph.set(from, new Map());
    for (const { specifier, typeOnly } of importsOf(path, readFileSync(path, 'utf8'))) {
      const target = relative(srcDir, join(dirname(path), specifier));
      if (target.startsWith('..')) continue; // outside src/ (package.json and the like)
      const to = nodeOf(target.replace(/\.js$/, '.ts'));
      if (to === from) continue;
      const edges = graph.get(from)!;
      if (!edges.has(to)) edges.set(to, []);
      edges.get(to)!.push({ file: file.split(sep).join('/'), specifier, typeOnly });
    }
  }
  return graph;
}

/** The strongly connected components of more than one node (Tarjan): each is a knot of nodes that reach each other. */
export function knots(graph: FolderGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/**
 * The cycles to show for each knot: every pair of its nodes that import each
 * other, or, when it has none, one shortest closed path `[a, b, ..., a]`.
 */
export function cycles(graph: FolderGraph): string[][] {
  const found: string[][] = [];
  for (const knot of knots(graph)) {
    const pairs: string[][] = [];
    for (const a of knot) for (const b of knot) if (a < b && graph.get(a)?.has(b) && graph.get(b)?.has(a)) pairs.push([a, b, a]);
    found.push(...(pairs.length > 0 ? pairs : [shortestCycle(graph, knot)]));
  }
  return found;
}

/** A shortest closed path through the component's first node, staying inside the component. */
function shortestCycle(graph: FolderGraph, component: string[]): string[] {
  const inside = new Set(component);
  const start = component[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const chain: string[] = [];
        for (let u = v; u !== start; u = cameFrom.get(u)!) chain.unshift(u);
        return [start, ...chain, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, v);
        queue.push(w);
      }
    }
  }
  return component;
}

/** One cycle, with the imports that make each of its edges, for a failure message. */
export function describeCycle(graph: FolderGraph, cycle: string[]): string {
  const lines = [cycle.join(' → ')];
  for (let i = 0; i + 1 < cycle.length; i++) {
    const from = cycle[i]!;
    const to = cycle[i + 1]!;
    for (const site of graph.get(from)?.get(to) ?? []) {
      lines.push(`  ${from} → ${to}: src/${site.file} imports '${site.specifier}'${site.typeOnly ? ' (type only)' : ''}`);
    }
  }
  return lines.join('\n');
}

/**
 * The intended layer order, lowest first (docs/architecture.md, "Layers",
 * says why each row is where it is). A node may import the nodes of lower
 * rows and of its own row (the cycle check keeps those one-way), never a
 * higher row. A new folder under src/ has to be placed here, which is the point.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['envelope', 'http', 'v8', 'version.ts'], // facts, text rules and V8 workarounds that know nothing of the gateway
  ['a2a'], // the protocol: operations, method catalogue, card schemas, rewrite and cache, version bridge
  ['config'], // the schema of every setting, its defaults, the section checks that need nothing above
  ['jsonrpc', 'stream', 'core', 'policy', 'telemetry', 'upstream'], // the parts a call is made of
  ['bindings'], // the codecs: caller and upstream wire formats around A2ACall and Outcome
  ['cards', 'push'], // features built on the codecs and the transport
  ['proxy', 'loader'], // the call paths (runners); the config file loader (uses push's and bindings' parsers)
  ['routes'], // HTTP and gRPC front doors onto the call paths
  ['server.ts'], // createGateway: the composition root
  ['cluster', 'commands', 'index.ts'], // processes, CLI subcommands, the library's entry
  ['cli.ts', 'healthcheck.ts'], // the executables
];

/** The imports that go against LAYERS (to a node of a higher row), and nodes LAYERS does not place. */
export function layerViolations(graph: FolderGraph, layers: readonly (readonly string[])[] = LAYERS): string[] {
  const rank = new Map<string, number>();
  layers.forEach((row, i) => row.forEach((node) => rank.set(node, i)));
  const problems: string[] = [];
  for (const node of rank.keys()) if (!graph.has(node)) problems.push(`LAYERS (scripts/layering.ts) places ${node}, which is not under src/`);
  for (const from of [...graph.keys()].sort()) {
    if (!rank.has(from)) problems.push(`${from} is not placed in LAYERS (scripts/layering.ts)`);
    for (const [to, sites] of graph.get(from)!) {
      if (!rank.has(to) || !rank.has(from)) continue;
      if (rank.get(to)! > rank.get(from)!) {
        for (const site of sites) problems.push(`${from} (layer ${rank.get(from)}) → ${to} (layer ${rank.get(to)}): src/${site.file} imports '${site.specifier}'`);
      }
    }
  }
  return problems;
}

/** LAYERS as docs/architecture.md shows it, top row first: `cli.ts, healthcheck.ts` / `  ↓` / ... */
export function layerDiagram(layers: readonly (readonly string[])[] = LAYERS): string {
  return [...layers]
    .reverse()
    .map((row) => row.join(', '))
    .join('\n  ↓\n');
}

export const SRC_DIR = fileURLToPath(new URL('../src/', import.meta.url));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const graph = folderGraph(SRC_DIR);
  if (process.argv.includes('--edges')) {
    for (const from of [...graph.keys()].sort()) {
      for (const [to, sites] of [...graph.get(from)!].sort(([a], [b]) => a.localeCompare(b))) {
        const typeOnly = sites.every((s) => s.typeOnly);
        console.log(`${from} → ${to}${typeOnly ? ' (types only)' : ''}: ${sites.map((s) => s.file).filter((f, i, all) => all.indexOf(f) === i).join(', ')}`);
      }
    }
  }
  for (const knot of knots(graph)) console.log(`knot: ${knot.join(', ')}`);
  const found = cycles(graph);
  for (const cycle of found) console.log(describeCycle(graph, cycle));
  if (found.length === 0) console.log('no cycles');
  const violations = layerViolations(graph);
  for (const problem of violations) console.log(problem);
  if (process.argv.includes('--diagram')) console.log(layerDiagram());
  process.exitCode = found.length === 0 && violations.length === 0 ? 0 : 1;
}
