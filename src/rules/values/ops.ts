// Arithmetic as EMQX defines it: numbers only, except `+` which concatenates when either side is
// a string; integers in give an integer, a float on either side a float; `/` always gives a
// float (4 / 2 = 2.0), `div` and `mod` take integers (mod keeps the sign of the dividend, as
// Erlang's rem). Anything else, and division by zero, is an evaluation error.
import { RuleEvalError } from '../errors.js';
import { float, numberValue, WholeFloat } from './floats.js';
import { toStr } from './to-str.js';
import { isBinary, typeError } from './value-types.js';

function finite(n: number, op: string): number {
  if (!Number.isFinite(n)) throw new RuleEvalError('rule.arith_error', `arithmetic overflow in ${op}`);
  return n;
}

/** `r`, computed from x and y, as an integer when both were integers, else as a float. */
function numeric(r: number, x: unknown, y: unknown, op: string): number | WholeFloat {
  finite(r, op);
  return Number.isInteger(r) && !(Number.isInteger(x) && Number.isInteger(y)) ? new WholeFloat(r) : r;
}

export function add(x: unknown, y: unknown): unknown {
  const a = numberValue(x);
  const b = numberValue(y);
  if (a !== undefined && b !== undefined) return numeric(a + b, x, y, '+');
  if (isBinary(x) || isBinary(y)) return toStr(x) + toStr(y);
  throw typeError("'+'", x, y);
}

export function sub(x: unknown, y: unknown): number | WholeFloat {
  const a = numberValue(x);
  const b = numberValue(y);
  if (a !== undefined && b !== undefined) return numeric(a - b, x, y, '-');
  throw typeError("'-'", x, y);
}

export function mul(x: unknown, y: unknown): number | WholeFloat {
  const a = numberValue(x);
  const b = numberValue(y);
  if (a !== undefined && b !== undefined) return numeric(a * b, x, y, '*');
  throw typeError("'*'", x, y);
}

export function fdiv(x: unknown, y: unknown): number | WholeFloat {
  const a = numberValue(x);
  const b = numberValue(y);
  if (a !== undefined && b !== undefined) {
    if (b === 0) throw new RuleEvalError('rule.arith_error', 'division by zero');
    return float(finite(a / b, '/'));
  }
  throw typeError("'/'", x, y);
}

export function idiv(x: unknown, y: unknown): number {
  if (Number.isInteger(x) && Number.isInteger(y)) {
    if (y === 0) throw new RuleEvalError('rule.arith_error', 'division by zero');
    return Math.trunc((x as number) / (y as number));
  }
  throw typeError("'div'", x, y);
}

export function rem(x: unknown, y: unknown): number {
  if (Number.isInteger(x) && Number.isInteger(y)) {
    if (y === 0) throw new RuleEvalError('rule.arith_error', 'division by zero');
    return (x as number) % (y as number);
  }
  throw typeError("'mod'", x, y);
}

export function negate(x: unknown): number | WholeFloat {
  if (typeof x === 'number') return -x;
  if (x instanceof WholeFloat) return new WholeFloat(-x.value);
  throw typeError("unary '-'", x);
}

export const ARITH: Record<string, (x: unknown, y: unknown) => unknown> = {
  '+': add,
  '-': sub,
  '*': mul,
  '/': fdiv,
  div: idiv,
  mod: rem,
};
