// jq() through jq-web in a worker thread: EMQX's results (a list), its errors and timeout, and
// the promise that a rule without jq() never starts the worker. The WebAssembly build is the
// real jq 1.7, not a stand-in.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { compileSql, createMessageContext, RuleEvalError } from '../../src/rules/index.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testCommand } from '../../src/cli/test.js';
import { evalLine } from '../../src/rules/tools/eval-lines.js';
import { tempDir } from '../harness/process.js';

const event = (payload: string) => createMessageContext({ topic: 't/1', payload });
const run = (sql: string, payload = '{}') => compileSql(sql).evaluate(event(payload), 'r');

/** EMQX's t_jq loop: never reaches 42 from -2, so only the timeout ends it. */
const FOREVER = 'def while(cond; update): def _while: if cond then (update | _while) else . end; _while; while(. < 42; . * 2)';

test('a rule without jq() does not start the jq worker, in a fresh process', () => {
  const code = `
    const { compileSql } = await import('./src/rules/index.ts');
    const { jqStarted } = await import('./src/rules/functions/jq.ts');
    compileSql('SELECT payload.x AS x, jsonata(\\'a\\', payload) AS j FROM "t/#"');
    const before = jqStarted();
    compileSql("SELECT jq('.x', payload) AS x FROM \\"t/#\\"");
    console.log(JSON.stringify([before, jqStarted()]));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [false, true]);
});

test('jq gives the list of its results, over a decoded value or JSON text (EMQX t_jq)', () => {
  assert.deepEqual(run(`SELECT jq('.', json_decode('{"b": 2}')) AS r FROM "t/#"`), { matched: true, outputs: [{ r: [{ b: 2 }] }] });
  assert.deepEqual(run(`SELECT jq('.+1', json_decode('5')) AS r FROM "t/#"`), { matched: true, outputs: [{ r: [6] }] });
  assert.deepEqual(run(`SELECT jq('.', '{"b": 2}', 10000) AS r FROM "t/#"`), { matched: true, outputs: [{ r: [{ b: 2 }] }] });
  assert.deepEqual(run(`SELECT jq('.a[] | {v: .}', payload) AS r FROM "t/#"`, '{"a":[1,"x"]}'), { matched: true, outputs: [{ r: [{ v: 1 }, { v: 'x' }] }] });
  assert.deepEqual(run(`SELECT jq('empty', payload) AS r FROM "t/#"`), { matched: true, outputs: [{ r: [] }] });
});

test("a jq error fails the evaluation with jq's message", () => {
  for (const [sql, code, text] of [
    [`SELECT jq('.[', payload) AS r FROM "t/#"`, 'rule.jq_failed', 'syntax error'],
    [`SELECT jq('error("boom")', payload) AS r FROM "t/#"`, 'rule.jq_failed', 'boom'],
    [`SELECT jq('.', 'not json') AS r FROM "t/#"`, 'rule.jq_failed', ''],
    [`SELECT jq(1, payload) AS r FROM "t/#"`, 'rule.type_error', ''],
    // Past the size limit, or on a busy machine past the evaluation budget first: rule.limit either way.
    [`SELECT jq('[range(700000)]', payload) AS r FROM "t/#"`, 'rule.limit', ''],
  ] as const) {
    assert.throws(
      () => run(sql),
      (e: unknown) => e instanceof RuleEvalError && e.code === code && e.message.includes(text),
      sql,
    );
  }
});

test('a filter past its timeout fails the evaluation, and the next call gets a fresh worker (EMQX t_jq)', () => {
  const t0 = Date.now();
  assert.throws(
    () => run(`SELECT jq('${FOREVER}', '-2', 10) AS r FROM "t/#"`),
    (e: unknown) => e instanceof RuleEvalError && e.code === 'rule.limit',
  );
  assert.ok(Date.now() - t0 < 2_000, `the 10 ms timeout took ${Date.now() - t0} ms`);
  assert.deepEqual(run(`SELECT jq('.x', payload) AS r FROM "t/#"`, '{"x":1}'), { matched: true, outputs: [{ r: [1] }] });
});

test('jq works through weir eval', async () => {
  const out = JSON.parse(
    await evalLine(JSON.stringify({ sql: `SELECT jq('{id: .d, t: .t}', payload) AS r FROM "t/#"`, event: { topic: 't/1', payload: { d: 'a', t: 2.5 } } })),
  );
  assert.deepEqual(out, { ok: true, matched: true, outputs: [{ r: [{ id: 'a', t: 2.5 }] }] });
  const bad = JSON.parse(await evalLine(JSON.stringify({ sql: `SELECT jq('.a.b', payload) AS r FROM "t/#"`, event: { topic: 't/1', payload: { a: 5 } } })));
  assert.equal(bad.ok, false);
  assert.match(bad.error, /Cannot index number/);
});

test('a rule file calling jq() loads and passes its own tests through weir test', async () => {
  const dir = tempDir('jq-rule');
  mkdirSync(join(dir, 'rules'));
  writeFileSync(
    join(dir, 'rules', 'jq.yaml'),
    [
      'id: jq_rule',
      'sql: |',
      '  SELECT first(jq(\'{id: .dev, hot: (.temp > 30)}\', payload)) AS r, clientid FROM "sensors/+/telemetry"',
      'tests:',
      '  - event: {clientid: c1, payload: {dev: d1, temp: 31}}',
      '    expect: {outputs: [{r: {id: d1, hot: true}, clientid: c1}]}',
      "  - event: {payload: 'not json'}",
      '    expect: {error: rule.jq_failed}',
      '',
    ].join('\n'),
  );
  // Its own weir.yaml: the events are made with its broker settings (none derive a clientid here).
  writeFileSync(join(dir, 'weir.yaml'), 'broker: { url: mqtt://127.0.0.1:1 }\n');
  assert.equal(await testCommand.run(['-c', join(dir, 'weir.yaml'), join(dir, 'rules')]), 0);
});
