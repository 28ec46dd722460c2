// EMQX conformance: integers and floats are different values (`2.0` is a float, `4 / 2` is 2.0,
// a payload's `20.0` stays a float), from emqx_rule_funcs_SUITE's type and arithmetic tests and
// emqx_rule_engine_SUITE's arithmetic, restated as SQL through `weir eval`. Runner: cases.ts.
import { type ConformanceCase, float, runFamily } from './cases.js';

const F = 'emqx_rule_funcs_SUITE';
const empty = { payload: '', topic: 't/a' };
const one = (from: string, expr: string, r: unknown): ConformanceCase => ({
  from: `${F}:${from}`,
  sql: `select ${expr} as r from "t/#"`,
  input: empty,
  expect: { r },
});

export const CASES: ConformanceCase[] = [
  one('t_str', 'str(2.0)', '2.0'),
  one('t_str', 'str_utf8(2.0)', '2.0'),
  one('t_str', 'str(1.5)', '1.5'),
  one('t_int', "int('1.0')", 1),
  one('t_float', "float('1.0')", float(1)),
  one('t_float', 'float(1)', float(1)),
  one('t_float', 'float(1.0)', float(1)),
  one('t_float', 'float(1.9)', 1.9),
  one('t_float', 'float(1.0001)', 1.0001),
  one('t_float', 'str(float(1))', '1.0'),
  one('t_bool', 'bool(1.0)', true),
  ...['1.1', '2.0', '-1.2'].map((x) => one('t_is_float', `is_float(${x})`, true)),
  one('t_is_float', 'is_float(1)', false),
  ...['1.1', '2.0', '-1.2', '1'].map((x) => one('t_is_num', `is_num(${x})`, true)),
  one('t_is_int', 'is_int(2.0)', false),
  one('t_arith_op', '4 / 2', float(2)),
  one('t_arith_op', '1 + 1.0', float(2)),
  one('t_arith_op', '3 * 2', 6),
  one('t_arith_op', '2.5 * 2', float(5)),
  one('t_arith_op', '1.5 - 0.5', float(1)),
  one('t_arith_op', '1.5 + 0.5', float(2)),
  one('t_arith_op', '1 + 1', 2),
  one('t_arith_op', '2.0 = 2', true),
  one('t_arith_op', '-2.0', float(-2)),
  {
    from: `${F}:t_is_float`,
    sql: `select payload.x as x, is_float(payload.x) as f, str(payload.x) as s from "t/#"`,
    input: { payload: '{"x": 20.0}', topic: 't/a' },
    expect: { x: float(20), f: true, s: '20.0' },
  },
  {
    from: `${F}:t_is_float`,
    sql: `select payload.x as x, is_float(payload.x) as f, str(payload.x) as s from "t/#"`,
    input: { payload: '{"x": 20}', topic: 't/a' },
    expect: { x: 20, f: false, s: '20' },
  },
  {
    from: `${F}:t_is_float`,
    sql: `select payload from "t/#" where payload.x = 20`,
    input: { payload: '{"x": 2e1}', topic: 't/a' },
    expect: { payload: '{"x": 2e1}' },
  },
  {
    from: `${F}:t_is_float`,
    sql: `select json_decode(payload) as p from "t/#"`,
    input: { payload: '{"a": [1.0, 2, "3.0"]}', topic: 't/a' },
    expect: { p: { a: [float(1), 2, '3.0'] } },
  },
  // A float is no map: a key below it is undefined (the box's own field is not data).
  { from: `${F}:t_is_float`, sql: `select payload.x.value as v from "t/#"`, input: { payload: '{"x": 2.0}', topic: 't/a' }, expect: { v: null } },
];

await runFamily('numbers', CASES);
