// Protobuf schemas: a .proto file (with its imports, resolved from its folder) loaded by
// protobufjs, and messages decoded to the values EMQX's schema_decode gives (gpb with maps,
// strings as binaries, oneof flat, unset optional fields omitted) and encoded from them.
//
// proto field              weir value (EMQX's in brackets where it differs)
// int32/uint32/sint32/…    number
// int64/uint64/…           number when |v| ≤ 2^53 − 1, else its decimal digits as a string [an integer]
// float/double             number; a whole one stays a float (2.0, as EMQX prints it)
// bool, string             boolean, string
// bytes                    binary (Buffer)
// enum                     the value's name; a number the enum does not name stays a number
// message                  map; unset: absent
// repeated                 array, [] when none
// map<K, V>                map, keys as text [integer keys stay integers]
// oneof                    flat: the field that is set, under its own name; the others absent
// proto3 scalar unset      its default (0, '', false, the first enum name)
// proto2 optional unset    absent (a declared [default] too, as gpb's maps_unset_optional omitted)
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { Enum, Field, Root, Type } from 'protobufjs';
import { WholeFloat } from '../rules/values/floats.js';
import { loadProtobufjs } from './libraries.js';
import { SchemaLoadError } from './schema-load-error.js';

const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const FLOAT_TYPES = new Set(['float', 'double']);

/** Loads a .proto file and its imports (from its own folder, never outside it); every type resolved. */
export function loadProto(file: string): Root {
  const pb = loadProtobufjs();
  const base = dirname(file);
  const root = new pb.Root();
  root.resolvePath = (origin: string, target: string): string => {
    if (origin === '' || isAbsolute(target)) return target;
    const path = resolve(base, target);
    const rel = relative(base, path);
    if (rel.startsWith('..') || isAbsolute(rel)) throw new SchemaLoadError(`import '${target}' is outside the schema's folder`, origin);
    return path;
  };
  try {
    root.loadSync(file, { keepCase: true });
    root.resolveAll();
  } catch (err) {
    if (err instanceof SchemaLoadError) throw err;
    throw located(err, file);
  }
  return root;
}

/** protobufjs writes a parse error as "illegal token 'x' (file.proto, line 3)". */
function located(err: unknown, file: string): SchemaLoadError {
  const message = err instanceof Error ? err.message : String(err);
  const m = /\(([^,()]+), line (\d+)\)$/.exec(message);
  if (m) return new SchemaLoadError(message.slice(0, m.index).trim(), m[1]!, Number(m[2]));
  return new SchemaLoadError(message.replace(/^ENOENT: /, ''), file);
}

/** The message type named `name` (qualified or not, as EMQX's message_type). */
export function messageType(root: Root, name: string): Type {
  const found = root.lookup(name);
  if (found === null || !('fieldsArray' in found)) throw new Error(`no message type '${name}' in the schema`);
  return found as Type;
}

export function decodeMessage(type: Type, bytes: Buffer): Record<string, unknown> {
  return toTerm(type, type.decode(bytes) as unknown as Record<string, unknown>);
}

function toTerm(type: Type, msg: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const name = field.name;
    if (!Object.hasOwn(msg, name)) {
      if (field.hasPresence || (field.resolvedType !== null && !isEnum(field.resolvedType))) continue;
      out[name] = field.repeated ? [] : field.map ? {} : scalarTerm(field, field.typeDefault);
      continue;
    }
    const v = msg[name];
    if (field.map) {
      const m: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) m[k] = valueTerm(field, item);
      out[name] = m;
    } else if (field.repeated) {
      out[name] = (v as unknown[]).map((item) => valueTerm(field, item));
    } else {
      out[name] = valueTerm(field, v);
    }
  }
  return out;
}

function isEnum(t: Type | Enum): t is Enum {
  return 'valuesById' in t;
}

function valueTerm(field: Field, v: unknown): unknown {
  const rt = field.resolvedType;
  if (rt !== null) {
    if (isEnum(rt)) return rt.valuesById[v as number] ?? v;
    return toTerm(rt, v as Record<string, unknown>);
  }
  return scalarTerm(field, v);
}

function scalarTerm(field: Field, v: unknown): unknown {
  if (field.resolvedType !== null && isEnum(field.resolvedType)) return field.resolvedType.valuesById[v as number] ?? v;
  if (LONG_TYPES.has(field.type)) return longTerm(v);
  if (FLOAT_TYPES.has(field.type)) return typeof v === 'number' && Number.isInteger(v) ? new WholeFloat(v) : v;
  if (field.type === 'bytes') return Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array);
  return v;
}

interface LongLike {
  low: number;
  high: number;
  unsigned: boolean;
  toString(): string;
  toNumber(): number;
}

/** A 64-bit integer: a number when it is exact as one, else its decimal digits. */
function longTerm(v: unknown): number | string {
  if (typeof v === 'number') return v;
  const l = v as LongLike;
  const n = l.toNumber();
  return Number.isSafeInteger(n) ? n : l.toString();
}

/** Encodes a map with `type`: names of enums, text or binaries for bytes, integers or their digits for 64-bit fields. */
export function encodeMessage(type: Type, value: unknown): Buffer {
  const plain = toPlain(type, value, type.name);
  const problem = type.verify(plain);
  if (problem) throw new Error(`does not fit ${type.name}: ${problem}`);
  return Buffer.from(type.encode(plain).finish());
}

function toPlain(type: Type, value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) {
    throw new Error(`${at}: expected a map for message ${type.name}`);
  }
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  // Only the schema's fields are copied: a key such as __proto__ in the input reaches nothing.
  for (const field of type.fieldsArray) {
    if (!Object.hasOwn(src, field.name)) continue;
    const v = src[field.name];
    if (v === undefined || v === null) continue;
    const path = `${at}.${field.name}`;
    if (field.map) {
      if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${path}: expected a map`);
      const m: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) m[k] = plainValue(field, item, `${path}.${k}`);
      out[field.name] = m;
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw new Error(`${path}: expected an array`);
      out[field.name] = v.map((item, i) => plainValue(field, item, `${path}[${i}]`));
    } else {
      out[field.name] = plainValue(field, v, path);
    }
  }
  return out;
}

function plainValue(field: Field, v: unknown, path: string): unknown {
  const rt = field.resolvedType;
  if (rt !== null && !isEnum(rt)) return toPlain(rt, v, path);
  if (rt !== null && isEnum(rt)) {
    if (typeof v === 'string') {
      const n = rt.values[v];
      if (n === undefined) throw new Error(`${path}: '${v}' is not a value of enum ${rt.name}`);
      return n;
    }
    return v;
  }
  if (v instanceof WholeFloat) return v.value;
  if (field.type === 'bytes') return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
  if (LONG_TYPES.has(field.type) && (typeof v === 'string' || typeof v === 'bigint')) {
    const text = String(v);
    if (!/^-?\d+$/.test(text)) throw new Error(`${path}: '${text}' is not an integer`);
    const long = loadProtobufjs().util.Long as unknown as { fromString(s: string, unsigned: boolean): unknown };
    return long.fromString(text, field.type.startsWith('u') || field.type === 'fixed64');
  }
  return v;
}
