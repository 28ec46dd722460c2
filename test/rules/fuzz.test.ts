// Property test: random, grammar-shaped and mutated SQL statements with random payloads through
// the parser, compiler and evaluator. Every statement either compiles or fails with a RuleError;
// every evaluation either gives a result that serialises as JSON or fails with a RuleEvalError,
// within a time bound. 100,000+ statement/payload pairs in all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compileSql, createMessageContext, RuleError, RuleEvalError } from '../../src/rules/index.js';
import { toJsonValue } from '../../src/rules/values/json-out.js';
import { anySql, mutated, payload, statement } from './fuzz-arbitraries.js';
import { baseEvent } from './helpers.js';

const RUNS = Number(process.env.WEIR_FUZZ_RUNS ?? 34_000);
const EVAL_BOUND_MS = 2_000;

function check(sql: string, body: string | Buffer): 'compiled' | 'rejected' {
  let rule: ReturnType<typeof compileSql>;
  try {
    rule = compileSql(sql);
  } catch (err) {
    assert.ok(err instanceof RuleError, `compile threw ${String(err)} for ${sql}`);
    assert.ok(err.message.length > 0);
    return 'rejected';
  }
  // The generators call no asynchronous function, so every rule evaluates synchronously.
  assert.equal(rule.async, false, sql);
  const started = performance.now();
  try {
    const res = rule.evaluate(createMessageContext(baseEvent({ payload: body })), 'fuzz');
    assert.ok(!(res instanceof Promise));
    if (res.matched) JSON.stringify(toJsonValue(res.outputs));
  } catch (err) {
    assert.ok(err instanceof RuleEvalError, `evaluate threw ${String(err)} (${(err as Error)?.constructor?.name}) for ${sql}`);
  }
  const took = performance.now() - started;
  assert.ok(took < EVAL_BOUND_MS, `evaluation took ${took} ms for ${sql}`);
  return 'compiled';
}

test(`fuzz: ${RUNS * 3} random and mutated statements with random payloads`, { timeout: 180_000 }, () => {
  const counts = { compiled: 0, rejected: 0 };
  // Three runs with different shapes so each kind gets its share; seeds vary per run unless set.
  for (const arb of [statement, mutated, anySql]) {
    fc.assert(
      fc.property(arb, payload, (sql, body) => {
        counts[check(sql, body)]++;
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  }
  assert.equal(counts.compiled + counts.rejected, RUNS * 3);
  assert.ok(counts.compiled > RUNS / 2, `too few statements compiled (${counts.compiled}) for the evaluator to be exercised`);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(Object.getPrototypeOf({}), Object.prototype);
  console.log(`# fuzz: ${counts.compiled} compiled and evaluated, ${counts.rejected} rejected with a RuleError`);
});
