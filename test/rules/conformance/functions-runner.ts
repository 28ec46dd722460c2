// One function call as a conformance case (the case shape and runner are cases.ts's): the function
// families restate emqx_rule_funcs_SUITE and emqx_variform_bif_tests call by call.
import { Fails, type ConformanceCase } from './cases.js';

export { fails, float, runFamily, type ConformanceCase } from './cases.js';

/**
 * One function call as a case: `SELECT <expr> AS r FROM "t/1"`, the payload (a JSON value, so
 * arguments with newlines or non-ASCII text need no SQL escapes) read as payload.x in `expr`.
 */
export function call(from: string, expr: string, expect: unknown, payload?: unknown): ConformanceCase {
  return {
    from,
    sql: `SELECT ${expr} AS r FROM "t/1"`,
    input: { topic: 't/1', ...(payload === undefined ? {} : { payload }) },
    expect: expect instanceof Fails ? expect : { r: expect },
  };
}
