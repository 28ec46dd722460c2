// docs/rule-functions.md carries the table generated from the function registry: fail when stale.
// docs/rules.md's examples load, and what the docs say of getenv is true.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BatchConfig, RetryConfig } from '../../src/config/common-spec.js';
import { loadRuleFile } from '../../src/config/load.js';
import type { RuleConfig, SinkConfig } from '../../src/config/types.js';
import { postgresSinkType } from '../../src/sinks/postgres/index.js';
import type { ConfigError } from '../../src/errors.js';
import { compileSql, createMessageContext } from '../../src/rules/index.js';
import { functionReference } from '../../src/rules/functions/reference.js';
import { tempDir } from '../harness/process.js';
import { SchemaRegistry } from '../../src/schemas/registry.js';
import { SparkplugAliases } from '../../src/schemas/sparkplug-aliases.js';

test('docs/rule-functions.md is generated from the registry', () => {
  const doc = readFileSync(new URL('../../docs/rule-functions.md', import.meta.url), 'utf8');
  const start = doc.indexOf('<!-- generated:functions -->\n');
  const end = doc.indexOf('<!-- /generated:functions -->');
  assert.ok(start >= 0 && end > start, 'markers missing');
  const current = doc.slice(start + '<!-- generated:functions -->\n'.length, end);
  assert.equal(current, functionReference(), 'docs/rule-functions.md is stale: regenerate it (see the command at its top)');
});

const BATCH: BatchConfig = { max_items: 1000, max_bytes: 4 << 20, max_delay_ms: 20 };
const RETRY: RetryConfig = { initial_ms: 200, max_ms: 10_000, multiplier: 2, max_attempts: 0 };

/** The first yaml block under a heading of docs/rules.md, loaded as a rule file without errors. */
function loadDocExample(heading: string, schemas?: SchemaRegistry): RuleConfig | undefined {
  const doc = readFileSync(new URL('../../docs/rules.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf(heading));
  const example = /```yaml\n([\s\S]*?)```/.exec(section)![1]!;
  const file = join(tempDir('rules-doc'), 'example.yaml');
  writeFileSync(file, example);
  const errors: ConfigError[] = [];
  // The examples write to a PostgreSQL sink named db, as weir.yaml's would be.
  const db: SinkConfig = {
    name: 'db',
    sinkType: postgresSinkType,
    batch: BATCH,
    retry: RETRY,
    max_in_flight: 1,
    settings: { url: 'postgres://weir@127.0.0.1/weir' },
  };
  const rule = loadRuleFile(file, new Map([['db', db]]), errors, { schemas });
  assert.deepEqual(
    errors.map((e) => e.message),
    [],
  );
  return rule;
}

test("docs/rules.md's JSONata example is a rule weir loads (from:, not filters:)", () => {
  const rule = loadDocExample('## JSONata rules');
  assert.deepEqual(rule!.compiled.filters, ['sensors/+/telemetry']);
});

test("docs/rules.md's jq example is a rule weir loads, and gives what the text says", () => {
  const rule = loadDocExample('## jq');
  const out = rule!.compiled.evaluate(createMessageContext({ topic: 'sensors/1/telemetry', payload: '{"dev":"d1","temp":21.46}' }), 'jq_projection');
  assert.deepEqual(out, { matched: true, outputs: [{ r: { id: 'd1', t: 215 } }] });
  assert.deepEqual(
    compileSql(`SELECT jq('.a[] | {v: .}', payload) AS r FROM "t"`).evaluate(createMessageContext({ topic: 't', payload: '{"a": [1, 2]}' }), 'r'),
    { matched: true, outputs: [{ r: [{ v: 1 }, { v: 2 }] }] },
  );
});

test('getenv says what is true: rule files are not interpolated, weir.yaml is', () => {
  assert.throws(
    () => compileSql('SELECT getenv("SITE") AS s FROM "t"'),
    (e: unknown) => {
      const m = (e as Error).message;
      assert.match(m, /rule files are not interpolated/);
      assert.doesNotMatch(m, /interpolation in the rule file/);
      return true;
    },
  );
});

test("docs/rules.md's Sparkplug B example stores one row per metric, under the birth's names", () => {
  const { registry } = SchemaRegistry.load({}, tempDir('rules-doc-spb'), new SparkplugAliases());
  const rule = loadDocExample('## Sparkplug B', registry)!;
  const run = (topic: string, p: object) => rule.compiled.evaluate(createMessageContext({ topic, payload: registry.spbEncode(p) }), 'sparkplug_metrics');
  run('spBv1.0/g1/NBIRTH/e1', {
    seq: 0,
    metrics: [
      { name: 'bdSeq', datatype: 8, long_value: 2 },
      { name: 'temp', alias: 5, datatype: 10, double_value: 1.5, timestamp: 7 },
    ],
  });
  const out = run('spBv1.0/g1/DDATA/e1/d1', { seq: 4, metrics: [{ alias: 5, datatype: 10, double_value: 20.25, timestamp: 9 }] });
  assert.deepEqual(JSON.parse(JSON.stringify(out)), {
    matched: true,
    outputs: [{ grp: 'g1', kind: 'DDATA', edge: 'e1', device: 'd1', metric: 'temp', value: 20.25, ts: 9, seq: 4 }],
  });
});
