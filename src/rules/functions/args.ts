// Argument checks shared by the function families: each fails the evaluation with a type error
// naming the function, as EMQX's guards (function_clause) do.
import { LIMITS } from '../limits.js';
import { RuleEvalError } from '../errors.js';
import { WholeFloat } from '../values/floats.js';
import { isBinary, text, typeError } from '../values/value-types.js';

export function needStr(fn: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return text(v);
  // EMQX's string functions take atoms as their names (true, false), but refuse null/undefined.
  if (typeof v === 'boolean') return String(v);
  throw typeError(fn, v);
}

export function needBytes(fn: string, v: unknown): Buffer {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  throw typeError(fn, v);
}

export function needInt(fn: string, v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw typeError(fn, v);
}

/** Any number's value, a float with a whole value (2.0) included. */
export function needNum(fn: string, v: unknown): number {
  if (typeof v === 'number') return v;
  if (v instanceof WholeFloat) return v.value;
  throw typeError(fn, v);
}

export function needList(fn: string, v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  throw typeError(fn, v);
}

/** One of the words an option argument may be. */
export function needOption<T extends string>(fn: string, v: unknown, options: readonly T[]): T {
  if (isBinary(v)) {
    const s = text(v);
    if ((options as readonly string[]).includes(s)) return s as T;
  }
  throw new RuleEvalError('rule.bad_argument', `${fn}: expected one of ${options.map((o) => `'${o}'`).join(', ')}`);
}

/** Fails when a result would be larger than a function may build. */
export function checkSize(fn: string, n: number): void {
  if (n > LIMITS.maxStringBytes) throw new RuleEvalError('rule.limit', `${fn}: result of ${n} bytes exceeds ${LIMITS.maxStringBytes}`);
}

/** A finite result, or an evaluation error (Erlang raises badarith where JS gives NaN/Infinity). */
export function finiteResult(fn: string, n: number): number {
  if (!Number.isFinite(n)) throw new RuleEvalError('rule.arith_error', `${fn}: result is not a finite number`);
  return n;
}
