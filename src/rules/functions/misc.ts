// UUIDs, coalesce, null(), eq(), and jsonata() (JSONata beside EMQX's jq()).
import { randomUUID } from 'node:crypto';
import { jsonataCall } from '../compile/jsonata.js';
import { termEquals } from '../values/term-order.js';
import { isBinary, text } from '../values/value-types.js';
import { def, type FunctionSpec } from './registry.js';

function coalesce(empty: (v: unknown) => boolean) {
  return (...args: unknown[]): unknown => {
    // coalesce([a, b, …]) with one array argument, or coalesce(a, b, …).
    const list = args.length === 1 && Array.isArray(args[0]) ? args[0] : args;
    for (const v of list) if (!empty(v)) return v;
    return undefined;
  };
}

// As EMQX: only undefined is skipped, JSON null is a value (coalesce([null, 1]) is null).
const isNull = (v: unknown): boolean => v === undefined;
const isNullOrEmpty = (v: unknown): boolean => isNull(v) || (isBinary(v) && text(v) === '');

export const MISC_FUNCTIONS: FunctionSpec[] = [
  ...def('misc', 'uuid_v4(): string', 'A random UUID.', () => randomUUID(), { volatile: true, examples: [{ call: 'strlen(uuid_v4())', result: 36 }] }),
  ...def('misc', 'uuid_v4_no_hyphen(): string', 'A random UUID without hyphens.', () => randomUUID().replace(/-/g, ''), {
    volatile: true,
    examples: [{ call: 'strlen(uuid_v4_no_hyphen())', result: 32 }],
  }),
  ...def(
    'misc',
    'coalesce(any, any?...): any',
    'The first argument (or element of one array argument) that is not undefined; JSON null is a value, as in EMQX.',
    coalesce(isNull),
    {
      examples: [
        { call: 'coalesce(payload.value, 0)', result: 0 },
        { call: 'coalesce(payload.nope, payload.x)', result: 1 },
        { call: 'coalesce([payload.nope, 2])', result: 2 },
        { call: 'coalesce(payload.n, 1)', result: null },
      ],
    },
  ),
  ...def('misc', 'coalesce_ne(any, any?...): any', 'Like coalesce, also skipping empty strings.', coalesce(isNullOrEmpty), {
    examples: [
      { call: "coalesce_ne('', 'x')", result: 'x' },
      { call: "coalesce_ne(['', 42, payload.nope])", result: 42 },
    ],
  }),
  ...def('misc', 'null(): any', 'The undefined value (a field set to it is left out).', () => undefined, {
    examples: [{ call: 'is_null(null())', result: true }],
  }),
  ...def('misc', 'eq(any, any): bool', 'Erlang equality of two values (no string/number conversion).', (a: unknown, b: unknown) => termEquals(a, b), {
    examples: [
      { call: "eq(1, '1')", result: false },
      { call: 'eq([1], [1])', result: true },
    ],
  }),
  ...def('jsonata', 'jsonata(string, any): any', "Evaluates a JSONata expression over a value (weir's jq). Makes the rule asynchronous.", jsonataCall, {
    async: true,
    examples: [
      { call: "jsonata('$sum(arr)', payload)", result: 6 },
      { call: 'jsonata(\'$uppercase(name)\', json_decode(\'{"name":"ab"}\'))', result: 'AB' },
    ],
  }),
];
