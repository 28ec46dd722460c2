// String functions (EMQX's string family).
import { isBinary, text, typeError } from '../values.js';
import { def, type FunctionSpec } from './registry.js';

function str1(name: string, f: (s: string) => unknown) {
  return (v: unknown): unknown => {
    if (!isBinary(v)) throw typeError(name, v);
    return f(text(v));
  };
}

export const STRING_FUNCTIONS: FunctionSpec[] = [
  ...def('string', 'lower(string): string', 'Lower case.', str1('lower', (s) => s.toLowerCase()), { examples: [{ call: "lower('AbC')", result: 'abc' }] }),
  ...def('string', 'upper(string): string', 'Upper case.', str1('upper', (s) => s.toUpperCase()), { examples: [{ call: "upper('AbC')", result: 'ABC' }] }),
];
