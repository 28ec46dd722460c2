// Avro schemas (.avsc, JSON) with avsc, decoded as EMQX's erlavro decoder gives them (records
// and maps as maps, unions unwrapped, enums as their symbols, bytes as binaries). A long is a
// number when exact as one, else its decimal digits (EMQX: an integer); weir reads and writes
// longs through BigInt so none is rounded on the way.
import type { Type } from 'avsc';
import { loadAvsc } from './libraries.js';
import { readJsonFile } from './json-file.js';
import { SchemaLoadError } from './schema-load-error.js';

export function loadAvro(file: string): Type {
  const avro = loadAvsc();
  const schema = readJsonFile(file);
  const longType = avro.types.LongType.__with({
    fromBuffer: (buf: Buffer) => {
      const n = buf.readBigInt64LE();
      return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
    },
    toBuffer: (v: number | string) => {
      const buf = Buffer.alloc(8);
      buf.writeBigInt64LE(BigInt(v));
      return buf;
    },
    fromJSON: (v: number | string) => v,
    toJSON: (v: number | string) => v,
    isValid: (v: unknown) => (typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && /^-?\d{1,19}$/.test(v)),
    compare: (a: number | string, b: number | string) => {
      const d = BigInt(a) - BigInt(b);
      return d === 0n ? 0 : d < 0n ? -1 : 1;
    },
  });
  try {
    return avro.Type.forSchema(schema as never, { wrapUnions: 'never', registry: { long: longType } });
  } catch (err) {
    throw new SchemaLoadError(`not an Avro schema: ${err instanceof Error ? err.message : String(err)}`, file);
  }
}

export function decodeAvro(type: Type, bytes: Buffer): unknown {
  return plain(type.fromBuffer(bytes));
}

/** avsc gives records as instances of a class per record type; a rule's map is a plain object. */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v !== 'object' || v === null || Buffer.isBuffer(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(v)) out[k] = plain(item);
  return out;
}

export function encodeAvro(type: Type, value: unknown): Buffer {
  const problems: string[] = [];
  if (!type.isValid(value, { errorHook: (path) => problems.push(path.join('.') || '(the value)') })) {
    throw new Error(`does not fit the Avro schema at ${problems.join(', ')}`);
  }
  return type.toBuffer(value);
}
