// Array functions. Positions are 1-based; out-of-range positions fail the evaluation, as
// Erlang's lists functions do.
import { RuleEvalError } from '../errors.js';
import { termEquals } from '../values/term-order.js';
import { needInt, needList } from './args.js';
import { def, type FunctionSpec } from './registry.js';

function outOfRange(fn: string, n: number, len: number): RuleEvalError {
  return new RuleEvalError('rule.bad_index', `${fn}: position ${n} out of range for an array of ${len}`);
}

export const ARRAY_FUNCTIONS: FunctionSpec[] = [
  ...def(
    'array',
    'nth(int, array): any',
    'The n-th element (1-based).',
    (n: unknown, l: unknown) => {
      const i = needInt('nth', n);
      const list = needList('nth', l);
      if (i < 1 || i > list.length) throw outOfRange('nth', i, list.length);
      return list[i - 1];
    },
    {
      examples: [
        { call: 'nth(2, [1,2,3,4])', result: 2 },
        { call: 'nth(5, [1,2,3,4])', error: true },
      ],
    },
  ),
  ...def('array', 'length(array): int', 'Number of elements.', (l: unknown) => needList('length', l).length, {
    examples: [{ call: 'length([1,2,3,4])', result: 4 }],
  }),
  ...def(
    'array',
    'sublist(int, array | int, array?): array',
    'sublist(len, list): the first len elements; sublist(start, len, list): len elements from start (1-based).',
    (a: unknown, b: unknown, c?: unknown) => {
      if (c === undefined) {
        const len = needInt('sublist', a);
        if (len < 0) throw outOfRange('sublist', len, 0);
        return needList('sublist', b).slice(0, len);
      }
      const start = needInt('sublist', a);
      const len = needInt('sublist', b);
      const list = needList('sublist', c);
      if (start < 1 || start > list.length + 1 || len < 0) throw outOfRange('sublist', start, list.length);
      return list.slice(start - 1, start - 1 + len);
    },
    {
      examples: [
        { call: 'sublist(3, [1,2,3,4])', result: [1, 2, 3] },
        { call: 'sublist(1, 2, [1,2,3,4])', result: [1, 2] },
        { call: 'sublist(2, 9, [1,2,3])', result: [2, 3] },
      ],
    },
  ),
  ...def(
    'array',
    'first(array): any',
    'The first element (an empty array is an error).',
    (l: unknown) => {
      const list = needList('first', l);
      if (list.length === 0) throw outOfRange('first', 1, 0);
      return list[0];
    },
    { examples: [{ call: 'first([1,2,3,4])', result: 1 }] },
  ),
  ...def(
    'array',
    'last(array): any',
    'The last element (an empty array is an error).',
    (l: unknown) => {
      const list = needList('last', l);
      if (list.length === 0) throw outOfRange('last', 1, 0);
      return list[list.length - 1];
    },
    { examples: [{ call: 'last([1,2,3,4])', result: 4 }] },
  ),
  ...def(
    'array',
    'contains(any, array): bool',
    'Whether the array holds the value.',
    (v: unknown, l: unknown) => needList('contains', l).some((x) => termEquals(x, v)),
    {
      examples: [
        { call: 'contains(2, [1,2,3,4])', result: true },
        { call: "contains('x', [1])", result: false },
      ],
    },
  ),
];
