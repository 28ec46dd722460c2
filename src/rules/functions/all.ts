// The one explicit list of function families; FUNCTIONS is the registry the compiler uses.
import { ARRAY_FUNCTIONS } from './array.js';
import { BITS_FUNCTIONS } from './bits.js';
import { COMPRESS_FUNCTIONS } from './compress.js';
import { ENCODE_FUNCTIONS } from './encode.js';
import { HASH_FUNCTIONS } from './hash.js';
import { JQ_FUNCTIONS } from './jq.js';
import { MAP_FUNCTIONS } from './map.js';
import { MATH_FUNCTIONS } from './math.js';
import { MESSAGE_FUNCTIONS } from './message.js';
import { MISC_FUNCTIONS } from './misc.js';
import { REGEX_FUNCTIONS } from './regex.js';
import { schemaFunctions } from './schema.js';
import { FunctionRegistry } from './registry.js';
import { STRING_FUNCTIONS } from './string.js';
import { TIME_FUNCTIONS } from './time.js';
import { TYPE_FUNCTIONS } from './type.js';

export const FUNCTIONS = new FunctionRegistry([
  ...MESSAGE_FUNCTIONS,
  ...MATH_FUNCTIONS,
  ...TYPE_FUNCTIONS,
  ...STRING_FUNCTIONS,
  ...REGEX_FUNCTIONS,
  ...MAP_FUNCTIONS,
  ...ARRAY_FUNCTIONS,
  ...HASH_FUNCTIONS,
  ...ENCODE_FUNCTIONS,
  ...BITS_FUNCTIONS,
  ...COMPRESS_FUNCTIONS,
  ...TIME_FUNCTIONS,
  ...MISC_FUNCTIONS,
  ...JQ_FUNCTIONS,
  ...schemaFunctions(),
]);
