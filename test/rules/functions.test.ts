// Runs every example of every built-in function (the registry is the single source of them) and
// checks the registry covers every EMQX function name it claims to, or says why not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSql, createMessageContext, FUNCTIONS, RuleError } from '../../src/rules/index.js';
import { UNSUPPORTED } from '../../src/rules/functions/unsupported.js';
import { plainNumbers } from '../../src/rules/values/floats.js';
import { toJsonValue } from '../../src/rules/values/json-out.js';
import { typeName } from '../../src/rules/values/value-types.js';
import { baseEvent } from './helpers.js';

for (const spec of FUNCTIONS.all()) {
  if (spec.examples.length === 0) continue;
  test(`function ${spec.name}: ${spec.examples.length} example(s)`, async () => {
    for (const ex of spec.examples) {
      const rule = compileSql(`SELECT ${ex.call} AS r FROM "#"`);
      let r: unknown;
      try {
        const res = await rule.evaluate(createMessageContext(baseEvent()), 'r1');
        assert.equal(res.matched, true);
        r = res.matched ? res.outputs[0]?.r : undefined;
      } catch (err) {
        assert.ok(ex.error, `${ex.call} failed: ${String(err)}`);
        continue;
      }
      assert.ok(!ex.error, `${ex.call} should fail, gave ${JSON.stringify(toJsonValue(r))}`);
      if (ex.type !== undefined) assert.equal(typeName(r), ex.type, ex.call);
      // Examples give numbers as JSON does; float-ness is shown by examples through str().
      else assert.deepEqual(plainNumbers(toJsonValue(r)), ex.result, ex.call);
    }
  });
}

test('every function has a signature and at least one example', () => {
  // The schema functions need weir.yaml's schemas (the examples run without any): test/schemas/
  // runs them over a loaded registry, EMQX's cases among them.
  const missing = FUNCTIONS.all()
    .filter((s) => s.examples.length === 0 && s.family !== 'schema')
    .map((s) => s.name);
  assert.deepEqual(missing, []);
});

/** EMQX 5 rule functions (emqx_rule_funcs exports and the documented sprintf/coalesce). */
const EMQX_FUNCTIONS = `msgid qos flags flag topic clientid clientip peerhost username payload contains_topic
contains_topic_match null abs acos acosh asin asinh atan atanh ceil cos cosh exp floor fmod log log10 log2
power round sin sinh sqrt tan tanh bitnot bitand bitor bitxor bitsl bitsr bitsize bytesize subbits str
str_utf8 bool int float float2str map bin2hexstr hexstr2bin is_null is_null_var is_not_null
is_not_null_var is_str is_bool is_int is_float is_num is_map is_array lower ltrim reverse rtrim strlen
substr trim upper split concat tokens sprintf sprintf_s pad replace regex_match regex_replace
regex_extract ascii find join_to_string map_to_redis_hset_args join_to_sql_values_string jq unescape
map_new map_get map_put map_keys map_values map_to_entries mget mput nth length sublist first last
contains md5 sha sha256 hash zip unzip gzip gunzip zip_compress zip_uncompress base64_encode
base64_decode json_decode json_encode term_decode term_encode now_rfc3339 unix_ts_to_rfc3339
rfc3339_to_unix_ts now_timestamp format_date date_to_unix_ts timezone_to_second
timezone_to_offset_seconds mongo_date random uuid_v4 uuid_v4_no_hyphen proc_dict_get proc_dict_put
proc_dict_del kv_store_get kv_store_put kv_store_del coalesce coalesce_ne eq schema_decode schema_encode
schema_check spb_decode spb_encode sparkplug_decode sparkplug_encode`.split(/\s+/);

test('every EMQX function is supported or listed as unsupported with a reason', () => {
  const unknown = EMQX_FUNCTIONS.filter((n) => !FUNCTIONS.get(n) && !Object.hasOwn(UNSUPPORTED, n));
  assert.deepEqual(unknown, []);
});

test('an unsupported function is a compile error that says why', () => {
  assert.throws(
    () => compileSql(`SELECT kv_store_get('a') FROM "#"`),
    (err: unknown) => err instanceof RuleError && err.code === 'rule.unsupported_function' && /pure/.test(err.message),
  );
});

test('a rule calling jsonata() is asynchronous, others are not', async () => {
  assert.equal(compileSql(`SELECT upper(clientid) FROM "#"`).async, false);
  const rule = compileSql(`FOREACH payload.sensors AS s DO jsonata('name & "!"', s) AS n, jsonata('idx * 2', s) AS d INCASE s.idx > 0 FROM "#"`);
  assert.equal(rule.async, true);
  const res = await rule.evaluate(createMessageContext(baseEvent()), 'r1');
  assert.deepEqual(res, {
    matched: true,
    outputs: [
      { n: 't1!', d: 2 },
      { n: 't2!', d: 4 },
    ],
  });
});
