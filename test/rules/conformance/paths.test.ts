// EMQX conformance: reading and writing paths (`a.b[1]`, `[1..4]`, `AS a.b[0]`), from
// emqx_rule_engine_SUITE's t_sqlparse_array_* and t_sqlselect_as_put tests. Runner: cases.ts.
import { type ConformanceCase, fails, runFamily } from './cases.js';

const S = 'emqx_rule_engine_SUITE';
const empty = { payload: '', topic: 't/a' };
const on = (payload: unknown) => ({ payload, topic: 't/a' });
const xy = '{"x": [1,{"y": [1,2]},3]}';

export const CASES: ConformanceCase[] = [
  {
    from: `${S}:t_sqlparse_array_index_1`,
    sql: `select json_decode(payload) as p, p[1] as a from "t/#"`,
    input: on('[{"x": 1}]'),
    expect: { a: { x: 1 } },
    partial: true,
  },
  {
    from: `${S}:t_sqlparse_array_index_1`,
    sql: `select json_decode(payload) as p, p[1] as a from "t/#"`,
    input: on('{"x": 1}'),
    expect: { p: { x: 1 }, a: null },
  },
  { from: `${S}:t_sqlparse_array_index_1`, sql: `select payload.x[2] from "t/#"`, input: on({ x: [1, 3, 4] }), expect: { payload: { x: [3] } } },
  {
    from: `${S}:t_sqlparse_array_index_1`,
    sql: `select payload.x[2].y from "t/#"`,
    input: on({ x: [1, { y: 3 }, 4] }),
    expect: { payload: { x: [{ y: 3 }] } },
  },
  { from: `${S}:t_sqlparse_array_index_1`, sql: `select payload.x[2].y as b from "t/#"`, input: on({ x: [1, { y: 3 }, 4] }), expect: { b: 3 } },
  { from: `${S}:t_sqlparse_array_index_2`, sql: `select payload.x[-2].y as b from "t/#"`, input: on({ x: [1, { y: 3 }, 4] }), expect: { b: 3 } },
  {
    from: `${S}:t_sqlparse_array_index_2`,
    sql: `select payload.x as b, 1 as c[-0], 2 as c[-0], b as c[0] from "t/#"`,
    input: on({ x: 0 }),
    expect: { b: 0, c: [0, 1, 2] },
  },
  { from: `${S}:t_sqlparse_array_index_2`, sql: `select [] as c, 1 as c[-0], 2 as c[-0], 0 as c[0] from "t/#"`, input: empty, expect: { c: [0, 1, 2] } },
  {
    from: `${S}:t_sqlparse_array_index_2`,
    sql: `select [payload.a, "topic", 'c'] as c, 1 as c[-0], 2 as c[-0], 0 as c[0] from "t/#"`,
    input: on('{"a":11}'),
    expect: { c: [0, 11, 't/a', 'c', 1, 2] },
  },
  { from: `${S}:t_sqlparse_array_index_3`, sql: `select payload, payload.x[2].y from "t/#"`, input: on(xy), expect: { payload: { x: [1, { y: [1, 2] }, 3] } } },
  { from: `${S}:t_sqlparse_array_index_3`, sql: `select payload.x[2].y as b from "t/#"`, input: on(xy), expect: { b: [1, 2] } },
  { from: `${S}:t_sqlparse_array_index_3`, sql: `select payload.x[2].y as b.c from "t/#"`, input: on(xy), expect: { b: { c: [1, 2] } } },
  { from: `${S}:t_sqlparse_array_index_4`, sql: `select 0 as payload.x[2].y from "t/#"`, input: on(xy), expect: { payload: { x: [{ y: 0 }] } } },
  {
    from: `${S}:t_sqlparse_array_index_4`,
    sql: `select payload.x, 0 as payload.x[2].y from "t/#"`,
    input: on(xy),
    expect: { payload: { x: [1, { y: 0 }, 3] } },
  },
  // EMQX names an unaliased list by a generated key (_v_list_4_<time>); weir by its text. The
  // test asserts only that some field holds the list.
  { from: `${S}:t_sqlparse_array_index_5`, sql: `select [1,2,3,4] from "t/#"`, input: empty, expect: { '[1,2,3,4]': [1, 2, 3, 4] } },
  {
    from: `${S}:t_sqlparse_array_with_expressions`,
    sql: `select [21 + 21, abs(-abs(-2)), [1 + 1], 4] from "t/#"`,
    input: empty,
    expect: { '[21 + 21, abs(-abs(-2)), [1 + 1], 4]': [42, 2, [2], 4] },
  },
  { from: `${S}:t_sqlparse_array_range_1`, sql: `select payload.a[1..4] as c from "t/#"`, input: on('{"a":[0,1,2,3,4,5]}'), expect: { c: [0, 1, 2, 3] } },
  { from: `${S}:t_sqlparse_array_range_1`, sql: `select payload.a[1..4] as c from "t/#"`, input: on('{"x":[0,1,2,3,4,5]}'), expect: fails() },
  {
    from: `${S}:t_sqlparse_array_range_1`,
    sql: `select [1..4] as c, 5 as c[-0], 6 as c[-0], 0 as c[0] from "t/#"`,
    input: empty,
    expect: { c: [0, 1, 2, 3, 4, 5, 6] },
  },
  { from: `${S}:t_sqlparse_array_range_2`, sql: `select [1..4] from "t/#"`, input: empty, expect: { '[1..4]': [1, 2, 3, 4] } },
  {
    from: `${S}:t_sqlparse_array_range_2`,
    sql: `select payload.a[1..4] from "t/#"`,
    input: on('{"a":[0,1,2,3,4,5]}'),
    expect: { payload: { a: [0, 1, 2, 3] } },
  },
  {
    from: `${S}:t_sqlselect_as_put`,
    sql: `select payload, 'STEVE' as payload.data[1].name from "t/#"`,
    input: on({
      f1: 'f1',
      f2: 'f2',
      data: [
        { name: 'n1', idx: 1 },
        { name: 'n2', idx: 2 },
      ],
    }),
    expect: {
      payload: {
        f1: 'f1',
        f2: 'f2',
        data: [
          { name: 'STEVE', idx: 1 },
          { name: 'n2', idx: 2 },
        ],
      },
    },
  },
];

await runFamily('paths', CASES);
