// EMQX conformance, message accessors, arithmetic and math: emqx_rule_funcs_SUITE's t_msgid …
// t_payload over its message() (client "clientid", QoS 1, topic "topic/#", dup false), and the
// property tests t_arith_op and t_math_fun restated on fixed operands (X = 7, Y = 3; Erlang's
// math module and JavaScript's Math are the same C library functions).
import { call, float, runFamily, type ConformanceCase } from './functions-runner.js';

const S = 'emqx_rule_funcs_SUITE:';
const MSG = {
  topic: 'topic/#',
  clientid: 'clientid',
  qos: 1,
  flags: { dup: false },
  id: '0005F8F84FFFAFB9F44200000D810002',
  peerhost: '127.0.0.1',
  username: 'feng',
};
const msg = (from: string, expr: string, want: unknown, extra: Record<string, unknown> = {}): ConformanceCase => ({
  from: `${S}${from}`,
  sql: `SELECT ${expr} AS r FROM "#"`,
  input: { ...MSG, payload: 'payload', ...extra },
  expect: { r: want },
});
const X = 7;
const Y = 3;
const unary = ['acosh', 'asinh', 'atan', 'ceil', 'cos', 'cosh', 'exp', 'floor', 'log', 'log10', 'log2', 'sin', 'sinh', 'sqrt', 'tan', 'tanh'] as const;

await runFamily('functions-message-math', [
  msg('t_msgid', 'msgid()', MSG.id),
  msg('t_qos', 'qos()', 1),
  msg('t_flags', 'flags()', { dup: false }),
  msg('t_flag', "flag('dup')", false),
  msg('t_flag', "flag('retain')", true, { flags: { dup: false, retain: true } }),
  msg('t_topic', 'topic()', 'topic/#'),
  msg('t_topic', 'topic(1)', 'topic'),
  msg('t_clientid', 'clientid()', 'clientid'),
  msg('t_clientip', 'clientip()', '127.0.0.1'),
  msg('t_peerhost', 'peerhost()', '127.0.0.1'),
  msg('t_username', 'username()', 'feng'),
  msg('t_payload', 'payload()', 'hello', { payload: 'hello' }),
  msg('t_payload', "payload('a.b.c')", 'c', { payload: { a: { b: { c: 'c' } } } }),
  call(`${S}t_arith_op`, `[${X} + ${Y}, ${X} - ${Y}, ${X} * ${Y}, ${X} / ${Y}, ${X} mod ${Y}]`, [X + Y, X - Y, X * Y, X / Y, X % Y]),
  call(`${S}t_arith_op`, '[1.5 + 2, 1.5 * -2.5, -7 mod 3]', [3.5, -3.75, -1]),
  ...unary.map((f) => call(`${S}t_math_fun`, `${f}(${X})`, (Math[f] as (x: number) => number)(X))),
  // math:pow and math:fmod answer floats: 343.0 and 1.0 here.
  call(`${S}t_math_fun`, `power(${X}, ${Y})`, float(X ** Y)),
  call(`${S}t_math_fun`, `fmod(${X}, ${Y})`, float(X % Y)),
]);
