// EMQX conformance: SELECT, WHERE and operators, from emqx_rule_engine_SUITE's t_sqlselect_* tests
// (publish events only). Runner and case shape: cases.ts.
import { type ConformanceCase, runFamily } from './cases.js';

const cmd = { payload: '{"cmd": {"info":"tt"}}', topic: 't/a' };
const empty = { payload: '', topic: 't/a' };

export const CASES: ConformanceCase[] = [
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_0', sql: `select * from "t/#" where payload.cmd.info = 'tt'`, input: cmd, expect: { payload: '{"cmd": {"info":"tt"}}' }, partial: true },
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_0', sql: `select payload.cmd as cmd from "t/#" where cmd.info = 'tt'`, input: cmd, expect: { cmd: { info: 'tt' } } },
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_0', sql: `select payload.cmd as cmd, cmd.info as info from "t/#" where cmd.info = 'tt' and info = 'tt'`, input: cmd, expect: { cmd: { info: 'tt' }, info: 'tt' } },
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_0', sql: `select payload.cmd as cmd, cmd.info as meta.info from "t/#" where cmd.info = 'tt' and meta.info = 'tt'`, input: cmd, expect: { cmd: { info: 'tt' }, meta: { info: 'tt' } } },
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_00', sql: `select 1-1 as a from "t/#"`, input: empty, expect: { a: 0 } },
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_00', sql: `select -1 + 1 as a from "t/#"`, input: empty, expect: { a: 0 } },
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_00', sql: `select 1 + 1 as a from "t/#"`, input: empty, expect: { a: 2 } },
  { from: 'emqx_rule_engine_SUITE:t_sqlselect_00', sql: `select +1 as a from "t/#"`, input: empty, expect: { a: 1 } },
];

await runFamily('sql-select', CASES);
