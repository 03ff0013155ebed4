#!/usr/bin/env node
/**
 * Transpiles the TypeScript the tests run (src, test, bench, scripts, demo) into
 * build/tests/, mirroring the repository, so `npm test` runs plain JavaScript.
 *
 * Why: each test file is its own Node process, and most of a file's CPU was the
 * TypeScript loader (tsx's module hooks) transpiling and resolving everything the
 * file imports, again in every process. esbuild does it once, in about a second,
 * without type checking (`npm run typecheck` does that).
 *
 * Everything else is linked, not copied, so paths the tests build from their own
 * location (`new URL('../../README.md', import.meta.url)`, fixtures, scripts) and
 * the repository's package.json ("type": "module") resolve as they do from the
 * sources. Inline source maps keep stack traces pointing at the .ts files.
 */
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'build', 'tests');
/** The folders whose TypeScript is transpiled; every other top-level entry is linked. */
const TRANSPILED = ['src', 'test', 'bench', 'scripts', 'demo'];
/** Never mirrored: outputs, tools' own state, and the build folder itself. */
const SKIPPED = new Set(['.git', 'node_modules', 'build', 'dist', 'coverage', '.tap']);

function link(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  symlinkSync(relative(dirname(to), from), to);
}

/**
 * Links every data file of a transpiled folder (and each .ts beside its .js, for
 * tools the tests run on the sources). JavaScript files are copied: a script
 * that checks whether it is the main module compares its own URL, which Node
 * resolves through a link, with the path it was started by.
 */
function mirror(dir, entries) {
  mkdirSync(join(out, dir), { recursive: true });
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) mirror(path, entries);
    else {
      if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) entries.push(join(root, path));
      if (/\.[cm]?js$/.test(entry.name)) copyFileSync(join(root, path), join(out, path));
      else link(join(root, path), join(out, path));
    }
  }
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const entryPoints = [];
for (const entry of readdirSync(root, { withFileTypes: true })) {
  if (SKIPPED.has(entry.name)) continue;
  if (TRANSPILED.includes(entry.name) && entry.isDirectory()) mirror(entry.name, entryPoints);
  else link(join(root, entry.name), join(out, entry.name));
}
for (const dir of TRANSPILED) if (!existsSync(join(root, dir))) throw new Error(`build-tests: ${dir}/ is missing`);

await build({
  entryPoints,
  outdir: out,
  outbase: root,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // esbuild's table lacks import attributes for Node 20, which has them (JSON imports need `with { type: 'json' }`).
  supported: { 'import-attributes': true },
  sourcemap: 'inline',
  sourcesContent: false,
  logLevel: 'warning',
});
