// Regular expressions run on RE2 in linear time (src/rules/functions/linear-regex.ts), and every evaluation
// is bounded (src/rules/compile/budget.ts): issue 28's `^(a+)+$` over 36 `a`s and a `!`, what the engine
// refuses and where that is reported, the EMQX semantics kept, and rule.limit for work past the
// budget. The fuzz over pathological patterns is regex-fuzz.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSql, compileJsonata, compileSql, createMessageContext, RuleError, RuleEvalError } from '../../src/rules/index.js';
import { LIMITS } from '../../src/rules/limits.js';
import { baseEvent } from './helpers.js';

const ctx = (payload: unknown) => createMessageContext(baseEvent({ topic: 't/1', payload: JSON.stringify(payload) }));

/** The value of `expr` AS r over `payload`, or the code of the evaluation error. */
function value(expr: string, payload: unknown = {}): unknown {
  try {
    const r = compileSql(`SELECT ${expr} AS r FROM "t/#"`).evaluate(ctx(payload), 'r');
    assert.ok(!(r instanceof Promise) && r.matched);
    return r.outputs[0]!.r;
  } catch (err) {
    assert.ok(err instanceof RuleEvalError, String(err));
    return err.code;
  }
}

function timed<T>(f: () => T): { result: T; ms: number } {
  const t0 = performance.now();
  const result = f();
  return { result, ms: performance.now() - t0 };
}

test("issue 28: WHERE regex_match(payload.s, '^(a+)+$') over 36 a's and a '!' is no match, at once", () => {
  const rule = compileSql(`SELECT payload.s AS s FROM "t/#" WHERE regex_match(payload.s, '^(a+)+$')`);
  for (const n of [36, 40, 10_000]) {
    const { result, ms } = timed(() => rule.evaluate(ctx({ s: `${'a'.repeat(n)}!` }), 'r'));
    assert.deepEqual(result, { matched: false });
    assert.ok(ms < 1_000, `${n} a's took ${ms} ms`);
  }
  assert.deepEqual(rule.evaluate(ctx({ s: 'aaaa' }), 'r'), { matched: true, outputs: [{ s: 'aaaa' }] });
  // The same patterns through the other two functions.
  const s = `${'a'.repeat(36)}!`;
  assert.equal(value("regex_replace(payload.s, '^(a+)+$', 'x')", { s }), s);
  assert.deepEqual(value("regex_extract(payload.s, '^(a|aa)+$')", { s }), []);
  assert.deepEqual(value("regex_extract(payload.s, '(a|aa)+!')", { s }), ['a']);
});

test('what EMQX rules rely on still holds: inline options, Erlang replacement text, groups', () => {
  const cases: [string, unknown, unknown][] = [
    ["regex_match(payload.s, '(?i)abc')", { s: 'xABCx' }, true],
    ["regex_match(payload.s, '(?s)a.b')", { s: 'a\nb' }, true],
    ["regex_match(payload.s, 'a.b')", { s: 'a\nb' }, false],
    ["regex_match(payload.s, '(?m)^b$')", { s: 'a\nb\nc' }, true],
    ["regex_match(payload.s, '(?ix)ABC')", { s: 'abc' }, true], // a leading x is dropped, as before
    ["regex_match(payload.s, 'é+')", { s: 'caféé' }, true],
    ["regex_replace(payload.s, 'c+', '[&]')", { s: 'accbcd' }, 'a[cc]b[c]d'],
    ["regex_replace(payload.s, '(\\w)(\\d)', '\\2\\1')", { s: 'a1 b2' }, '1a 2b'],
    ["regex_replace(payload.s, '(\\w)', '\\g{1}\\&\\\\')", { s: 'ab' }, 'a&\\b&\\'],
    ["regex_replace(payload.s, '(a)|(b)', '<\\2>')", { s: 'ab' }, '<><b>'],
    ["regex_replace(payload.s, '(a)', '\\9')", { s: 'ab' }, 'b'],
    // Global replacement steps past an empty match by one code point, as RegExp and PCRE do.
    ["regex_replace(payload.s, 'a*', '-')", { s: 'baaac' }, '-b--c-'],
    ["regex_replace(payload.s, '', '-')", { s: '😀b' }, '-😀-b-'],
    ["regex_replace(payload.s, '^a', '-')", { s: 'aaa' }, '-aa'],
    ["regex_extract(payload.s, '(a)|(b)')", { s: 'b' }, ['', 'b']],
    ["regex_extract(payload.s, '(?P<y>\\d{4})-(\\d{2})')", { s: 'on 2024-12-05' }, ['2024', '12']],
    ["regex_extract(payload.s, '([^/]+)/([^/]+)$')", { s: 'device/ab-12/telemetry' }, ['ab-12', 'telemetry']],
  ];
  for (const [expr, payload, want] of cases) assert.deepEqual(value(expr, payload), want, expr);
});

test('a literal pattern the linear engine cannot run is a compile error at the literal; weir check lists every one', () => {
  for (const pattern of ['(a)\\1', 'a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b', '(?>a+)', 'a++', '(']) {
    const sql = `SELECT regex_match(payload.s, '${pattern}') AS r FROM "t/#"`;
    assert.throws(
      () => compileSql(sql),
      (e: unknown) => e instanceof RuleError && e.code === 'rule.bad_regex' && e.col === 31,
      pattern,
    );
  }
  const err = (() => {
    try {
      compileSql(`SELECT regex_extract(payload.s, '(\\w)\\1') AS r FROM "t/#"`);
    } catch (e) {
      return e as RuleError;
    }
  })();
  assert.match(err?.message ?? '', /needs a backtracking engine .*backreferences, lookaround/);
  const errors = checkSql(`SELECT regex_match(payload.s, '(a)\\1') AS a,\n  regex_replace(payload.s, 'x(?=y)', '') AS b\nFROM "t/#"`);
  assert.deepEqual(
    errors.map((e) => [e.code, e.line, e.col]),
    [
      ['rule.bad_regex', 1, 31],
      ['rule.bad_regex', 2, 28],
    ],
  );
  assert.deepEqual(checkSql(`SELECT regex_match(payload.s, '^(a+)+$') AS r FROM "t/#"`), []);
});

test('a pattern from the message that the engine refuses fails that message with rule.bad_regex', () => {
  assert.equal(value('regex_match(payload.s, payload.re)', { s: 'aa', re: '(a)\\1' }), 'rule.bad_regex');
  assert.equal(value('regex_extract(payload.s, payload.re)', { s: 'aa', re: '[' }), 'rule.bad_regex');
  assert.equal(value('regex_match(payload.s, payload.re)', { s: 'aa', re: '^a+$' }), true);
});

test('a call past the regex work limit fails with rule.limit, without running', () => {
  const s = 'a'.repeat(1_000_000);
  const { result, ms } = timed(() => value("regex_extract(payload.s, '(.*a){20}')", { s }));
  assert.equal(result, 'rule.limit');
  assert.ok(ms < 1_000, `${ms} ms`);
  // Under the limit, a long input is matched (in linear time).
  assert.equal(value("regex_match(payload.s, '^a+$')", { s: s.slice(0, 300_000) }), true);
  assert.ok(1_000_000 * 102 > LIMITS.maxRegexWork, 'the limit is what this test assumes');
});

test('a FOREACH that runs past the evaluation budget fails its message with rule.limit, within about the budget', () => {
  const payload = { arr: Array.from({ length: 100_000 }, (_, i) => i), s: 'ab'.repeat(5_000) };
  const rule = compileSql(`FOREACH payload.arr AS x DO regex_replace(payload.s, 'b', 'c') AS y FROM "t/#"`);
  const t0 = performance.now();
  assert.throws(
    () => rule.evaluate(ctx(payload), 'r'),
    (e: unknown) => e instanceof RuleEvalError && e.code === 'rule.limit' && /budget of 1000 ms/.test(e.message),
  );
  const ms = performance.now() - t0;
  assert.ok(ms < LIMITS.evaluationBudgetMs * 5, `${ms} ms`);
  // The next message starts with a whole budget.
  const small = rule.evaluate(ctx({ arr: [1, 2, 3], s: 'ab' }), 'r');
  assert.deepEqual(small, { matched: true, outputs: [{ y: 'ac' }, { y: 'ac' }, { y: 'ac' }] });
});

test("an asynchronous rule's runs share one budget", async () => {
  // Each jsonata() call re-runs the FOREACH from the start: 20,000 elements are 200 M iterations.
  const rule = compileSql(`FOREACH payload.arr AS x DO jsonata('$ + 1', x) AS y FROM "t/#"`);
  const t0 = performance.now();
  await assert.rejects(
    async () => rule.evaluate(ctx({ arr: Array.from({ length: 20_000 }, (_, i) => i) }), 'r'),
    (e: unknown) => e instanceof RuleEvalError && e.code === 'rule.limit',
  );
  assert.ok(performance.now() - t0 < LIMITS.evaluationBudgetMs * 10, `${performance.now() - t0} ms`);
  assert.deepEqual(await rule.evaluate(ctx({ arr: [1, 2] }), 'r'), { matched: true, outputs: [{ y: 2 }, { y: 3 }] });
});

test("JSONata's /regex/ runs on RE2 too: no backtracking, and what needs it is refused", async () => {
  const run = async (expr: string, payload: unknown) => {
    try {
      return await compileJsonata(expr, ['t/#']).evaluate(ctx(payload), 'r');
    } catch (err) {
      assert.ok(err instanceof RuleEvalError, String(err));
      return err.code;
    }
  };
  const s = `${'a'.repeat(40)}!`;
  const t0 = performance.now();
  assert.deepEqual(await run('{"m": $match(payload.s, /^(a+)+$/), "c": $contains(payload.s, /A+!/i)}', { s }), {
    matched: true,
    outputs: [{ c: true }],
  });
  assert.ok(performance.now() - t0 < 1_000);
  assert.deepEqual(await run('{"r": $replace(payload.s, /(\\d+)/, "<$1>"), "p": $split(payload.s, /-/)}', { s: 'a1-b22' }), {
    matched: true,
    outputs: [{ r: 'a<1>-b<22>', p: ['a1', 'b22'] }],
  });
  assert.deepEqual(await run('{"m": $match(payload.s, /b(x)?/).groups}', { s: 'abc' }), { matched: true, outputs: [{ m: [] }] });
  assert.equal(await run('{"m": $match(payload.s, /(a)\\1/)}', { s: 'aa' }), 'rule.bad_regex');
  // JSONata's patterns are cached apart from SQL's: the SQL pattern 'g/abc' is not JSONata's /abc/g.
  assert.deepEqual(await run('{"c": $contains(payload.s, /abc/)}', { s: 'xabc' }), { matched: true, outputs: [{ c: true }] });
  assert.equal(value("regex_match(payload.s, 'g/abc')", { s: 'abc' }), false);
});
