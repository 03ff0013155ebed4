/**
 * fast-check arbitraries of canonical ProtoJSON for any A2A message type,
 * built from the generated descriptors: every field kind of a2a.proto
 * (scalars, enums, bytes, repeated, maps, oneofs, explicit-presence
 * `optional`s, nested messages, Struct, Value, Timestamp, Empty).
 * "Canonical" = what a conformant ProtoJSON writer emits: lowerCamelCase
 * names, no default values, enums by name, bytes as padded base64,
 * Timestamps in UTC with 0/3 fraction digits. So for every generated value
 * JSON → binary → JSON must give back the same value.
 */
import fc from 'fast-check';
import type { DescField, DescMessage } from '@bufbuild/protobuf';
import { ScalarType } from '@bufbuild/protobuf';
import { schemaOf } from '../../src/bindings/grpc/proto-json.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
const safeKey = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__');

/** JSON for Struct/Value: finite numbers, no -0 (ProtoJSON writes 0), no __proto__ keys. */
const jsonValue: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
    fc.string({ unit: 'grapheme', maxLength: 10 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(safeKey, tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
})).value;

const jsonObject = fc.dictionary(safeKey, jsonValue, { maxKeys: 4, noNullPrototype: true });

/** RFC 3339 as @bufbuild/protobuf writes it: UTC, "Z", fraction only when non-zero (3 digits for ms). */
const timestamp = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) =>
  d.toISOString().replace('.000Z', 'Z'),
);

function scalar(field: DescField & { fieldKind: 'scalar' | 'list' | 'map' }, type: ScalarType): fc.Arbitrary<Json> {
  switch (type) {
    case ScalarType.STRING:
      return text;
    case ScalarType.BOOL:
      return fc.constant(true);
    case ScalarType.INT32:
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).filter((n) => n !== 0);
    case ScalarType.BYTES:
      return fc.uint8Array({ minLength: 1, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64'));
    default:
      throw new Error(`scalar type ${type} of ${field.name} is not in a2a.proto; add it here`);
  }
}

function messageValue(desc: DescMessage, depth: number): fc.Arbitrary<Json> {
  switch (desc.typeName) {
    case 'google.protobuf.Struct':
      return jsonObject;
    case 'google.protobuf.Value':
      return jsonValue;
    case 'google.protobuf.Timestamp':
      return timestamp;
    case 'google.protobuf.Empty':
      return fc.constant({});
    default:
      return messageOf(desc, depth + 1);
  }
}

function fieldValue(field: DescField, depth: number): fc.Arbitrary<Json> {
  switch (field.fieldKind) {
    case 'scalar':
      return scalar(field, field.scalar);
    case 'enum': {
      const names = field.enum.values.filter((v) => v.number !== 0).map((v) => v.name);
      return fc.constantFrom(...names);
    }
    case 'message':
      return messageValue(field.message, depth);
    case 'list': {
      const item =
        field.listKind === 'scalar' ? scalar(field, field.scalar) : field.listKind === 'enum' ? fc.constantFrom(...field.enum.values.filter((v) => v.number !== 0).map((v) => v.name)) : messageValue(field.message, depth);
      return fc.array(item, { minLength: 1, maxLength: 2 });
    }
    case 'map': {
      const value = field.mapKind === 'scalar' ? scalar(field, field.scalar) : field.mapKind === 'enum' ? fc.constantFrom(...field.enum.values.filter((v) => v.number !== 0).map((v) => v.name)) : messageValue(field.message, depth);
      return fc.dictionary(safeKey, value, { minKeys: 1, maxKeys: 2, noNullPrototype: true });
    }
  }
}

const cache = new Map<string, fc.Arbitrary<Json>>();

/** Canonical ProtoJSON of `desc`: each field present or not, at most one member per oneof. */
export function messageOf(desc: DescMessage, depth = 0): fc.Arbitrary<Json> {
  if (depth > 5) return fc.constant({});
  const key = `${desc.typeName}@${depth}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const plain = desc.fields.filter((f) => f.oneof === undefined || f.oneof.fields.length === 1 /* proto3 optional */);
  const members: Record<string, fc.Arbitrary<Json>> = {};
  for (const f of plain) members[f.jsonName] = fieldValue(f, depth);
  const base = fc.record(members, { requiredKeys: [], noNullPrototype: true });
  const oneofs = desc.oneofs.filter((o) => o.fields.length > 1 || !o.fields[0]?.proto.proto3Optional);
  const withOneofs = oneofs.reduce<fc.Arbitrary<Record<string, Json>>>(
    (acc, oneof) =>
      fc.tuple(acc, fc.option(fc.oneof(...oneof.fields.map((f) => fieldValue(f, depth).map((v) => [f.jsonName, v] as const))), { nil: undefined })).map(([obj, pick]) =>
        pick ? { ...obj, [pick[0]]: pick[1] } : obj,
      ),
    base as fc.Arbitrary<Record<string, Json>>,
  );
  cache.set(key, withOneofs);
  return withOneofs;
}

export function arbitraryOf(typeName: string): fc.Arbitrary<Json> {
  return messageOf(schemaOf(typeName));
}
