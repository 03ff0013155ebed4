/**
 * The gateway's young generation (src/cluster/young-generation.ts): a forked
 * worker gets the flag unless its primary's node arguments or NODE_OPTIONS
 * already chose a semi-space size, in any spelling V8 reads; and `npm start`
 * passes the same flag (the Dockerfile's: test/integration/deploy-files.test.ts).
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { choosesSemiSpace, workerExecArgv, YOUNG_GENERATION_FLAG } from '../../src/cluster/young-generation.js';

t.test('a worker gets the flag when nothing chose a size', async (t) => {
  t.same(workerExecArgv([], undefined), [YOUNG_GENERATION_FLAG]);
  t.same(workerExecArgv(['--enable-source-maps'], '--max-old-space-size=512'), [YOUNG_GENERATION_FLAG, '--enable-source-maps']);
  // Other flags that merely look alike are not a choice of the semi-space size.
  t.same(workerExecArgv(['--min-semi-space-size=4', '--semi-space-growth-factor=2'], undefined), [YOUNG_GENERATION_FLAG, '--min-semi-space-size=4', '--semi-space-growth-factor=2']);
});

t.test("a size chosen by the operator stands, in every spelling V8 reads", async (t) => {
  for (const execArgv of [['--max-semi-space-size=64'], ['--max_semi_space_size=8'], ['--max-semi-space-size', '16'], ['--inspect', '--max-semi_space-size=64']]) {
    t.same(workerExecArgv(execArgv, undefined), execArgv, execArgv.join(' '));
  }
  for (const options of ['--max-semi-space-size=64', '--max-old-space-size=512 --max_semi_space_size=16', '--max-semi-space-size 8']) {
    t.ok(choosesSemiSpace([], options), options);
    t.same(workerExecArgv(['--enable-source-maps'], options), ['--enable-source-maps'], options);
  }
  t.notOk(choosesSemiSpace([], ''), 'an empty NODE_OPTIONS chooses nothing');
  t.notOk(choosesSemiSpace(['--max-semi-space-sizes=4'], '--xmax-semi-space-size=4'), 'a longer or prefixed name is not the flag');
});

t.test('npm start passes the flag', async (t) => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  t.match(pkg.scripts.start, new RegExp(`^node ${YOUNG_GENERATION_FLAG} dist/cli\\.js `));
});
