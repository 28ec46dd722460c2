// Arithmetic as EMQX defines it: numbers only, except `+` which concatenates when either side is
// a string; `/` always divides as floats, `div` and `mod` take integers (mod keeps the sign of the
// dividend, as Erlang's rem). Anything else, and division by zero, is an evaluation error.
import { RuleEvalError } from './errors.js';
import { isBinary, toStr, typeError } from './values.js';

function finite(n: number, op: string): number {
  if (!Number.isFinite(n)) throw new RuleEvalError('rule.arith_error', `arithmetic overflow in ${op}`);
  return n;
}

export function add(x: unknown, y: unknown): unknown {
  if (typeof x === 'number' && typeof y === 'number') return finite(x + y, '+');
  if (isBinary(x) || isBinary(y)) return toStr(x) + toStr(y);
  throw typeError("'+'", x, y);
}

export function sub(x: unknown, y: unknown): number {
  if (typeof x === 'number' && typeof y === 'number') return finite(x - y, '-');
  throw typeError("'-'", x, y);
}

export function mul(x: unknown, y: unknown): number {
  if (typeof x === 'number' && typeof y === 'number') return finite(x * y, '*');
  throw typeError("'*'", x, y);
}

export function fdiv(x: unknown, y: unknown): number {
  if (typeof x === 'number' && typeof y === 'number') {
    if (y === 0) throw new RuleEvalError('rule.arith_error', 'division by zero');
    return finite(x / y, '/');
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

export function negate(x: unknown): number {
  if (typeof x === 'number') return -x;
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
