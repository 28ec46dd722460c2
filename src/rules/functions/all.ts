// The one explicit list of function families; FUNCTIONS is the registry the compiler uses.
import { ARRAY_FUNCTIONS } from './array.js';
import { MESSAGE_FUNCTIONS } from './message.js';
import { FunctionRegistry } from './registry.js';
import { STRING_FUNCTIONS } from './string.js';

export const FUNCTIONS = new FunctionRegistry([
  ...MESSAGE_FUNCTIONS,
  ...STRING_FUNCTIONS,
  ...ARRAY_FUNCTIONS,
]);
