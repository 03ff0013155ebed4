import t from 'tap';
import { scanJson } from '../../src/envelope/json-scan.js';

const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

t.test('depth exactly at the limit passes, one deeper is too-deep', async (t) => {
  t.equal(scanJson(nested(5), 5).problem, undefined);
  t.equal(scanJson(nested(6), 5).problem, 'too-deep');
  t.equal(scanJson('{"a":{"b":{}}}', 3).problem, undefined);
  t.equal(scanJson('{"a":{"b":{"c":[]}}}', 3).problem, 'too-deep');
});

t.test('depth is the maximum, not the count of containers', async (t) => {
  t.equal(scanJson('[[[]],[[]],[[]],{"a":[]}]', 3).problem, undefined);
});

t.test('100,000-deep nesting stops early', async (t) => {
  const text = nested(100_000);
  const start = process.hrtime.bigint();
  t.equal(scanJson(text, 64).problem, 'too-deep');
  t.ok(process.hrtime.bigint() - start < 100_000_000n, 'well under 100 ms (it stops at level 65)');
});

t.test('brackets inside strings do not count as depth', async (t) => {
  t.equal(scanJson('{"a":"[[[[[[{{{{{{"}', 1).problem, undefined);
  t.equal(scanJson('{"a":"]]]]]]"}', 2).problem, undefined);
  // If "]]]]" counted, depth would go negative and the next real nesting would look shallow.
  t.equal(scanJson('{"a":"]]]]","b":[[[]]]}', 3).problem, 'too-deep');
});

t.test('escaped quotes inside strings do not end the string', async (t) => {
  const text = '{"a":"x\\"[[[[\\"","result":[1]}';
  const scan = scanJson(text, 2);
  t.equal(scan.problem, undefined);
  t.equal(text.slice(scan.resultStart, scan.resultEnd), '[1]');
});

t.test('escaped backslash before a quote ends the string', async (t) => {
  const text = '{"a":"x\\\\","result":2}';
  t.same(JSON.parse(text), { a: 'x\\', result: 2 }, 'fixture is valid JSON');
  const scan = scanJson(text, 2);
  t.equal(text.slice(scan.resultStart, scan.resultEnd), '2');
});

t.test('a key-looking string inside a value is not a key', async (t) => {
  const text = '{"a":"result","b":["result","id"],"result":3}';
  const scan = scanJson(text, 4);
  t.equal(scan.problem, undefined);
  t.equal(text.slice(scan.resultStart, scan.resultEnd), '3');
});

t.test('duplicate top-level watched members are detected', async (t) => {
  for (const member of ['id', 'result', 'error', 'jsonrpc']) {
    const scan = scanJson(`{"${member}":1,"x":2,"${member}":3}`, 4);
    t.equal(scan.problem, 'duplicate-member', member);
    t.equal(scan.member, member);
  }
});

t.test('duplicate unwatched top-level members are allowed', async (t) => {
  t.equal(scanJson('{"x":1,"x":2,"result":3}', 4).problem, undefined);
});

t.test('nested duplicates are allowed', async (t) => {
  t.equal(scanJson('{"result":{"id":1,"id":2,"result":3,"result":4}}', 4).problem, undefined);
  t.equal(scanJson('{"error":{"code":1,"code":2},"id":1}', 4).problem, undefined);
});

t.test('duplicates inside a top-level array are not members', async (t) => {
  t.equal(scanJson('[{"id":1},{"id":2}]', 4).problem, undefined);
  t.equal(scanJson('["id","id"]', 4).problem, undefined);
});

t.test('escaped key names are detected as the member they spell', async (t) => {
  const scan = scanJson('{"result":1,"re\\u0073ult":2}', 4);
  t.equal(scan.problem, 'duplicate-member');
  t.equal(scan.member, 'result');
  const spliced = '{"id":1,"re\\u0073ult":[true]}';
  const s2 = scanJson(spliced, 4);
  t.equal(spliced.slice(s2.resultStart, s2.resultEnd), '[true]', 'escaped result key still located');
});

t.test('resultStart/resultEnd are exact with whitespace around', async (t) => {
  const text = '{ "jsonrpc" : "2.0" ,\n\t"result" :  \r\n {"a": [1, 2]}  \n , "id": 1 }';
  const scan = scanJson(text, 4);
  t.equal(text.slice(scan.resultStart, scan.resultEnd), '{"a": [1, 2]}');
  const last = '{"id":1,"result":  "x, y}"   }';
  const s2 = scanJson(last, 4);
  t.equal(last.slice(s2.resultStart, s2.resultEnd), '"x, y}"', 'result as the last member');
});

t.test('scalar results are located', async (t) => {
  for (const value of ['null', 'true', '0', '-1.5e3', '"s"', '1e400']) {
    const text = `{"result":${value},"id":1}`;
    const scan = scanJson(text, 4);
    t.equal(text.slice(scan.resultStart, scan.resultEnd), value);
  }
});

t.test('no result member gives -1 positions', async (t) => {
  t.same(scanJson('{"error":{"code":1}}', 4), { resultStart: -1, resultEnd: -1, topLevelMembers: 1 });
  t.same(scanJson('[1,2]', 4), { resultStart: -1, resultEnd: -1, topLevelMembers: 0 });
});

t.test('top-level members are counted, repeats included, nested ones not', async (t) => {
  t.equal(scanJson('{"a":{"x":1,"y":2},"b":[{"z":1}],"a":3}', 8).topLevelMembers, 3);
  t.equal(scanJson('{"a\\"":1,"b":"\\"c\\":"}', 8).topLevelMembers, 2);
  t.equal(scanJson('{}', 8).topLevelMembers, 0);
  t.equal(scanJson('"s"', 8).topLevelMembers, 0);
});

t.test('lone surrogate escapes are reported; a valid pair is not', async (t) => {
  t.equal(scanJson('{"a":"\\ud800"}', 4).problem, 'lone-surrogate');
  t.equal(scanJson('{"a":"\\udc00"}', 4).problem, 'lone-surrogate');
  t.equal(scanJson('{"a":"\\uD800\\u0041"}', 4).problem, 'lone-surrogate', 'high followed by a non-low escape');
  t.equal(scanJson('{"a":"\\uDBFFx"}', 4).problem, 'lone-surrogate', 'high followed by a plain char');
  t.equal(scanJson('{"a":"\\ud83d\\ude00"}', 4).problem, undefined);
  t.equal(scanJson('{"a":"\\u0041\\u00e9"}', 4).problem, undefined);
});

t.test('depth is still enforced after an earlier duplicate or lone surrogate', async (t) => {
  t.equal(scanJson(`{"id":1,"id":2,"x":${nested(100)}}`, 64).problem, 'too-deep');
  t.equal(scanJson(`{"a":"\\ud800","x":${nested(100)}}`, 64).problem, 'too-deep');
  const dup = scanJson(`{"id":1,"id":2,"x":${nested(10)}}`, 64);
  t.equal(dup.problem, 'duplicate-member', 'without excess depth the first problem is reported');
  t.equal(dup.member, 'id');
});
