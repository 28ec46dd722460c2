// EMQX conformance: emqx_rule_maps_SUITE (nested_get/nested_put, the path walker under every
// `a.b[1]` read and `AS a.b[1]` write), restated as SQL over a payload or over selected fields.
// Its Erlang-only inputs (atom keys, a path that starts with an index, const 0 as an index) are
// listed in docs/rules.md. Runner and case shape: cases.ts.
import { type ConformanceCase, runFamily } from './cases.js';

const M = 'emqx_rule_maps_SUITE';
const on = (payload: unknown) => ({ payload: JSON.stringify(payload), topic: 't/a' });
const get = (test: string, path: string, payload: unknown, r: unknown): ConformanceCase => ({
  from: `${M}:${test}`,
  sql: `select payload${path} as r from "t/#"`,
  input: on(payload),
  expect: { r },
});
const put = (test: string, path: string, payload: unknown, result: unknown): ConformanceCase => ({
  from: `${M}:${test}`,
  sql: `select payload, 'a' as payload${path} from "t/#"`,
  input: on(payload),
  expect: { payload: result },
});
const sel = (test: string, sql: string, expect: unknown): ConformanceCase => ({
  from: `${M}:${test}`,
  sql: `select ${sql} from "t/#"`,
  input: { payload: '', topic: 't/a' },
  expect,
});
const abc = { a: { b: { c: 'c' } } };
const roman = [1, ['a', 'b', ['I', 'II', 'III']], 3];
const mixed = [1, { a: 'a', b: 'b', c: ['I', 'II', 'III'] }, 3];
const mixedD = [1, { a: 'a', b: 'b', c: { d: 'I' } }, 3];

export const CASES: ConformanceCase[] = [
  get('t_nested_get_map', '.a', 'not_map', null),
  get('t_nested_get_map', '.a.b.c', 'not_map', null),
  get('t_nested_get_map', '.a.b.c', {}, null),
  get('t_nested_get_map', '.a.b.c', { a: {} }, null),
  get('t_nested_get_map', '.a.b.c', { a: { b: {} } }, null),
  get('t_nested_get_map', '.a', { a: { b: 'c' } }, { b: 'c' }),
  get('t_nested_get_map', '.a.b.c', abc, 'c'),
  get('t_nested_get_map_1', '.a', { a: 1 }, 1),
  get('t_nested_get_map_1', '.a', { a: '{"b": 1}' }, '{"b": 1}'),
  get('t_nested_get_map_1', '.a.b', { a: '{"b": 1}' }, 1),
  ...[
    [1, 1],
    [2, 2],
    [3, 3],
    [0, null],
    [4, null],
    [-1, 3],
    [-2, 2],
    [-3, 1],
    [-4, null],
  ].map(([i, r]) => get(i! < 0 ? 't_nested_get_negative_index' : 't_nested_get_index', `[${i}]`, [1, 2, 3], r)),
  get('t_nested_get_index', '[2][3]', [1, ['a', 'b', 'c'], 3], 'c'),
  get('t_nested_get_index', '[2][3][1]', roman, 'I'),
  get('t_nested_get_index', '[2][1][1]', roman, null),
  get('t_nested_get_mix_map_index', '.a[1]', { a: [1, 2, 3] }, 1),
  get('t_nested_get_mix_map_index', '[2].a', [1, { a: 2 }, 3], 2),
  get('t_nested_get_mix_map_index', '.a[0]', { a: [1, 2, 3] }, null),
  get('t_nested_get_mix_map_index', '.b[1]', { a: [1, 2, 3] }, null),
  get('t_nested_get_mix_map_index', '[4].a', [1, 2, 3, 4], null),
  get('t_nested_get_mix_map_index', '.a[2][3]', { a: [1, ['a', 'b', 'c'], 3] }, 'c'),
  get('t_nested_get_mix_map_index', '[2].c[1]', mixed, 'I'),
  get('t_nested_get_mix_map_index', '[2].c.d', mixedD, 'I'),
  get('t_nested_get_mix_map_index', '[2].c.e', mixedD, null),
  // A variable index is read from the data the path walks (EMQX's OrgData): here the payload.
  get('t_nested_get_mix_map_index', '.a[b]', { a: [1, 2, 3], b: 1 }, 1),
  get('t_nested_get_mix_map_index', '.a[c]', { a: [1, 2, 3], b: 1 }, null),
  get('t_nested_get_mix_map_index', '.a[b]', { a: [1, 2, 3], b: 4 }, null),
  get('t_nested_get_mix_map_index', '.a[b[1].c]', { a: [1, 2, 3], b: [{ c: 3 }] }, 3),
  get('t_nested_get_mix_map_index', '.a[b[1].c]', { a: [1, 2, 3], b: [{ c: 4 }] }, null),
  get('t_nested_get_mix_map_index', '.a[b[2].c]', { a: [1, 2, 3], b: [{ c: 3 }] }, null),
  put('t_nested_put_index', '[2]', [1, 2, 3], [1, 'a', 3]),
  put('t_nested_put_index', '[4]', [1, 2, 3], [1, 2, 3]),
  put('t_nested_put_index', '[2][1]', [1, [2], 3], [1, ['a'], 3]),
  put('t_nested_put_index', '[2][1][1]', [1, [[2]], 3], [1, [['a']], 3]),
  put('t_nested_put_index', '[2][1][2]', [1, [[2]], 3], [1, [[2]], 3]),
  put('t_nested_put_index', '[0]', [], ['a']),
  put('t_nested_put_index', '[0]', [1, 2, 3], ['a', 1, 2, 3]),
  put('t_nested_put_index', '[-0]', [], ['a']),
  put('t_nested_put_index', '[-0]', [1, 2, 3], [1, 2, 3, 'a']),
  sel('t_nested_put_index', `'a' as l[0]`, { l: ['a'] }),
  sel('t_nested_put_index', `'a' as l[-0]`, { l: ['a'] }),
  put('t_nested_put_negative_index', '[-1]', [1, 2, 3], [1, 2, 'a']),
  put('t_nested_put_negative_index', '[-2]', [1, 2, 3], [1, 'a', 3]),
  put('t_nested_put_negative_index', '[-3]', [1, 2, 3], ['a', 2, 3]),
  put('t_nested_put_negative_index', '[-4]', [1, 2, 3], [1, 2, 3]),
  put('t_nested_put_mix_map_index', '.a[2]', {}, { a: ['a'] }),
  sel('t_nested_put_mix_map_index', `0 as x.a[2].b`, { x: { a: [{ b: 0 }] } }),
  put('t_nested_put_mix_map_index', '.a[2]', { a: [1, 2, 3] }, { a: [1, 'a', 3] }),
  put('t_nested_put_mix_map_index', '[2].a', [1, { a: 'b' }, 3], [1, { a: 'a' }, 3]),
  put('t_nested_put_mix_map_index', '[2].a[1]', [1, { a: ['b'] }, 3], [1, { a: ['a'] }, 3]),
  // A variable index in an alias is read from the record being written (EMQX's OrgData).
  sel('t_nested_put_mix_map_index', `[1, 2, 3] as a, 2 as b, 'a' as a[b]`, { a: [1, 'a', 3], b: 2 }),
  sel('t_nested_put_mix_map_index', `[1, 2, 3] as a, 2 as b, 'a' as a[c]`, { a: [1, 2, 3], b: 2 }),
  put('t_nested_put_mix_map_index', '.a[0].c', { a: [1, 2, 3] }, { a: [{ c: 'a' }, 1, 2, 3] }),
  sel('t_nested_put_map', `1 as a`, { a: 1 }),
  sel('t_nested_put_map', `'b' as a.b`, { a: { b: 'b' } }),
  sel('t_nested_put_map', `'c' as a.b.c`, { a: { b: { c: 'c' } } }),
  sel('t_nested_put_map', `'v0' as k, 'v1' as k`, { k: 'v1' }),
  sel('t_nested_put_map', `'v0' as k, 'b' as a, 'v1' as k`, { k: 'v1', a: 'b' }),
  sel('t_nested_put_map', `map_put('t', 'v0', map_new()) as k, 'v1' as k.t`, { k: { t: 'v1' } }),
  sel('t_nested_put_map', `null() as a`, { a: null }),
  // Writing below a key that holds JSON text reads through it but keeps only the path written.
  sel('t_nested_put_map', `'{"b": "v2"}' as p, 'v1' as p.a`, { p: { a: 'v1' } }),
  sel('t_nested_put_map', `'{"a": {"old": "v2"}}' as p, 'v1' as p.a.new`, { p: { a: { new: 'v1', old: 'v2' } } }),
  sel('t_nested_put_map', `'{}' as p, 'v1' as p.a.new`, { p: { a: { new: 'v1' } } }),
];

await runFamily('maps', CASES);
