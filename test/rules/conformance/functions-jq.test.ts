// EMQX conformance, jq: emqx_rule_funcs_SUITE:t_jq through weir eval (jq 1.7 in WebAssembly).
import { call, fails, runFamily } from './functions-runner.js';

const T = 'emqx_rule_funcs_SUITE:t_jq';
const FOREVER = 'def while(cond; update): def _while: if cond then  (update | _while) else . end; _while; while(. < 42; . * 2)';

await runFamily('functions-jq', [
  call(T, "jq('.', json_decode('{\"b\": 2}'))", [{ b: 2 }]),
  call(T, "jq('.+1', json_decode('5'))", [6]),
  call(T, "jq('.', '{\"b\": 2}')", [{ b: 2 }]),
  call(T, "jq('.', '{\"b\": 2}', 10000)", [{ b: 2 }]),
  call(T, `jq('${FOREVER}', '-2', 10)`, fails('timed out')),
]);
