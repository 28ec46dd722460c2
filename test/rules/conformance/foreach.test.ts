// EMQX conformance: FOREACH … DO … INCASE, from emqx_rule_engine_SUITE's t_sqlparse_foreach_*
// tests. Without DO, each output is every column plus the item (EMQX's filter_collection); DO and
// INCASE see the columns, what FOREACH selected and the item. Runner and case shape: cases.ts.
import { type ConformanceCase, NO_MATCH, fails, runFamily } from './cases.js';

const S = 'emqx_rule_engine_SUITE';
const on = (payload: unknown, more: Record<string, unknown> = {}) => ({ payload, topic: 't/a', ...more });
const sensors12 = on('{"sensors": [1, 2]}');
const cmds = on('{"sensors": [{"cmd":"1"}, {"cmd":"2"}]}');
const cmds3 = on('{"sensors": [{"cmd":1}, {"cmd":2}, {"cmd":3}]}');
const doIncase = `foreach payload.sensors as s do s.cmd as msg_type, s.name as name incase is_not_null(s.cmd) from "t/#"`;
const cascade = (page: string) =>
  `foreach json_decode(payload) as p, p.sensors as s, s.collection as c, c.info as info do info.cmd as msg_type, info.name as name incase is_not_null(info.cmd) from "t/#" where s.page = '${page}'`;
const cascadePayload = on('{"sensors": {"page": 2, "collection": {"info":[{"name":"cmd1", "cmd":"1"}, {"cmd":"2"}]} } }');
const coll = { info: ['haha', { name: 'cmd1', cmd: '1' }] };
const haha = on('{"sensors": {"page": 2, "collection": {"info":["haha", {"name":"cmd1", "cmd":"1"}]} } }');
const ts = on(JSON.stringify([{ ts: 1451649600512, values: { respiratoryrate: 20, heartrate: 130, systolic: 50 } }]));

export const CASES: ConformanceCase[] = [
  { from: `${S}:t_sqlparse_foreach_1`, sql: `foreach payload.sensors as s from "t/#"`, input: sensors12, expect: [{ s: 1 }, { s: 2 }], partial: true },
  { from: `${S}:t_sqlparse_foreach_1`, sql: `foreach payload.sensors from "t/#"`, input: sensors12, expect: [{ item: 1 }, { item: 2 }], partial: true },
  {
    from: `${S}:t_sqlparse_foreach_1`,
    sql: `foreach payload.sensors from "t/#"`,
    input: on('{"sensors": [{"cmd":"1"}, {"cmd":"2","name":"ct"}]}', { clientid: 'c_a' }),
    expect: [
      { item: { cmd: '1' }, clientid: 'c_a' },
      { item: { cmd: '2', name: 'ct' }, clientid: 'c_a' },
    ],
    partial: true,
  },
  {
    from: `${S}:t_sqlparse_foreach_1`,
    sql: `foreach payload.sensors from "t/#"`,
    input: sensors12,
    expect: [{ metadata: { rule_id: 'conformance' } }, { metadata: { rule_id: 'conformance' } }],
    partial: true,
  },
  // The unaliased collection is selected under its own path, over the payload column.
  {
    from: `${S}:t_sqlparse_foreach_1`,
    sql: `foreach payload.sensors from "t/#"`,
    input: sensors12,
    expect: [{ payload: { sensors: [1, 2] } }, { payload: { sensors: [1, 2] } }],
    partial: true,
  },
  {
    from: `${S}:t_sqlparse_foreach_2`,
    sql: `foreach payload.sensors as s do s.cmd as msg_type from "t/#"`,
    input: cmds,
    expect: [{ msg_type: '1' }, { msg_type: '2' }],
  },
  {
    from: `${S}:t_sqlparse_foreach_2`,
    sql: `foreach payload.sensors do item.cmd as msg_type from "t/#"`,
    input: cmds,
    expect: [{ msg_type: '1' }, { msg_type: '2' }],
  },
  { from: `${S}:t_sqlparse_foreach_2`, sql: `foreach payload.sensors do item as item from "t/#"`, input: sensors12, expect: [{ item: 1 }, { item: 2 }] },
  {
    from: `${S}:t_sqlparse_foreach_3`,
    sql: `foreach payload.sensors as s incase s.cmd != 1 from "t/#"`,
    input: cmds3,
    expect: [{ s: { cmd: 2 } }, { s: { cmd: 3 } }],
    partial: true,
  },
  {
    from: `${S}:t_sqlparse_foreach_3`,
    sql: `foreach payload.sensors incase item.cmd != 1 from "t/#"`,
    input: cmds3,
    expect: [{ item: { cmd: 2 } }, { item: { cmd: 3 } }],
    partial: true,
  },
  {
    from: `${S}:t_sqlparse_foreach_4`,
    sql: doIncase,
    input: cmds,
    expect: [
      { msg_type: '1', name: null },
      { msg_type: '2', name: null },
    ],
  },
  {
    from: `${S}:t_sqlparse_foreach_4`,
    sql: doIncase,
    input: on('{"sensors": [{"cmd":"1", "name":"n1"}, {"cmd":"2"}, {"name":"n3"}]}'),
    expect: [
      { msg_type: '1', name: 'n1' },
      { msg_type: '2', name: null },
    ],
  },
  { from: `${S}:t_sqlparse_foreach_4`, sql: doIncase, input: sensors12, expect: [] },
  {
    from: `${S}:t_sqlparse_foreach_5`,
    sql: `foreach payload.sensors as s do s.cmd as msg_type, s.name as name from "t/#"`,
    input: on('{"sensors": 1}'),
    expect: [],
  },
  {
    from: `${S}:t_sqlparse_foreach_5`,
    sql: `foreach payload.sensors as s do s.cmd as msg_type, s.name as name from "t/#"`,
    input: on('{"sensors": []}'),
    expect: [],
  },
  { from: `${S}:t_sqlparse_foreach_5`, sql: `foreach payload.sensors from "t/#"`, input: on('{"sensors": 1}'), expect: [] },
  {
    from: `${S}:t_sqlparse_foreach_6`,
    sql: `foreach json_decode(payload) do item.id as zid, timestamp as t from "t/#"`,
    input: on('[{"id": 5},{"id": 15}]', { timestamp: 1700000000000 }),
    expect: [
      { zid: 5, t: 1700000000000 },
      { zid: 15, t: 1700000000000 },
    ],
  },
  {
    from: `${S}:t_sqlparse_foreach_7`,
    sql: cascade('2'),
    input: cascadePayload,
    expect: [
      { msg_type: '1', name: 'cmd1' },
      { msg_type: '2', name: null },
    ],
  },
  { from: `${S}:t_sqlparse_foreach_7`, sql: cascade('3'), input: cascadePayload, expect: NO_MATCH },
  {
    from: `${S}:t_sqlparse_foreach_8`,
    sql: `foreach json_decode(payload) as p, p.sensors as s, s.collection as c, c.info as info do info.cmd as msg_type, info.name as name, s, c incase is_map(info) from "t/#" where s.page = '2'`,
    input: haha,
    expect: [{ msg_type: '1', name: 'cmd1', s: { page: 2, collection: coll }, c: coll }],
  },
  {
    from: `${S}:t_sqlparse_foreach_8`,
    sql: `foreach json_decode(payload) as p, p.sensors as s, s.collection as c, sublist(2,1,c.info) as info do info.cmd as msg_type, info.name as name from "t/#" where s.page = '2'`,
    input: haha,
    expect: [{ msg_type: '1', name: 'cmd1' }],
  },
  { from: `${S}:t_sqlparse_foreach_9`, sql: `foreach json_decode(payload) as p do p.ts as ts from "t/#"`, input: ts, expect: [{ ts: 1451649600512 }] },
  { from: `${S}:t_sqlparse_foreach_9`, sql: `foreach payload as p do p.ts as ts from "t/#"`, input: ts, expect: [{ ts: 1451649600512 }] },
  {
    from: `${S}:t_sqlparse_foreach_10`,
    sql: `foreach payload as item do item.data as next_data from "t/#"`,
    input: on('[{"data": "value1"}, {"data": "value2"}]'),
    expect: [{ next_data: 'value1' }, { next_data: 'value2' }],
  },
  {
    from: `${S}:t_sqlparse_invalid_json`,
    sql: `foreach payload.sensors do item.cmd as msg_type from "t/#"`,
    input: on('{"sensors": [{"cmd":"1"} {"cmd":}]}'),
    expect: fails(),
  },
  { from: `${S}:t_sqlparse_both_string_types_in_from`, sql: `foreach payload.sensors from 't/#'`, input: on('{"sensors": 1}'), expect: [] },
];

await runFamily('foreach', CASES);
