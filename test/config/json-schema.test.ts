// The JSON Schemas for editors (schema/*.json) are generated from the loader's own TypeBox schemas:
// the committed files must be what `npm run schema` writes now, and what weir ships (weir.yaml,
// rules/, the sinks' sample.yaml) must validate against them — as must the loader's verdicts on a
// few wrong files.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { schemaFiles } from '../../src/config/json-schema.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ajv = new Ajv({ allErrors: true, strict: true });
const load = (name: string): ValidateFunction => ajv.compile(JSON.parse(readFileSync(join(ROOT, 'schema', name), 'utf8')) as object);
const weir = load('weir.schema.json');
const rule = load('rule.schema.json');
const yamlOf = (file: string): unknown => parse(readFileSync(join(ROOT, file), 'utf8'));
const explain = (v: ValidateFunction) => JSON.stringify(v.errors?.slice(0, 5), null, 1);

test('schema/*.json are what npm run schema generates from the TypeBox schemas', () => {
  for (const [name, text] of Object.entries(schemaFiles())) {
    const committed = join(ROOT, 'schema', name);
    assert.ok(existsSync(committed), `schema/${name} is missing: run npm run schema`);
    assert.equal(readFileSync(committed, 'utf8'), text, `schema/${name} is stale: run npm run schema and commit it`);
  }
});

test('the shipped weir.yaml and every sink sample validate against the schemas', () => {
  assert.ok(weir(yamlOf('weir.yaml')), explain(weir));
  for (const type of readdirSync(join(ROOT, 'src/sinks'))) {
    const sample = join('src/sinks', type, 'sample.yaml');
    if (!existsSync(join(ROOT, sample))) continue;
    // A sample holds a `sinks:` part of weir.yaml and, optionally, a rule's `actions:`.
    const { sinks, actions } = yamlOf(sample) as { sinks?: unknown; actions?: unknown };
    assert.ok(weir({ broker: {}, sinks }), `${sample}: ${explain(weir)}`);
    if (actions) assert.ok(rule({ id: 'sample', sql: 'SELECT * FROM "t/#"', actions }), `${sample} actions: ${explain(rule)}`);
  }
});

test('every rule in rules/ validates against rule.schema.json', () => {
  const files = readdirSync(join(ROOT, 'rules')).filter((f) => /\.ya?ml$/.test(f));
  assert.ok(files.length > 0);
  for (const f of files) assert.ok(rule(yamlOf(join('rules', f))), `rules/${f}: ${explain(rule)}`);
});

test("rule.schema.json: a misspelt action key is named in the error, by its sink type's schema, not an anyOf of every type", () => {
  const base = { id: 'r', sql: 'SELECT * FROM "t/#"' };
  const errorsFor = (action: Record<string, unknown>) => {
    assert.equal(rule({ ...base, actions: [action] }), false, JSON.stringify(action));
    return rule.errors ?? [];
  };
  // Each action has a key only its type has (topic is kafka's and mqtt's, payload and properties
  // pulsar's and mqtt's): with shared keys alone the type is in weir.yaml, not in the rule file.
  const cases: Array<[Record<string, unknown>, string, string?]> = [
    [{ sink: 'db', table: 't', columns: { a: '${a}' }, colums: {} }, 'colums'],
    [{ sink: 'db', tabel: 't', columns: { a: '${a}' } }, 'tabel', 'table'],
    [{ sink: 'k', topic: 'telemetry', value: '${v}', partitoner: 'murmur2' }, 'partitoner'],
    [{ sink: 'p', payload: '${payload}', event_time: '${ts}', propreties: {} }, 'propreties'],
    [{ sink: 'm', topic: 'alerts/${clientid}', retain: true, user_propreties: {} }, 'user_propreties'],
  ];
  for (const [action, misspelt, missing] of cases) {
    const errors = errorsFor(action);
    const where = `${JSON.stringify(action)}: ${JSON.stringify(errors, null, 1)}`;
    assert.ok(
      errors.some((e) => e.keyword === 'additionalProperties' && e.params.additionalProperty === misspelt),
      `the type's own schema names ${misspelt}: ${where}`,
    );
    assert.ok(
      errors.some((e) => e.keyword === 'propertyNames' && e.params.propertyName === misspelt),
      `propertyNames names ${misspelt}: ${where}`,
    );
    assert.ok(!errors.some((e) => e.keyword === 'anyOf'), `no "must match a schema in anyOf": ${where}`);
    // Only the one type's schema speaks: no other type's required keys.
    const missingKeys = errors.filter((e) => e.keyword === 'required').map((e) => e.params.missingProperty as string);
    assert.deepEqual(missingKeys, missing ? [missing] : [], where);
  }
});

test('weir.schema.json refuses what the loader refuses and takes ${ENV} references', () => {
  assert.equal(weir({ broker: { urll: 'mqtt://x' } }), false, 'unknown broker key');
  assert.equal(weir({ broker: {}, sinks: { k: { type: 'kafka' } } }), false, 'kafka sink without brokers');
  assert.equal(weir({ broker: {}, sinks: { k: { type: 'nosuch', url: 'x' } } }), false, 'unknown sink type');
  assert.equal(weir({ broker: {}, sinks: { db: { type: 'postgres', url: 'postgres://x', pool_size: 0 } } }), false, 'pool_size below its minimum');
  assert.equal(weir({ broker: {}, sinks: { BadName: { type: 'postgres', url: 'postgres://x' } } }), false, 'sink name pattern');
  assert.ok(weir({ broker: { connections: '${CONNS:-2}', ack: '${ACK}' }, http: { port: '${PORT:-9464}' } }), explain(weir));
  assert.ok(weir({ broker: {}, sinks: { db: { type: 'postgres', url: '${PG_URL}', pool_size: 2 } } }), explain(weir));
});

test('rule.schema.json checks each action against its sink type', () => {
  const base = { id: 'r', sql: 'SELECT * FROM "t/#"' };
  assert.ok(rule({ ...base, actions: [{ sink: 'db', table: 't', columns: { a: '${a}' } }] }), explain(rule));
  assert.ok(rule({ ...base, actions: [{ sink: 'k', topic: 'telemetry', key: '${clientid}' }] }), explain(rule));
  assert.equal(rule({ ...base, actions: [{ sink: 'db', table: 't', columns: { a: '${a}' }, colums: {} }] }), false, 'misspelt key');
  assert.equal(rule({ ...base, actions: [{ table: 't', columns: { a: '${a}' } }] }), false, 'no sink');
  assert.equal(rule({ ...base, enabled: 'yes' }), false, 'rule files are not interpolated: enabled is a boolean');
  assert.equal(rule({ sql: 'SELECT 1' }), false, 'no id');
});
