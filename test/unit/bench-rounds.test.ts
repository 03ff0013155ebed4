import t from 'tap';
import { alternate, alternateMany, roundOrder } from '../../bench/context.js';

t.test('rounds alternate their order, so no side always runs right after another', async (t) => {
  t.same([0, 1, 2, 3].map((r) => roundOrder(3, r)), [[0, 1, 2], [2, 1, 0], [0, 1, 2], [2, 1, 0]]);
  const ran: string[] = [];
  const side = (name: string) => async () => {
    ran.push(name);
    return `${name}${ran.length}`;
  };
  const many = await alternateMany(3, [side('d'), side('h'), side('g')]);
  t.same(ran, ['d', 'h', 'g', 'g', 'h', 'd', 'd', 'h', 'g']);
  t.same(many, [['d1', 'd6', 'd7'], ['h2', 'h5', 'h8'], ['g3', 'g4', 'g9']], 'each side keeps its own results, in round order');
  ran.length = 0;
  const two = await alternate(4, side('a'), side('b'));
  t.same(ran, ['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a']);
  t.same(two, { a: ['a1', 'a4', 'a5', 'a8'], b: ['b2', 'b3', 'b6', 'b7'] });
});
