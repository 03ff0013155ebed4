/**
 * Every JSON example of both spec texts (params, results, stream events,
 * errors, cards; extracted into test/fixtures/bridge/) goes through the
 * bridge to the other generation: the output validates against the target's
 * schema (strict: no member the target does not define), and what was dropped
 * is exactly what the example has no counterpart for — several of the spec's
 * own examples are malformed, and each such drop is named here with the reason.
 */
import t from 'tap';
import ex03 from '../fixtures/bridge/spec-v0.3-examples.json' with { type: 'json' };
import ex10 from '../fixtures/bridge/spec-v1.0-examples.json' with { type: 'json' };
import { OPERATIONS, type OperationName, type ProtocolGeneration } from '../../src/a2a/operations.js';
import { bridgeCard, bridgeError, bridgeEvent, bridgeParams, bridgeResult, type Bridged } from '../../src/a2a/bridge/index.js';
import { schemaProblem } from '../support/bridge-schemas.js';

interface Example {
  readonly source: string;
  readonly generation: ProtocolGeneration;
  readonly kind: 'params' | 'result' | 'event' | 'card' | 'error';
  readonly operation: OperationName | null;
  readonly value: unknown;
}

/** Drops the spec's own examples cause, by "<generation> <index in its fixture file>". */
const EXPECTED_DROPS: Record<string, { dropped: string[]; why: string }> = {
  '0.3 0': { dropped: ['card.signatures'], why: 'a bridged card cannot keep signatures over the other generation' },
  '0.3 5': { dropped: ['message.parts[].file.*', 'message.parts[].file'], why: 'the example file part has `data`, not `bytes` or `uri`' },
  '0.3 6': { dropped: ['task.history[].parts[].file.*', 'task.history[].parts[].file'], why: 'the same malformed file part, echoed in history' },
  '0.3 11': { dropped: ['*'], why: 'the example puts messageId beside the message, not inside it' },
  '0.3 18': { dropped: ['message.parts[].file.bytes'], why: 'the example bytes end in "..." (not base64)' },
  '1.0 20': { dropped: ['card.signatures'], why: 'a bridged card cannot keep signatures over the other generation' },
};

function translate(ex: Example, to: ProtocolGeneration): Bridged<unknown> {
  const op = ex.operation ? OPERATIONS[ex.operation] : undefined;
  switch (ex.kind) {
    case 'params':
      return bridgeParams(op!, ex.generation, to, ex.value);
    case 'result':
      return bridgeResult(op!, ex.generation, to, ex.value);
    case 'event':
      return bridgeEvent(ex.generation, to, ex.value);
    case 'card':
      return bridgeCard(ex.generation, to, ex.value);
    default:
      return bridgeError(ex.generation, to, ex.value);
  }
}

for (const [generation, examples] of [['0.3', ex03], ['1.0', ex10]] as const) {
  const to: ProtocolGeneration = generation === '0.3' ? '1.0' : '0.3';
  t.test(`A2A ${generation} spec examples bridge to ${to} and validate`, async (t) => {
    (examples as Example[]).forEach((ex, i) => {
      const name = `${generation} ${i} ${ex.source} ${ex.kind} ${ex.operation ?? ''}`;
      const r = translate(ex, to);
      if (ex.operation === 'ListTasks') {
        t.match(r, { ok: false, code: -32004, problem: /ListTasks does not exist in A2A 0\.3/ }, `${name}: no counterpart`);
        return;
      }
      if (!r.ok) return void t.fail(`${name}: ${r.problem}`);
      const schemaKind = ex.kind === 'params' ? 'params' : ex.kind === 'error' ? 'error' : 'result';
      const operation = ex.kind === 'card' ? 'GetExtendedAgentCard' : ex.kind === 'event' ? 'SendStreamingMessage' : (ex.operation ?? undefined);
      t.equal(schemaProblem(to, schemaKind, operation, r.value), undefined, `${name}: valid ${to}`);
      t.same([...r.dropped].sort(), [...(EXPECTED_DROPS[`${generation} ${i}`]?.dropped ?? [])].sort(), `${name}: drops`);
    });
  });
}

t.test('the spec examples cover every kind in both generations', async (t) => {
  for (const examples of [ex03, ex10] as Example[][]) {
    for (const kind of ['params', 'result', 'event', 'card'] as const) t.ok(examples.some((e) => e.kind === kind), kind);
  }
  t.ok((ex10 as Example[]).some((e) => e.kind === 'error'), '1.0 error examples');
});
