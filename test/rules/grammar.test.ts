// Grammar vectors (vectors/grammar.json): each SQL statement over the example event must give
// exactly the expected outputs, no match, or the expected error code.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compileSql, createMessageContext, RuleError, RuleEvalError } from '../../src/rules/index.js';
import { toJsonValue } from '../../src/rules/values/json-out.js';
import { baseEvent } from './helpers.js';

interface Vector {
  name: string;
  sql: string;
  event?: Record<string, unknown>;
  expect: { outputs?: unknown[] | 'any'; no_match?: true; error?: string };
}

const { vectors } = JSON.parse(readFileSync(new URL('./vectors/grammar.json', import.meta.url), 'utf8')) as { vectors: Vector[] };

for (const v of vectors) {
  test(`grammar: ${v.name}`, async () => {
    let result: Awaited<ReturnType<ReturnType<typeof compileSql>['evaluate']>>;
    try {
      const rule = compileSql(v.sql);
      assert.equal(rule.async, false, 'SQL without jsonata() evaluates synchronously');
      result = await rule.evaluate(createMessageContext(baseEvent(v.event)), 'r1');
    } catch (err) {
      assert.ok(err instanceof RuleError || err instanceof RuleEvalError, `unexpected ${String(err)}`);
      assert.equal(v.expect.error, err.code, `failed with ${err.message}`);
      return;
    }
    assert.equal(v.expect.error, undefined, `expected error ${v.expect.error}, got ${JSON.stringify(result)}`);
    if (v.expect.no_match) {
      assert.equal(result.matched, false);
      return;
    }
    assert.equal(result.matched, true);
    if (v.expect.outputs === 'any') return;
    assert.deepEqual(toJsonValue(result.matched ? result.outputs : []), v.expect.outputs);
  });
}
