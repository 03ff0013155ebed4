/**
 * No object literal in src/ defines its own getter or setter, outside the few
 * places listed here with their reason. V8 keeps a literal's own accessor in
 * an AccessorPair it allocates in old space; made per call, each one kept its
 * getter's closure, and through it the call's reply text, alive past every
 * young-generation collection (2.6 KB of each unary call promoted to old
 * space, measured with node --trace-gc-nvp; 90 bytes once the lazily parsed
 * results became classes with prototype getters). Read with the TypeScript
 * compiler's parser, so a getter is found however it is written.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { SRC_DIR, typeScriptFiles } from '../../scripts/layering.js';

/** file → why its literal accessor may stay. */
const ALLOWED: Readonly<Record<string, string>> = {
  // A push-config call's A2ACall: push/outbound.ts spreads it and must get the serialized params; not a per-call path.
  'proxy/push-call.ts': 'the params of a push-config call serialized only if rewritten',
};

/** `file:line name` of every getter or setter defined in an object literal of `text`. */
export function literalAccessors(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) && ts.isObjectLiteralExpression(node.parent)) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push(`${file}:${line} ${node.name.getText(source)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

t.test('the reader finds accessors of object literals, and only those', async (t) => {
  const text = [
    'const a = { get x() { return 1; }, y: 2 };',
    'const b = { set z(v: number) {} };',
    'class C { get w() { return 3; } }',
    'const d = { f() { return { get inner() { return 4; } }; } };',
    "Object.defineProperty({}, 'p', { get: () => 5 });",
  ].join('\n');
  t.same(literalAccessors('m.ts', text), ['m.ts:1 x', 'm.ts:2 z', 'm.ts:4 inner']);
});

t.test('src/ makes no object literal with its own getter or setter (outside the listed files)', async (t) => {
  const files = typeScriptFiles(SRC_DIR);
  t.ok(files.length > 100, `read ${files.length} files under src/`);
  const found = files.flatMap((path) => {
    const file = relative(SRC_DIR, path);
    return file in ALLOWED ? [] : literalAccessors(file, readFileSync(path, 'utf8'));
  });
  t.same(found, [], 'make it a class with the accessor on its prototype (see PlainSuccess in src/envelope/normalize.ts)');
  for (const file of Object.keys(ALLOWED)) {
    const text = readFileSync(join(SRC_DIR, file), 'utf8');
    t.ok(literalAccessors(file, text).length > 0, `${file} is listed, so it still has one (drop it from the list when it has none)`);
  }
});
