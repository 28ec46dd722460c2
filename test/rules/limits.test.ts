// Limits and error reporting: every rule compile and every evaluation is bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileSql, createMessageContext, parseRuleRecover, RuleError, RuleEvalError } from '../../src/rules/index.js';
import { baseEvent } from './helpers.js';

const evalErr = async (sql: string, payload?: unknown): Promise<string> => {
  try {
    await compileSql(sql).evaluate(createMessageContext(baseEvent(payload === undefined ? {} : { payload: JSON.stringify(payload) })), 'r');
  } catch (err) {
    assert.ok(err instanceof RuleEvalError, String(err));
    return err.code;
  }
  return 'none';
};

test('deep nesting and long SQL are rejected at compile time', () => {
  const deep = `SELECT ${'('.repeat(200)}1${')'.repeat(200)} FROM "t"`;
  assert.throws(
    () => compileSql(deep),
    (e: unknown) => e instanceof RuleError && e.code === 'rule.too_deep',
  );
  assert.throws(
    () => compileSql(`SELECT '${'x'.repeat(70_000)}' FROM "t"`),
    (e: unknown) => e instanceof RuleError && e.code === 'rule.too_long',
  );
  assert.throws(
    () => compileSql('SELECT [1..1000000] AS r FROM "t"'),
    (e: unknown) => e instanceof RuleError && e.code === 'rule.limit',
  );
});

test('functions cannot build unbounded values', async () => {
  assert.equal(await evalErr('SELECT pad(\'x\', 100000000) AS r FROM "#"'), 'rule.limit');
  assert.equal(await evalErr('SELECT bitsl(1, 100000) AS r FROM "#"'), 'rule.limit');
  assert.equal(await evalErr("SELECT sprintf('~9999999s', 'x') AS r FROM \"#\""), 'rule.limit');
  assert.equal(await evalErr('SELECT jsonata(\'($f := function($n){$f($n+1)}; $f(0))\', 1) AS r FROM "#"'), 'rule.limit');
});

test('a decompression bomb stops at the size limit', async () => {
  const { gzipSync } = await import('node:zlib');
  const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024)).toString('base64');
  assert.equal(await evalErr(`SELECT gunzip(base64_decode('${bomb}')) AS r FROM "#"`), 'rule.bad_argument');
});

test('RuleError carries line, column, expected and a caret', () => {
  try {
    compileSql('SELECT a,\n  b c\nFROM "t"');
    assert.fail('should not compile');
  } catch (err) {
    assert.ok(err instanceof RuleError);
    assert.equal(err.line, 2);
    assert.equal(err.col, 5);
    assert.equal(err.expected, 'FROM');
    assert.match(err.message, /\n {2}b c\n {4}\^/);
  }
});

test('recover mode reports every bad field and clause', () => {
  const { statement, errors } = parseRuleRecover('SELECT a +, b, (c FROM "t/#/x" WHERE');
  assert.equal(statement, undefined);
  assert.ok(errors.length >= 3, errors.map((e) => e.message).join('\n'));
});

test('an evaluation error never escapes as anything but RuleEvalError', async () => {
  assert.equal(await evalErr('SELECT payload.x[1..2] AS r FROM "#"'), 'rule.type_error');
  assert.equal(await evalErr('SELECT nth(0, [1]) AS r FROM "#"'), 'rule.bad_index');
  // A pattern from the message is checked when it is met (a literal one, at compile time: regex.test.ts).
  assert.equal(await evalErr('SELECT regex_match(\'a\', payload.re) AS r FROM "#"', { re: '(' }), 'rule.bad_regex');
});

test('checkSql reports every unknown function and wrong arity at once', async () => {
  const { checkSql } = await import('../../src/rules/index.js');
  const errs = checkSql('SELECT nope(1), upper(), kv_store_get(1), lower(clientid) FROM "t/#"');
  assert.deepEqual(
    errs.map((e) => e.code),
    ['rule.unknown_function', 'rule.arity', 'rule.unsupported_function'],
  );
  assert.deepEqual(checkSql('SELECT a FROM "t/#"'), []);
  assert.ok(checkSql('SELECT a +, b FROM "t/#/x"').length >= 2);
});
