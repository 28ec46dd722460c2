// Array functions (EMQX's array family). Indexes are 1-based.
import { typeError } from '../values.js';
import { def, type FunctionSpec } from './registry.js';

export const ARRAY_FUNCTIONS: FunctionSpec[] = [
  ...def('array', 'length(array): int', 'Number of elements.', (a: unknown) => {
    if (!Array.isArray(a)) throw typeError('length', a);
    return a.length;
  }, { examples: [{ call: 'length([1, 2, 3])', result: 3 }] }),
];
