// EMQX conformance: SELECT, WHERE, CASE and operators, from emqx_rule_engine_SUITE's
// t_sqlselect_* and t_sqlparse_* tests over publish events. Runner and case shape: cases.ts.
import { type ConformanceCase, fails, NO_MATCH, runFamily } from './cases.js';

const S = 'emqx_rule_engine_SUITE';
const cmd = { payload: '{"cmd": {"info":"tt"}}', topic: 't/a' };
const empty = { payload: '', topic: 't/a' };
const x = (n: number) => ({ payload: `{"x": ${n}}`, topic: 't/a' });
const caseWhen = `select case when payload.x < 0 then 0 when payload.x > 7 then 7 else payload.x end as y from "t/#"`;
const caseSwitch = `select case payload.x when 1 then 2 when 2 then 3 else 4 end as y from "t/#"`;
const caseNoElse = `select case when payload.x < 0 then 0 when payload.x > 7 then 7 end as y from "t/#"`;
const decodeWhere = `SELECT json_decode(payload) as p, payload FROM "t3/#", "t1" WHERE p.x = 1`;
const payloadAs = `SELECT payload, map_get('engineWorkTime', payload.params, -1) as payload.params.engineWorkTime, map_get('hydOilTem', payload.params, -1) as payload.params.hydOilTem FROM "t/#"`;

export const CASES: ConformanceCase[] = [
  {
    from: `${S}:t_sqlselect_0`,
    sql: `select * from "t/#" where payload.cmd.info = 'tt'`,
    input: cmd,
    expect: { payload: '{"cmd": {"info":"tt"}}' },
    partial: true,
  },
  { from: `${S}:t_sqlselect_0`, sql: `select payload.cmd as cmd from "t/#" where cmd.info = 'tt'`, input: cmd, expect: { cmd: { info: 'tt' } } },
  {
    from: `${S}:t_sqlselect_0`,
    sql: `select payload.cmd as cmd, cmd.info as info from "t/#" where cmd.info = 'tt' and info = 'tt'`,
    input: cmd,
    expect: { cmd: { info: 'tt' }, info: 'tt' },
  },
  {
    from: `${S}:t_sqlselect_0`,
    sql: `select payload.cmd as cmd, cmd.info as meta.info from "t/#" where cmd.info = 'tt' and meta.info = 'tt'`,
    input: cmd,
    expect: { cmd: { info: 'tt' }, meta: { info: 'tt' } },
  },
  { from: `${S}:t_sqlselect_00`, sql: `select 1-1 as a from "t/#"`, input: empty, expect: { a: 0 } },
  { from: `${S}:t_sqlselect_00`, sql: `select -1 + 1 as a from "t/#"`, input: empty, expect: { a: 0 } },
  { from: `${S}:t_sqlselect_00`, sql: `select 1 + 1 as a from "t/#"`, input: empty, expect: { a: 2 } },
  { from: `${S}:t_sqlselect_00`, sql: `select +1 as a from "t/#"`, input: empty, expect: { a: 1 } },
  {
    from: `${S}:t_sqlselect_002`,
    sql: `select 2 mod 2 as mod1, mod(3, 2) as mod2, 4 div 2 as div1, div(7, 2) as div2 from "t/#"`,
    input: { payload: { what: 4 }, topic: 't/a' },
    expect: { mod1: 0, mod2: 1, div1: 2, div2: 3 },
  },
  { from: `${S}:t_sqlselect_01`, sql: decodeWhere, input: { payload: '{"x":1}', topic: 't1' }, expect: { p: { x: 1 }, payload: '{"x":1}' } },
  { from: `${S}:t_sqlselect_01`, sql: decodeWhere, input: { payload: '{"x":2}', topic: 't1' }, expect: NO_MATCH },
  { from: `${S}:t_sqlselect_01`, sql: decodeWhere, input: { payload: '{"x":1}', topic: 't3/a' }, expect: { p: { x: 1 }, payload: '{"x":1}' } },
  {
    from: `${S}:t_sqlselect_02`,
    sql: `SELECT * FROM "t3/#", "t1" WHERE payload.x = 1`,
    input: { payload: '{"x":1}', topic: 't1' },
    expect: { payload: '{"x":1}', topic: 't1' },
    partial: true,
  },
  { from: `${S}:t_sqlselect_02`, sql: `SELECT * FROM "t3/#", "t1" WHERE payload.x = 1`, input: { payload: '{"x":2}', topic: 't1' }, expect: NO_MATCH },
  {
    from: `${S}:t_sqlselect_02`,
    sql: `SELECT * FROM "t3/#", "t1" WHERE payload.x = 1`,
    input: { payload: '{"x":1}', topic: 't3/a' },
    expect: { payload: '{"x":1}', topic: 't3/a' },
    partial: true,
  },
  {
    from: `${S}:t_sqlselect_1`,
    sql: `SELECT json_decode(payload) as p, payload FROM "t1" WHERE p.x = 1 and p.y = 2`,
    input: { payload: '{"x":1,"y":2}', topic: 't1' },
    expect: { p: { x: 1, y: 2 }, payload: '{"x":1,"y":2}' },
  },
  {
    from: `${S}:t_sqlselect_1`,
    sql: `SELECT json_decode(payload) as p, payload FROM "t1" WHERE p.x = 1 and p.y = 2`,
    input: { payload: '{"x":1,"y":1}', topic: 't1' },
    expect: NO_MATCH,
  },
  {
    from: `${S}:t_sqlselect_message_publish_event_keep_original_props_2`,
    sql: `SELECT clientid, pub_props.'User-Property' as user_properties FROM "foo/#"`,
    input: { payload: '{"x":1}', topic: 'foo/bar/1', clientid: 'pub-02', pub_props: { 'User-Property': { mykey: '222222222222' } } },
    expect: { clientid: 'pub-02', user_properties: { mykey: '222222222222' } },
  },
  // The EMQX test adds "$events/client_connected" to FROM; weir sees no events (docs/rules.md).
  {
    from: `${S}:t_sqlparse_event_3`,
    sql: `select clientid, topic as tp from "t/tt"`,
    input: { payload: '', topic: 't/tt', clientid: 'abc' },
    expect: { clientid: 'abc', tp: 't/tt' },
  },
  // The EMQX test adds "$events/client_connected" to FROM; weir sees no events (docs/rules.md).
  {
    from: `${S}:t_sqlparse_both_string_types_in_from`,
    sql: `select clientid, topic as tp from 't/tt'`,
    input: { payload: '', topic: 't/tt', clientid: 'abc' },
    expect: { clientid: 'abc', tp: 't/tt' },
  },
  ...[
    [1, 1],
    [0, 0],
    [-1, 0],
    [7, 7],
    [8, 7],
  ].map(([i, o]): ConformanceCase => ({ from: `${S}:t_sqlparse_case_when_1`, sql: caseWhen, input: x(i!), expect: { y: o } })),
  ...[
    [1, 2],
    [2, 3],
    [4, 4],
    [7, 4],
    [8, 4],
  ].map(([i, o]): ConformanceCase => ({ from: `${S}:t_sqlparse_case_when_2`, sql: caseSwitch, input: x(i!), expect: { y: o } })),
  // EMQX asserts #{} for the CASE without a match; its y is then undefined, still a field.
  ...[
    [1, null],
    [5, null],
    [0, null],
    [-1, 0],
    [7, null],
    [8, 7],
  ].map(([i, o]): ConformanceCase => ({ from: `${S}:t_sqlparse_case_when_3`, sql: caseNoElse, input: x(i!), expect: { y: o } })),
  { from: `${S}:t_sqlparse_select_matadata_1`, sql: `select payload from "t/#"`, input: { payload: 'abc', topic: 't/a' }, expect: { payload: 'abc' } },
  {
    from: `${S}:t_sqlparse_select_matadata_1`,
    sql: `select payload, metadata from "t/#"`,
    input: { payload: 'abc', topic: 't/a' },
    expect: { payload: 'abc', metadata: { rule_id: 'conformance' } },
  },
  {
    from: `${S}:t_sqlparse_true_false`,
    sql: `select true as a, false as b, false as x.y, true as c[-0] from "t/#"`,
    input: empty,
    expect: { a: true, b: false, x: { y: false }, c: [true] },
  },
  { from: `${S}:t_sqlparse_undefined_variable`, sql: `select a, b from "t/#" where a = b`, input: empty, expect: { a: null, b: null } },
  { from: `${S}:t_sqlparse_undefined_variable`, sql: `select a, b from "t/#" where a > b`, input: { payload: '{"b":1}', topic: 't/a' }, expect: NO_MATCH },
  { from: `${S}:t_sqlparse_undefined_variable`, sql: `select a < b as c from "t/#"`, input: { payload: '{"b":1}', topic: 't/a' }, expect: { c: false } },
  {
    from: `${S}:t_sqlparse_new_map`,
    sql: `select map_new() as a, map_new() as b, map_new() as x.y, map_new() as c[-0] from "t/#"`,
    input: empty,
    expect: { a: {}, b: {}, x: { y: {} }, c: [{}] },
  },
  {
    from: `${S}:t_sqlparse_payload_as`,
    sql: payloadAs,
    input: { payload: '{ "msgId": 1002, "params": { "convertTemp": 20, "engineSpeed": 42, "hydOilTem": 30 } }', topic: 't/a' },
    expect: { payload: { msgId: 1002, params: { convertTemp: 20, engineSpeed: 42, engineWorkTime: -1, hydOilTem: 30 } } },
  },
  {
    from: `${S}:t_sqlparse_payload_as`,
    sql: payloadAs,
    input: { payload: '{ "msgId": 1002, "params": { "convertTemp": 20, "engineSpeed": 42 } }', topic: 't/a' },
    expect: { payload: { msgId: 1002, params: { convertTemp: 20, engineSpeed: 42, engineWorkTime: -1, hydOilTem: -1 } } },
  },
  {
    from: `${S}:t_sqlparse_nested_get`,
    sql: `select payload as p, p.a.b as c from "t/#"`,
    input: { payload: '{"a": {"b": 0}}', topic: 't/1' },
    expect: { p: '{"a": {"b": 0}}', c: 0 },
  },
  { from: `${S}:t_sqlparse_invalid_json`, sql: `select payload.a[1..4] as c from "t/#"`, input: { payload: '{"x":[0,1,2,3,}', topic: 't/a' }, expect: fails() },
  {
    from: `${S}:t_sqlparse_undefined_variable`,
    sql: `select payload.a.b.c as r from "t/#"`,
    input: { payload: '{"a":{}}', topic: 't/a' },
    expect: { r: null },
  },
  { from: `${S}:t_sqlparse_new_map`, sql: `select map_get('a', map_new()) as r from "t/#"`, input: empty, expect: { r: null } },
  {
    from: 'emqx_rule_engine_api_rule_test_SUITE:t_ctx_pub',
    sql: `SELECT payload.msg as msg, clientid, username, payload, topic, qos FROM "t/#"`,
    input: { clientid: 'c_emqx', payload: '{"msg": "hello"}', qos: 1, topic: 't/a', username: 'u_emqx' },
    expect: { msg: 'hello', clientid: 'c_emqx', username: 'u_emqx', payload: '{"msg": "hello"}', topic: 't/a', qos: 1 },
  },
  {
    from: 'emqx_rule_engine_api_rule_apply_SUITE:t_basic_apply_rule_trace_ruleid',
    sql: `SELECT payload.id as id, payload as payload FROM "my_rule_topic/t"`,
    input: { payload: '{"id": 42}', topic: 'my_rule_topic/t' },
    expect: { id: 42, payload: '{"id": 42}' },
  },
  { from: 'emqx_rule_engine_SUITE:t_failed_rule_metrics', sql: `select 1 from "t" where false`, input: { payload: 'hi', topic: 't' }, expect: NO_MATCH },
];

await runFamily('sql-select', CASES);
