// `weir test` is `weir run` offline: its events are made with weir.yaml's broker settings, as
// the runtime makes them (a FOREACH test sees the clientid publisher_clientid gives), and its rule
// files are read with the schema `weir check` uses (a misspelt expect key fails the file).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../harness/process.js';
import { runCli, writeWeirFiles } from '../harness/weir.js';

const CONFIG = `
broker:
  url: mqtt://127.0.0.1:1
  publisher_clientid: { topic_level: 2 }
sinks:
  db: { type: postgres, url: 'postgres://weir:\${WEIR_T_UNSET}@127.0.0.1:1/weir' }
`;

const FOREACH_RULE = `
id: per_reading
sql: |
  FOREACH payload.readings AS r
  DO clientid AS device, r.v AS v
  FROM "gw/+/up"
actions:
  - { sink: db, table: readings, columns: { device: '\${device}', v: '\${v}' } }
tests:
  - name: each reading carries the gateway the topic names
    event: { topic: gw/g1/up, payload: { readings: [{ v: 1 }, { v: 2 }] } }
    expect: { outputs: [{ device: g1, v: 1 }, { device: g1, v: 2 }] }
`;

test('weir test makes events with weir.yaml broker settings: publisher_clientid gives the clientid the runtime stores', async () => {
  const dir = writeWeirFiles({ config: CONFIG, rules: { 'r.yaml': FOREACH_RULE } }, 0, tempDir('weir-test'));
  // A sink's unset variable is not weir test's concern; the broker settings are read alone.
  const r = await runCli(['test', '-c', join(dir, 'weir.yaml'), join(dir, 'rules')]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /PASS .*r\.yaml #1 each reading carries the gateway/);
  // Without the setting the runtime has no clientid, and neither has the test.
  const plain = writeWeirFiles(
    { config: CONFIG.replace('  publisher_clientid: { topic_level: 2 }\n', ''), rules: { 'r.yaml': FOREACH_RULE } },
    0,
    tempDir('weir-test'),
  );
  const without = await runCli(['test', '-c', join(plain, 'weir.yaml'), join(plain, 'rules')]);
  assert.equal(without.code, 1);
  assert.match(without.stdout, /at \$\[0\]\.device: expected "g1", got null/);
});

test('weir test reads rule files with the schema: a misspelt expect key fails at its line; subfolders are read', async () => {
  const bad = FOREACH_RULE.replace('expect: { outputs', 'expect: { no_mtach: true, outputs');
  const dir = writeWeirFiles({ config: CONFIG, rules: { 'site/r.yaml': bad } }, 0, tempDir('weir-test'));
  const r = await runCli(['test', '-c', join(dir, 'weir.yaml'), join(dir, 'rules')]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /FAIL .*site\/r\.yaml:12:\d+: tests\.0\.expect\.no_mtach: unknown key 'no_mtach'.*no_match/);
});
