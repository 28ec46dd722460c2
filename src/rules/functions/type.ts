// Type tests and conversions (EMQX's is_* and str/int/float/bool/map). Integers and floats are
// different values: `2.0` is a float (floats.ts).
import { decodeJson } from '../compile/context.js';
import { RuleEvalError } from '../errors.js';
import { float, isFloat, isInteger, isNumber, numberValue, type WholeFloat } from '../values/floats.js';
import { parseNumber } from '../values/number-text.js';
import { toStr } from '../values/to-str.js';
import { isBinary, isObj, text, typeError } from '../values/value-types.js';
import { needInt, needNum } from './args.js';
import { def, type FunctionSpec } from './registry.js';

const is = (sig: string, summary: string, f: (v: unknown) => boolean, examples: FunctionSpec['examples']): FunctionSpec[] =>
  def('type', sig, summary, f, { examples });

function toBool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  const n = numberValue(v);
  if (n === 1) return true;
  if (n === 0) return false;
  if (isBinary(v)) {
    const s = text(v);
    if (s === 'true') return true;
    if (s === 'false') return false;
  }
  throw typeError('bool', v);
}

function toInt(v: unknown): number {
  const n = numberValue(v);
  if (n !== undefined) return Math.trunc(n);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (isBinary(v)) return Math.trunc(numberValue(parseNumber(text(v))) as number);
  throw typeError('int', v);
}

function toFloat(v: unknown): number | WholeFloat {
  const n = numberValue(v);
  if (n !== undefined) return float(n);
  if (isBinary(v)) return float(numberValue(parseNumber(text(v))) as number);
  throw typeError('float', v);
}

/** float_to_binary(F, [{decimals, P}, compact]): at most P decimals, trailing zeros dropped. */
export function floatToStr(x: number, decimals: number): string {
  if (decimals < 0 || decimals > 253) throw new RuleEvalError('rule.bad_argument', 'float2str: precision must be 0..253');
  let s = x.toFixed(Math.min(decimals, 100));
  if (s.includes('.')) {
    s = s.replace(/0+$/, '');
    if (s.endsWith('.')) s += '0';
  } else {
    s += '.0';
  }
  return s;
}

/** EMQX's map(): a map, a JSON object string, or a list of [key, value] pairs. */
export function toMap(v: unknown): Record<string, unknown> {
  if (isObj(v)) return v;
  if (isBinary(v)) {
    const d = decodeJson(text(v));
    if (isObj(d)) return d;
  }
  if (Array.isArray(v)) {
    // A list of [key, value] pairs (Erlang's proplist).
    const out: Record<string, unknown> = {};
    for (const pair of v) {
      if (!Array.isArray(pair) || pair.length !== 2 || !isBinary(pair[0])) throw typeError('map', v);
      out[text(pair[0])] = pair[1];
    }
    return out;
  }
  throw typeError('map', v);
}

/** EMQX's is_empty: [] and <<>> are empty, any other list is not, anything else by its map's size. */
function isEmpty(v: unknown): boolean {
  if (Array.isArray(v)) return v.length === 0;
  if (isBinary(v) && (typeof v === 'string' ? v.length === 0 : v.byteLength === 0)) return true;
  return Object.keys(toMap(v)).length === 0;
}

export const TYPE_FUNCTIONS: FunctionSpec[] = [
  ...is('is_null(any): bool', 'True when the value is undefined (absent). JSON null is a value: use is_null_var.', (v) => v === undefined, [
    { call: 'is_null(payload.nope)', result: true },
    { call: 'is_null(payload.n)', result: false },
  ]),
  ...is('is_null_var(any): bool', 'True when the value is undefined or JSON null.', (v) => v === undefined || v === null, [
    { call: 'is_null_var(payload.n)', result: true },
  ]),
  ...is('is_not_null(any): bool', 'Not is_null.', (v) => v !== undefined, [{ call: 'is_not_null(1)', result: true }]),
  ...is('is_not_null_var(any): bool', 'Not is_null_var.', (v) => v !== undefined && v !== null, [{ call: 'is_not_null_var(payload.n)', result: false }]),
  ...is('is_str(any): bool', 'A string (or byte string).', isBinary, [
    { call: 'is_str(1)', result: false },
    { call: "is_str('val')", result: true },
  ]),
  ...is('is_bool(any): bool', 'A boolean.', (v) => typeof v === 'boolean', [{ call: 'is_bool(true)', result: true }]),
  ...is('is_int(any): bool', 'An integer.', isInteger, [
    { call: 'is_int(1)', result: true },
    { call: 'is_int(2.0)', result: false },
  ]),
  ...is('is_float(any): bool', 'A float (2.0 included).', isFloat, [
    { call: 'is_float(1)', result: false },
    { call: 'is_float(1.234)', result: true },
    { call: 'is_float(2.0)', result: true },
  ]),
  ...is('is_num(any): bool', 'A number.', isNumber, [
    { call: 'is_num(2.3)', result: true },
    { call: "is_num('val')", result: false },
  ]),
  ...is('is_map(any): bool', 'A map (JSON object).', isObj, [{ call: 'is_map(payload.a)', result: true }]),
  ...is('is_array(any): bool', 'An array.', Array.isArray, [{ call: 'is_array([1])', result: true }]),
  ...def('type', 'str(any): string', 'Any value as a string (maps and arrays as JSON).', toStr, {
    examples: [
      { call: 'str(1234)', result: '1234' },
      { call: 'str(1.5)', result: '1.5' },
      { call: 'str(2.0)', result: '2.0' },
      { call: 'str(true)', result: 'true' },
    ],
  }),
  ...def(
    'type',
    'str_utf16_le(any): binary',
    'Any value as text (as str), encoded as UTF-16 little-endian bytes.',
    (v: unknown) => Buffer.from(toStr(v), 'utf16le'),
    {
      examples: [
        { call: "bin2hexstr(str_utf16_le('abc'))", result: '610062006300' },
        { call: 'bin2hexstr(str_utf16_le(1))', result: '3100' },
      ],
    },
  ),
  ...is('is_empty(any): bool', 'An empty array, empty string, or a map (or map() of the value) without keys.', isEmpty, [
    { call: 'is_empty(map_new())', result: true },
    { call: "is_empty('{}')", result: true },
    { call: 'is_empty([1])', result: false },
    { call: 'is_empty(payload.a)', result: false },
  ]),
  ...def('type', 'str_utf8(any): string', 'Same as str (strings are UTF-8).', toStr, { examples: [{ call: 'str_utf8(1234)', result: '1234' }] }),
  ...def('type', 'bool(any): bool', "true/false, 'true'/'false' or 1/0 as a boolean.", toBool, {
    examples: [
      { call: "bool('true')", result: true },
      { call: 'bool(0)', result: false },
      { call: "bool('x')", error: true },
    ],
  }),
  ...def('type', 'int(any): int', 'A number (truncated), a numeric string or a boolean as an integer.', toInt, {
    examples: [
      { call: "int('1234')", result: 1234 },
      { call: 'int(3.9)', result: 3 },
      { call: "int('x')", error: true },
    ],
  }),
  ...def(
    'type',
    'float(any, int?): float',
    'A number or numeric string as a float, optionally rounded to n decimals.',
    (v: unknown, d?: unknown) => {
      const f = toFloat(v);
      if (d === undefined) return f;
      const n = needInt('float', d);
      if (n <= 0) throw typeError('float', d);
      return float(Number((numberValue(f) as number).toFixed(Math.min(n, 100))));
    },
    {
      examples: [
        { call: "float('3.14')", result: 3.14 },
        { call: 'float(3.14159, 2)', result: 3.14 },
        { call: 'str(float(1))', result: '1.0' },
      ],
    },
  ),
  ...def(
    'type',
    'float2str(number, int): string',
    'A float as text with at most n decimals.',
    (x: unknown, p: unknown) => floatToStr(needNum('float2str', x), needInt('float2str', p)),
    {
      examples: [{ call: 'float2str(20.2, 10)', result: '20.2' }],
    },
  ),
  ...def('type', 'map(any): map', 'A map, a JSON object string or a list of [key, value] pairs as a map.', toMap, {
    examples: [{ call: 'map(\'{"a":1}\')', result: { a: 1 } }],
  }),
];
