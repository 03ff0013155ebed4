/** mediaTypeOf (src/http/media-type.ts): a Content-Type's media type, as `split(';', 1)[0].trim().toLowerCase()`. */
import fc from 'fast-check';
import t from 'tap';
import { mediaTypeOf } from '../../src/http/media-type.js';

t.test('the part before any parameter, trimmed and lower-cased', async (t) => {
  const cases: [string, string][] = [
    ['application/json', 'application/json'],
    [' Application/A2A+JSON ; charset=utf-8', 'application/a2a+json'],
    ['text/event-stream;charset=utf-8;x=y', 'text/event-stream'],
    [';charset=utf-8', ''],
    ['', ''],
  ];
  for (const [value, mediaType] of cases) t.equal(mediaTypeOf(value), mediaType, JSON.stringify(value));
});

t.test('property: what String#split with a limit of one gave', async (t) => {
  const piece = fc.constantFrom('application', '/', 'JSON', 'json', ';', ' ', '\t', 'charset=utf-8', '+', 'a2a', 'x');
  const value = fc.array(piece, { maxLength: 10 }).map((pieces) => pieces.join(''));
  fc.assert(fc.property(value, (v) => mediaTypeOf(v) === v.split(';', 1)[0]!.trim().toLowerCase()), { numRuns: 2000 });
  t.pass('2,000 values');
});
