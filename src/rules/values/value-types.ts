// The value model of rule SQL: what kind of value a JS value is, and its name in error messages.
// Erlang terms map to JS as: binary → string (Buffer when it is not text), integer → a whole
// number, float → a number with a fraction or a WholeFloat (floats.ts), true/false → boolean, JSON null → null, undefined (absent) → undefined, map → plain
// object, list → array. Absent values are `undefined`, never `null`: JSON null is a value.
import { RuleEvalError } from '../errors.js';
import { WholeFloat } from './floats.js';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof WholeFloat);
}

export function isBinary(v: unknown): v is string | Buffer {
  return typeof v === 'string' || v instanceof Uint8Array;
}

/** Text of a binary: strings as they are, bytes decoded as UTF-8. */
export function text(v: string | Uint8Array): string {
  return typeof v === 'string' ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
}

/** A short type name for error messages. */
export function typeName(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof Uint8Array) return 'binary';
  if (v instanceof WholeFloat) return 'float';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'float';
  if (typeof v === 'object') return 'map';
  return typeof v;
}

export function typeError(what: string, ...args: unknown[]): RuleEvalError {
  return new RuleEvalError('rule.type_error', `${what}: bad argument ${args.map(typeName).join(', ')}`);
}
