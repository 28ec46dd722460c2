// Math functions: numbers in, numbers out; a domain error (sqrt(-1), log(0)) fails the
// evaluation as Erlang's math module does.
import { def, type FunctionSpec } from './registry.js';
import { finiteResult, needNum } from './args.js';
import { float, isInteger } from '../values/floats.js';
import { idiv, rem } from '../values/ops.js';

function unary(name: string, f: (x: number) => number, summary: string, examples: FunctionSpec['examples']): FunctionSpec[] {
  return def('math', `${name}(number): float`, summary, (x: unknown) => float(finiteResult(name, f(needNum(name, x)))), { examples });
}

/** Erlang's round: half away from zero. */
function erlRound(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

export const MATH_FUNCTIONS: FunctionSpec[] = [
  ...def('math', 'abs(number): number', 'Absolute value.', (x: unknown) => (isInteger(x) ? Math.abs(x) : float(Math.abs(needNum('abs', x)))), {
    examples: [
      { call: 'abs(-12)', result: 12 },
      { call: 'str(abs(-2.0))', result: '2.0' },
    ],
  }),
  ...unary('acos', Math.acos, 'Arc cosine.', [{ call: 'acos(1)', result: 0 }]),
  ...unary('acosh', Math.acosh, 'Inverse hyperbolic cosine.', [{ call: 'acosh(1)', result: 0 }]),
  ...unary('asin', Math.asin, 'Arc sine.', [{ call: 'asin(0)', result: 0 }]),
  ...unary('asinh', Math.asinh, 'Inverse hyperbolic sine.', [{ call: 'asinh(0)', result: 0 }]),
  ...unary('atan', Math.atan, 'Arc tangent.', [{ call: 'atan(0)', result: 0 }]),
  ...unary('atanh', Math.atanh, 'Inverse hyperbolic tangent.', [{ call: 'atanh(0)', result: 0 }]),
  ...unary('cos', Math.cos, 'Cosine.', [{ call: 'cos(0)', result: 1 }]),
  ...unary('cosh', Math.cosh, 'Hyperbolic cosine.', [{ call: 'cosh(0)', result: 1 }]),
  ...unary('sin', Math.sin, 'Sine.', [{ call: 'sin(0)', result: 0 }]),
  ...unary('sinh', Math.sinh, 'Hyperbolic sine.', [{ call: 'sinh(0)', result: 0 }]),
  ...unary('tan', Math.tan, 'Tangent.', [{ call: 'tan(0)', result: 0 }]),
  ...unary('tanh', Math.tanh, 'Hyperbolic tangent.', [{ call: 'tanh(0)', result: 0 }]),
  ...unary('exp', Math.exp, 'e to the power x.', [{ call: 'exp(0)', result: 1 }]),
  ...unary('log', Math.log, 'Natural logarithm.', [
    { call: 'log(1)', result: 0 },
    { call: 'log(0)', error: true },
  ]),
  ...unary('log10', Math.log10, 'Base-10 logarithm.', [{ call: 'log10(1000)', result: 3 }]),
  ...unary('log2', Math.log2, 'Base-2 logarithm.', [{ call: 'log2(1024)', result: 10 }]),
  ...unary('sqrt', Math.sqrt, 'Square root.', [
    { call: 'sqrt(16)', result: 4 },
    { call: 'sqrt(-1)', error: true },
  ]),
  ...def('math', 'ceil(number): int', 'Round up.', (x: unknown) => Math.ceil(needNum('ceil', x)), { examples: [{ call: 'ceil(1.34)', result: 2 }] }),
  ...def('math', 'floor(number): int', 'Round down.', (x: unknown) => Math.floor(needNum('floor', x)), { examples: [{ call: 'floor(1.34)', result: 1 }] }),
  ...def('math', 'round(number): int', 'Round to the nearest integer, halves away from zero.', (x: unknown) => erlRound(needNum('round', x)), {
    examples: [
      { call: 'round(1.54)', result: 2 },
      { call: 'round(-2.5)', result: -3 },
    ],
  }),
  ...def(
    'math',
    'power(number, number): float',
    'x to the power y.',
    (x: unknown, y: unknown) => float(finiteResult('power', needNum('power', x) ** needNum('power', y))),
    {
      examples: [
        { call: 'power(2, 10)', result: 1024 },
        { call: 'str(power(2, 10))', result: '1024.0' },
      ],
    },
  ),
  ...def(
    'math',
    'fmod(number, number): float',
    'Floating-point remainder, the sign of x.',
    (x: unknown, y: unknown) => float(finiteResult('fmod', needNum('fmod', x) % needNum('fmod', y))),
    {
      examples: [{ call: 'fmod(-32, 5)', result: -2 }],
    },
  ),
  // The function forms of the infix `div` and `mod` (EMQX has both; one implementation in ops.ts).
  ...def('math', 'div(int, int): int', 'Integer division, truncated toward zero; the same as `x div y`.', idiv, {
    examples: [
      { call: 'div(7, 2)', result: 3 },
      { call: 'div(1, 0)', error: true },
    ],
  }),
  ...def('math', 'mod(int, int): int', 'Integer remainder with the sign of x; the same as `x mod y`.', rem, {
    examples: [
      { call: 'mod(3, 2)', result: 1 },
      { call: 'mod(-7, 2)', result: -1 },
    ],
  }),
  ...def('math', 'random(): float', 'A random float in [0, 1).', () => float(Math.random()), {
    volatile: true,
    examples: [{ call: 'random()', type: 'float' }],
  }),
];
