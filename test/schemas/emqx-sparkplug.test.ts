// EMQX's Sparkplug B cases, ported (apps/emqx_schema_registry/test/emqx_schema_registry_SUITE.erl
// and emqx_schema_registry_spb_SUITE.erl; each test names its source). The payloads are the
// test vectors EMQX publishes (bytes given as base64/hex) and their decoded shape; weir decodes
// them with its own sparkplug_b.proto, written from the specification.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSql, createMessageContext, FUNCTIONS } from '../../src/rules/index.js';
import { schemaFunctions } from '../../src/rules/functions/schema.js';
import { SchemaRegistry } from '../../src/schemas/registry.js';
import { SparkplugAliases } from '../../src/schemas/sparkplug-aliases.js';
import { tempDir } from '../harness/process.js';

function setup(maxEdgeNodes?: number) {
  const aliases = new SparkplugAliases(maxEdgeNodes);
  const { registry } = SchemaRegistry.load({}, tempDir('weir-spb-'), aliases);
  const functions = FUNCTIONS.with(schemaFunctions(registry));
  const run = (sql: string, topic: string, payload: Buffer | string): Record<string, unknown>[] => {
    const r = compileSql(sql, functions).evaluate(createMessageContext({ topic, payload }), 'r');
    assert.ok(!(r instanceof Promise) && r.matched);
    return r.outputs;
  };
  return { registry, aliases, run };
}

const EXAMPLE_BASE64 =
  'CPHh67HrMBIqChxjb3VudGVyX2dyb3VwMS9jb3VudGVyMV8xc2VjGPXh67HrMCACUKgD' +
  'EikKHGNvdW50ZXJfZ3JvdXAxL2NvdW50ZXIxXzVzZWMY9eHrseswIAJQVBIqCh1jb3Vu' +
  'dGVyX2dyb3VwMS9jb3VudGVyMV8xMHNlYxj14eux6zAgAlAqEigKG2NvdW50ZXJfZ3Jv' +
  'dXAxL2NvdW50ZXIxX3J1bhj14eux6zAgBVABEioKHWNvdW50ZXJfZ3JvdXAxL2NvdW50' +
  'ZXIxX3Jlc2V0GPXh67HrMCAFUAAYWA==';
const metric = (name: string, datatype: number, int_value: number) => ({ datatype, int_value, name, timestamp: 1678094561525 });
const EXAMPLE = {
  metrics: [
    metric('counter_group1/counter1_1sec', 2, 424),
    metric('counter_group1/counter1_5sec', 2, 84),
    metric('counter_group1/counter1_10sec', 2, 42),
    metric('counter_group1/counter1_run', 5, 1),
    metric('counter_group1/counter1_reset', 5, 0),
  ],
  seq: 88,
  timestamp: 1678094561521,
};

test('emqx_schema_registry_SUITE t_sparkplug_decode (sparkplug_decode, the deprecated name)', () => {
  const { run } = setup();
  const [out] = run('SELECT sparkplug_decode(payload) AS decoded FROM "t"', 't', Buffer.from(EXAMPLE_BASE64, 'base64'));
  assert.deepEqual(out!.decoded, EXAMPLE);
});

test('emqx_schema_registry_SUITE t_sparkplug_encode / t_sparkplug_decode_encode_with_message_name', () => {
  const { run } = setup();
  const [enc] = run('SELECT sparkplug_encode(json_decode(payload)) AS encoded FROM "t"', 't', JSON.stringify(EXAMPLE));
  assert.deepEqual(enc!.encoded, Buffer.from(EXAMPLE_BASE64, 'base64'));
  const [again] = run('SELECT spb_encode(spb_decode(payload)) AS encoded FROM "t"', 't', Buffer.from(EXAMPLE_BASE64, 'base64'));
  assert.deepEqual(again!.encoded, Buffer.from(EXAMPLE_BASE64, 'base64'));
});

const BYTES_HEX = '08b0da90dd8e33122d0a04626c6f6218b0da90dd8e33201182011ba3ffa0ffa4ffa3ffa6ff9dffa4ff9fffa2ff9cffa0ffa2ffa2ffa318a901';
const BYTES_DECODED = {
  metrics: [{ bytes_value: 'o/+g/6T/o/+m/53/pP+f/6L/nP+g/6L/ov+j', datatype: 17, name: 'blob', timestamp: 1756300062000 }],
  seq: 169,
  timestamp: 1756300062000,
};

test('emqx_schema_registry_SUITE t_sparkplug_decode_bytes: bytes_value as base64', () => {
  const { run } = setup();
  const [out] = run('SELECT spb_decode(payload) AS decoded FROM "t"', 't', Buffer.from(BYTES_HEX, 'hex'));
  assert.deepEqual(out!.decoded, BYTES_DECODED);
});

test('emqx_schema_registry_SUITE t_sparkplug_encode_bytes: bytes_value from base64', () => {
  const { run } = setup();
  const [out] = run('SELECT spb_encode(json_decode(payload)) AS encoded FROM "t"', 't', JSON.stringify(BYTES_DECODED));
  assert.equal((out!.encoded as Buffer).toString('hex'), BYTES_HEX);
});

test('emqx_schema_registry_SUITE t_sparkplug_encode_float_to_uint64_key: a float for a uint64 is a type error', () => {
  const { registry } = setup();
  assert.throws(() => registry.spbEncode({ seq: 1.5 }), /does not fit/);
});

const birthOf = (metrics: Record<string, unknown>[]) => ({ timestamp: 1, seq: 0, metrics });
const T = (kind: string, group = 'g', device?: string) => `spBv1.0/${group}/${kind}/edge1${device ? `/${device}` : ''}`;

test('emqx_schema_registry_spb_SUITE t_eon_node_aliases / t_device_aliases: data metrics get the birth names back', () => {
  const { registry, run } = setup();
  const birth = birthOf([
    { name: 'non_aliased_metric1', datatype: 3, int_value: 1 },
    { name: 'aliased_metric1', alias: 1, datatype: 3, int_value: 2 },
    { name: 'non_aliased_metric2', datatype: 3, int_value: 3 },
    { name: 'aliased_metric2', alias: 2, datatype: 3, int_value: 4 },
  ]);
  const data = birthOf([
    { name: 'non_aliased_metric1', datatype: 3, int_value: 1 },
    { alias: 1, datatype: 3, int_value: 2 },
    { name: 'non_aliased_metric2', datatype: 3, int_value: 3 },
    { alias: 2, datatype: 3, int_value: 4 },
  ]);
  const names = (topic: string, p: object) =>
    (run('SELECT spb_decode(payload) AS d FROM "spBv1.0/#"', topic, registry.spbEncode(p))[0]!.d as { metrics: { name?: string }[] }).metrics.map(
      (m) => m.name,
    );
  const expected = ['non_aliased_metric1', 'aliased_metric1', 'non_aliased_metric2', 'aliased_metric2'];
  names(T('NBIRTH'), birth);
  assert.deepEqual(names(T('NDATA'), data), expected);
  names(T('DBIRTH', 'g', 'dev1'), birth);
  assert.deepEqual(names(T('DDATA', 'g', 'dev1'), data), expected);
});

test('emqx_schema_registry_spb_SUITE t_independent_mappings_device_and_eon / t_independent_mappings_clients', () => {
  const { registry, run } = setup();
  const one = (name?: string) => birthOf([{ ...(name ? { name } : {}), alias: 1, datatype: 3, int_value: 1 }]);
  const nameIn = (topic: string, p: object) =>
    (run('SELECT spb_decode(payload) AS d FROM "spBv1.0/#"', topic, registry.spbEncode(p))[0]!.d as { metrics: { name?: string }[] }).metrics[0]!.name;
  nameIn(T('NBIRTH', 'g1'), one('name1'));
  nameIn(T('DBIRTH', 'g1', 'd'), one('name2'));
  nameIn(T('NBIRTH', 'g2'), one('name3'));
  assert.equal(nameIn(T('NDATA', 'g1'), one()), 'name1');
  assert.equal(nameIn(T('DDATA', 'g1', 'd'), one()), 'name2');
  assert.equal(nameIn(T('NDATA', 'g2'), one()), 'name3');
  // weir: a device without its own DBIRTH alias falls back to its edge node's (aliases are unique per edge node).
  assert.equal(nameIn(T('DDATA', 'g2', 'other'), one()), 'name3');
  // A rebirth replaces the map; a node never born keeps bare aliases.
  nameIn(T('NBIRTH', 'g1'), one('renamed'));
  assert.equal(nameIn(T('NDATA', 'g1'), one()), 'renamed');
  assert.equal(nameIn(T('NDATA', 'g9'), one()), undefined);
});

test('the alias state is bounded: the least recently seen edge node is forgotten first, and counted', () => {
  const { registry, aliases, run } = setup(2);
  const one = (name?: string) => registry.spbEncode(birthOf([{ ...(name ? { name } : {}), alias: 1, datatype: 3, int_value: 1 }]));
  const sql = 'SELECT spb_decode(payload) AS d FROM "spBv1.0/#"';
  run(sql, 'spBv1.0/g/NBIRTH/a', one('a1'));
  run(sql, 'spBv1.0/g/NBIRTH/b', one('b1'));
  run(sql, 'spBv1.0/g/NDATA/a', one()); // a is now the most recent
  run(sql, 'spBv1.0/g/NBIRTH/c', one('c1')); // b goes
  assert.equal(aliases.edgeNodes, 2);
  assert.equal(aliases.evicted, 1);
  const name = (edge: string) => (run(sql, `spBv1.0/g/NDATA/${edge}`, one())[0]!.d as { metrics: { name?: string }[] }).metrics[0]!.name;
  assert.equal(name('a'), 'a1');
  assert.equal(name('b'), undefined);
  assert.equal(name('c'), 'c1');
});

test('FOREACH stores one row per metric, with seq and the bdSeq of the birth', () => {
  const { registry, run } = setup();
  const sql = `FOREACH spb_decode(payload).metrics AS m
    DO m.name AS metric, coalesce(m.int_value, m.long_value, m.double_value, m.float_value, m.boolean_value, m.string_value) AS value, m.timestamp AS ts, spb_decode(payload).seq AS seq
    FROM "spBv1.0/+/+/+/#"`;
  run(
    sql,
    T('NBIRTH'),
    registry.spbEncode(
      birthOf([
        { name: 'bdSeq', datatype: 8, long_value: 3, timestamp: 5 },
        { name: 'temp', alias: 7, datatype: 10, double_value: 1.5, timestamp: 5 },
      ]),
    ),
  );
  const rows = run(sql, T('NDATA'), registry.spbEncode({ seq: 1, timestamp: 6, metrics: [{ alias: 7, datatype: 10, double_value: 21.25, timestamp: 6 }] }));
  assert.deepEqual(JSON.parse(JSON.stringify(rows)), [{ metric: 'temp', value: 21.25, ts: 6, seq: 1 }]);
});
