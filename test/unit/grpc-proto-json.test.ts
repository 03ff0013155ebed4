import t from 'tap';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { OPERATION_LIST } from '../../src/a2a/operations.js';
import { binaryToJson, jsonToBinary, ProtoConversionError, schemaOf } from '../../src/bindings/grpc/proto-json.js';
import { MANIFEST, sourceManifest } from '../../scripts/gen-proto.js';
import { arbitraryOf } from '../support/proto-arbitraries.js';
import { fuzzParams } from '../support/fuzz.js';

const params = fuzzParams(300);

const roundTrip = (type: string, json: unknown) => binaryToJson(type, jsonToBinary(type, json as never));

/** Spec examples (test/fixtures/grpc/spec-examples.json, extracted from specification-v1.0.1.md with their line). */
const examples = JSON.parse(readFileSync(new URL('../fixtures/grpc/spec-examples.json', import.meta.url), 'utf8')) as {
  source: string;
  type: string;
  json: Record<string, unknown>;
}[];

/** What ProtoJSON drops on purpose in the spec's examples: a default value, and a member the proto does not have. */
const KNOWN_LOSSES: Record<string, string[]> = {
  'specification-v1.0.1.md line 1495': ['nextPageToken'], // "" is proto3's default: not written
  'specification-v1.0.1.md line 1528': ['nextPageToken'],
  'specification-v1.0.1.md line 2138': ['security'], // not in a2a.proto 1.0 (securityRequirements is)
};

t.test('every spec example survives JSON → binary → JSON (key order aside), except the documented losses', async (t) => {
  t.ok(examples.length >= 20, 'the fixture holds the spec examples');
  for (const example of examples) {
    const back = roundTrip(example.type, example.json);
    const expected = { ...example.json };
    for (const member of KNOWN_LOSSES[example.source] ?? []) delete expected[member];
    t.same(back.value, expected, `${example.source} (${example.type})`);
    t.ok(isDeepStrictEqual(JSON.parse(back.json), back.value), 'json text and value agree');
    // Canonical text is a fixed point.
    t.equal(roundTrip(example.type, back.value).json, back.json, `${example.source} canonical form is stable`);
  }
});

const TYPES = [...new Set(OPERATION_LIST.flatMap((op) => [op.requestType, op.responseType]))];

t.test('every request, response and event type of the 11 operations resolves', async (t) => {
  t.equal(TYPES.length, 17, "10 request types, 7 more response and event types");
  for (const type of TYPES) t.ok(schemaOf(type).typeName, type);
});

t.test('property: canonical ProtoJSON round-trips exactly through binary, for every operation message', async (t) => {
  for (const type of TYPES) {
    t.doesNotThrow(() =>
      fc.assert(
        fc.property(arbitraryOf(type), (json) => {
          const bin = jsonToBinary(type, json as never);
          const back = binaryToJson(type, bin);
          if (!isDeepStrictEqual(back.value, json)) throw new Error(`changed: ${JSON.stringify(json)} → ${back.json}`);
          // binary → JSON → binary gives the same bytes
          const again = jsonToBinary(type, back.value);
          if (Buffer.compare(Buffer.from(again), Buffer.from(bin)) !== 0) throw new Error('binary changed');
        }),
        params,
      ),
      type,
    );
  }
});

t.test('ProtoJSON specifics', async (t) => {
  const task = {
    id: 't1',
    status: { state: 'TASK_STATE_WORKING', timestamp: '2025-01-02T03:04:05.123456789Z' },
    artifacts: [{ artifactId: 'a', parts: [{ raw: Buffer.from([0, 1, 2, 255]).toString('base64'), mediaType: 'application/octet-stream' }] }],
    metadata: { n: 1.5, nested: { list: [true, null, 'x'] } },
  };
  const back = roundTrip('Task', task);
  t.same(back.value, task, 'enums by name, nanosecond timestamps, bytes base64, Struct as plain JSON');

  t.same(roundTrip('Task', { id: 't1', status: { state: 2 } }).value, { id: 't1', status: { state: 'TASK_STATE_WORKING' } }, 'an enum given as a number is written as its name');
  t.same(roundTrip('Task', { id: 't1', context_id: 'c' }).value, { id: 't1', contextId: 'c' }, 'proto field names are accepted, camelCase is written');
  t.same(roundTrip('Task', { id: 't1', surprise: { deep: 1 }, status: { state: 'NO_SUCH_STATE' } }).value, { id: 't1', status: {} }, 'unknown members and enum names are dropped');
  t.same(roundTrip('Task', { id: '', contextId: 'c', history: [] }).value, { contextId: 'c' }, 'default values are not written');
  t.same(roundTrip('GetTaskRequest', { id: 't', historyLength: 0 }).value, { id: 't', historyLength: 0 }, 'an explicit-presence optional keeps its zero');
  t.same(roundTrip('StreamResponse', { statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } } }).value, {
    statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED' } },
  });
  t.same(roundTrip('google.protobuf.Empty', {}).value, {});
  t.same(roundTrip('Part', { data: [1, 'two', { three: 3 }] }).value, { data: [1, 'two', { three: 3 }] }, 'a Value holding a list');
});

t.test('unknown binary fields are dropped', async (t) => {
  const known = Buffer.from(jsonToBinary('Task', { id: 't1' }));
  // field 99, wire type 2 (length-delimited), 3 bytes
  const unknown = Buffer.concat([known, Buffer.from([0x9a, 0x06, 0x03, 0x61, 0x62, 0x63])]);
  t.same(binaryToJson('Task', unknown).value, { id: 't1' });
});

t.test('bad input is a ProtoConversionError with a gateway-written message', async (t) => {
  const cases: [string, () => unknown][] = [
    ['wrong JSON type', () => jsonToBinary('Task', { id: 5 })],
    ['bad timestamp', () => jsonToBinary('TaskStatus', { timestamp: 'yesterday' })],
    ['bad base64', () => jsonToBinary('Part', { raw: '***' })],
    ['two oneof members', () => jsonToBinary('StreamResponse', { task: { id: 'a' }, message: { messageId: 'b' } })],
    ['truncated binary', () => binaryToJson('Task', Buffer.from([0x0a, 0x05, 0x61]))],
    ['wrong wire type', () => binaryToJson('Task', Buffer.from([0x0d, 0, 0, 0, 0]))],
    ['invalid UTF-8 in a string', () => binaryToJson('Task', Buffer.from([0x0a, 0x02, 0xc3, 0x28]))],
    ['nested too deeply', () => binaryToJson('Part', deepValue(400))],
  ];
  for (const [name, run] of cases) {
    t.throws(run, { name: 'ProtoConversionError' }, name);
    try {
      run();
    } catch (err) {
      t.ok(err instanceof ProtoConversionError);
      t.notMatch((err as Error).message, /\*\*\*|yesterday|\(/, `${name}: the message does not quote the input`);
    }
  }
});

/** Part{data: Value{list_value: ListValue{values: [Value{list_value: ...}]}}} nested `levels` deep. */
function deepValue(levels: number): Buffer {
  let inner = Buffer.from([0x20, 0x01]); // Value{bool_value: true}
  for (let i = 0; i < levels; i++) {
    const list = Buffer.concat([Buffer.from([0x0a]), varint(inner.length), inner]); // ListValue{values: inner}
    inner = Buffer.concat([Buffer.from([0x32]), varint(list.length), list]); // Value{list_value: list}
  }
  return Buffer.concat([Buffer.from([0x22]), varint(inner.length), inner]); // Part{data: inner}
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

t.test('generated code matches the vendored protos (drift check)', async (t) => {
  const manifest = readFileSync(new URL(`../../src/bindings/grpc/gen/${MANIFEST}`, import.meta.url), 'utf8');
  t.equal(manifest, sourceManifest(), 'every proto/ file has the hash recorded at generation: run npx tsx scripts/gen-proto.ts');
  const shared = new URL('../../../shared/a2a/a2a.proto', import.meta.url);
  if (existsSync(shared)) {
    t.equal(readFileSync(new URL('../../proto/a2a.proto', import.meta.url), 'utf8'), readFileSync(shared, 'utf8'), 'proto/a2a.proto is the normative copy');
  }
  let protoc = false;
  try {
    execFileSync('protoc', ['--version'], { stdio: 'ignore' });
    protoc = true;
  } catch {
    // protoc is a regeneration tool only; without it the hash check above stands.
  }
  if (protoc) {
    t.doesNotThrow(() => execFileSync('npx', ['tsx', 'scripts/gen-proto.ts', '--check'], { cwd: new URL('../..', import.meta.url), stdio: 'pipe' }), 'regenerating changes nothing');
  }
});
