/**
 * The layering of src/: no two folders import each other, directly or round a
 * longer loop, type imports included; every import goes down the layer order
 * of scripts/layering.ts (LAYERS), which docs/architecture.md shows.
 * `npx tsx scripts/layering.ts --edges` prints the graph this reads.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { cycles, describeCycle, folderGraph, importsOf, layerDiagram, layerViolations, SRC_DIR } from '../../scripts/layering.js';

const graph = folderGraph(SRC_DIR);

t.test('no folder of src/ imports one that imports it back, type imports included', async (t) => {
  const found = cycles(graph);
  t.same(found.map((cycle) => describeCycle(graph, cycle)), [], 'cycles (run `npx tsx scripts/layering.ts --edges`)');
});

t.test('every import goes down the layer order (scripts/layering.ts LAYERS)', async (t) => {
  t.same(layerViolations(graph), []);
});

t.test('docs/architecture.md shows the layer order LAYERS enforces', async (t) => {
  const doc = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
  t.ok(doc.includes(`\`\`\`\n${layerDiagram()}\n\`\`\``), 'the diagram under "Layers" (print it: npx tsx scripts/layering.ts --diagram)');
});

t.test('the graph sees the src/ it reads: known edges are there, with their kind', async (t) => {
  const sites = graph.get('core')?.get('a2a') ?? [];
  t.ok(sites.some((s) => s.file === 'core/call-bridge.ts' && s.specifier === '../a2a/bridge/index.js' && !s.typeOnly), 'core/call-bridge.ts imports values of a2a/bridge');
  t.ok(sites.some((s) => s.file === 'core/call.ts' && s.typeOnly), 'core/call.ts imports a2a/operations.js types');
  t.ok(graph.get('server.ts')?.has('routes'), 'a root file is its own node');
  t.notOk(graph.get('core')?.has('core'), 'imports inside a folder are not edges');
});

/** A throwaway src/ tree: path → text. */
function tree(t: Test, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'layering-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

t.test('a cycle through a type-only import is found and named with its imports', async (t) => {
  const src = tree(t, {
    'a/x.ts': "import type { Y } from '../b/y.js';\nexport const x = 1;\n",
    'b/y.ts': "import { x } from '../a/x.js';\nexport type Y = typeof x;\n",
    'c/z.ts': "import { x } from '../a/x.js';\n",
  });
  const small = folderGraph(src);
  const found = cycles(small);
  t.same(found, [['a', 'b', 'a']]);
  const text = describeCycle(small, found[0]!);
  t.match(text, /^a → b → a/);
  t.match(text, "src/a/x.ts imports '../b/y.js' (type only)");
  t.match(text, "src/b/y.ts imports '../a/x.js'");
});

t.test('a longer loop with no pair importing each other is still a cycle', async (t) => {
  const src = tree(t, {
    'a/x.ts': "export { y } from '../b/y.js';\n",
    'b/y.ts': "export const y = (): Promise<unknown> => import('../c/z.js');\n",
    'c/z.ts': "export type Z = import('../a/x.js').X;\n",
  });
  t.same(cycles(folderGraph(src)), [['a', 'b', 'c', 'a']]);
});

t.test('an import to a higher row, or from a folder LAYERS does not place, is a violation', async (t) => {
  const src = tree(t, {
    'low/x.ts': "import type { Y } from '../high/y.js';\n",
    'high/y.ts': 'export type Y = number;\n',
    'new/z.ts': "import type { Y } from '../high/y.js';\n",
  });
  const problems = layerViolations(folderGraph(src), [['low'], ['high']]);
  t.match(problems, [/^low \(layer 0\) → high \(layer 1\): src\/low\/x\.ts imports '\.\.\/high\/y\.js'$/, /^new is not placed in LAYERS/]);
  t.same(layerViolations(folderGraph(src), [['high'], ['low', 'new'], ['gone']]), ['LAYERS (scripts/layering.ts) places gone, which is not under src/']);
});

t.test('imports are read by the parser: every form, and never from comments or strings', async (t) => {
  const text = [
    "import a from './a.js';",
    "import type { B } from './b.js';",
    "import { type C, type D } from './c.js';",
    "import { type E, f } from './e.js';",
    "export * from './g.js';",
    "export type { H } from './h.js';",
    "import './side-effect.js';",
    "const lazy = () => import('./lazy.js');",
    "type T = import('./typed.js').T;",
    "// import { no } from './comment.js';",
    "const s = \"import { no } from './string.js'\";",
    "import { parse } from 'yaml';",
  ].join('\n');
  t.same(importsOf('x.ts', text), [
    { specifier: './a.js', typeOnly: false },
    { specifier: './b.js', typeOnly: true },
    { specifier: './c.js', typeOnly: true },
    { specifier: './e.js', typeOnly: false },
    { specifier: './g.js', typeOnly: false },
    { specifier: './h.js', typeOnly: true },
    { specifier: './side-effect.js', typeOnly: false },
    { specifier: './lazy.js', typeOnly: false },
    { specifier: './typed.js', typeOnly: true },
  ]);
});
