import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exampleTopic, runRuleTests } from '../../src/rules/tools/rule-tests.js';

test('passing and failing rule tests, with the first difference', async () => {
  const results = await runRuleTests({
    sql: 'SELECT payload.t AS t, clientid FROM "s/+/temp" WHERE t > 20',
    tests: [
      { name: 'hot', event: { clientid: 'c1', payload: { t: 25 } }, expect: { outputs: [{ t: 25, clientid: 'c1' }] } },
      { name: 'cold', event: { payload: { t: 5 } }, expect: { no_match: true } },
      { name: 'wrong', event: { clientid: 'c1', payload: { t: 30 } }, expect: { outputs: [{ t: 31, clientid: 'c1' }] } },
      { name: 'bad payload', event: { payload: 'nope' }, expect: { error: 'rule.payload_not_json' } },
      { name: 'not an error', event: { payload: { t: 30 } }, expect: { error: true } },
    ],
  });
  assert.deepEqual(
    results.map((r) => r.pass),
    [true, true, false, true, false],
  );
  assert.match(results[2]!.message, /\$\[0\]\.t: expected 31, got 30/);
  assert.match(results[4]!.message, /expected an error/);
});

test('a rule that does not compile fails every test with the reason', async () => {
  const results = await runRuleTests({ sql: 'SELECT FROM', tests: [{ event: {}, expect: { outputs: [] } }] });
  assert.equal(results[0]!.pass, false);
  assert.match(results[0]!.message, /expected/);
});

test('JSONata rule tests', async () => {
  const results = await runRuleTests({
    jsonata: 'payload.readings.{"v": value}',
    filters: ['m/#'],
    tests: [{ event: { payload: { readings: [{ value: 1 }, { value: 2 }] } }, expect: { outputs: [{ v: 1 }, { v: 2 }] } }],
  });
  assert.equal(results[0]!.pass, true, results[0]!.message);
});

test('exampleTopic fills wildcards', () => {
  assert.equal(exampleTopic(['$share/g/a/+/#']), 'a/x/x');
});
