// Fuzz: pathological regular expressions (nested quantifiers, overlapping alternations, counted
// repeats, issue 28's `^(a+)+$`) over the inputs that make a backtracking engine explode (runs of
// `a` with a last character that fails the match), from a few characters up to the regex work
// limit. Every evaluation of regex_match, regex_extract and regex_replace through the real rule
// engine must end within the bound (no exponential blow-up) with a value, or rule.limit /
// rule.bad_regex. On inputs short enough for RegExp to backtrack through, the results must be
// RegExp's: the linear engine changes the time, not the answer.
//
//   WEIR_REGEX_FUZZ_RUNS=20000 npm test -- test/rules/regex-fuzz.test.ts
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compileSql, createMessageContext, RuleEvalError } from '../../src/rules/index.js';
import { LIMITS } from '../../src/rules/limits.js';
import { baseEvent } from './helpers.js';

const RUNS = Number(process.env.WEIR_REGEX_FUZZ_RUNS ?? 1_500);
/** Generous for a shared 2-core VM: the point is no blow-up (RegExp takes minutes on these), not speed. */
const EVAL_BOUND_MS = 1_000;
/** Inputs up to this length are also run through RegExp, for patterns shallow enough that it backtracks through them quickly. */
const NATIVE_MAX = 10;
const NATIVE_DEPTH = 2;

/** One rule per function, so that each evaluation is one call: the bound is per call. */
const RULES = {
  m: compileSql(`SELECT regex_match(payload.s, payload.re) AS v FROM "t/#"`),
  e: compileSql(`SELECT regex_extract(payload.s, payload.re) AS v FROM "t/#"`),
  r: compileSql(`SELECT regex_replace(payload.s, payload.re, '<&>') AS v FROM "t/#"`),
} as const;

/**
 * A generated pattern, with what the comparison with RegExp needs to know: whether it can match
 * the empty string, and whether a quantified group can. There JavaScript rejects an empty
 * iteration (of `?` too) and backtracks into the next alternative, where PCRE (EMQX) and RE2 both
 * take it: the two match the same strings but may pick another match, so only regex_match is
 * compared then.
 */
interface Pat {
  readonly src: string;
  readonly nullable: boolean;
  readonly emptyLoop: boolean;
  /** How deeply quantifiers nest, counted repeats weighing more: RegExp is run only on the shallow ones. */
  readonly depth: number;
}

const atom = (src: string): Pat => ({ src, nullable: /[?*]$/.test(src), emptyLoop: false, depth: /[?*]$/.test(src) ? 1 : 0 });
const QUANTIFIERS: [string, boolean][] = [
  ['*', true],
  ['+', false],
  ['?', true],
  ['{2}', false],
  ['{1,3}', false],
  ['{5}', false],
  ['{0,20}', true],
  ['{20}', false],
  ['*?', true],
  ['+?', false],
];

/** Patterns built to backtrack: nested and stacked quantifiers over overlapping atoms. */
const pattern: fc.Arbitrary<Pat> = fc.letrec<{ p: Pat }>((tie) => ({
  p: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'aa', 'b', '.', '\\w', '[ab]', 'a?', '.*', '\\s?', 'é').map(atom),
    fc.tuple(tie('p'), fc.constantFrom(...QUANTIFIERS), fc.boolean()).map(([p, [q, zero], capture]) => ({
      src: capture ? `(${p.src})${q}` : `(?:${p.src})${q}`,
      nullable: zero || p.nullable,
      emptyLoop: p.emptyLoop || p.nullable,
      depth: p.depth + (['{5}', '{0,20}', '{20}'].includes(q) ? 3 : 1),
    })),
    fc.tuple(tie('p'), tie('p')).map(([x, y]) => ({
      src: `(${x.src}|${y.src})`,
      nullable: x.nullable || y.nullable,
      emptyLoop: x.emptyLoop || y.emptyLoop,
      depth: Math.max(x.depth, y.depth),
    })),
    fc.tuple(tie('p'), tie('p')).map(([x, y]) => ({
      src: `${x.src}${y.src}`,
      nullable: x.nullable && y.nullable,
      emptyLoop: x.emptyLoop || y.emptyLoop,
      depth: Math.max(x.depth, y.depth),
    })),
  ),
})).p;

const KNOWN: Pat[] = [
  ...['^(a+)+$', '(a|a)*b', '(a|aa)+$', '(.*a){20}', '((a+)+)+b', '(a+|b+)*c', '^(([a-z])+.)+[A-Z]([a-z])+$'].map((src) => ({
    src,
    nullable: false,
    emptyLoop: false,
    depth: 3,
  })),
  ...['^(\\w+\\s?)+$', '(a*)*$', '^(a|a?)+$', '(.*){10}!'].map((src) => ({ src, nullable: true, emptyLoop: true, depth: 3 })),
];

const anchored = fc
  .tuple(fc.oneof(pattern, fc.constantFrom(...KNOWN)), fc.constantFrom('', '^'), fc.constantFrom('', '$', '!', 'b$'))
  .map(([p, pre, post]) => ({ ...p, src: `${pre}${p.src}${post}` }));

/** Runs of `a` (and `ab`) ending in a character that fails the match: short, medium, and up to the work limit. */
const input = fc
  .tuple(
    fc.oneof(
      { weight: 5, arbitrary: fc.integer({ min: 0, max: NATIVE_MAX }) },
      { weight: 4, arbitrary: fc.integer({ min: 11, max: 2_000 }) },
      { weight: 1, arbitrary: fc.integer({ min: 2_001, max: 200_000 }) },
    ),
    fc.constantFrom('a', 'ab', 'a a'),
    fc.constantFrom('!', '', 'b', ' ', 'é', '😀'),
  )
  .map(([n, unit, last]) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n) + last);

/** What RegExp (the engine weir used before) gives, with the rule functions' semantics. */
function native(re: string, s: string): { m: boolean; e: string[]; r: string } {
  const one = new RegExp(re, 'u');
  const m = one.exec(s);
  return {
    m: m !== null,
    e: m ? m.slice(1).map((g) => g ?? '') : [],
    r: s.replace(new RegExp(re, 'gu'), (...a) => `<${a[0]}>`),
  };
}

function nativeParses(re: string): boolean {
  try {
    new RegExp(re, 'u');
    return true;
  } catch {
    return false;
  }
}

test(`regex fuzz: ${RUNS} pathological patterns × inputs, each evaluation under ${EVAL_BOUND_MS} ms, RegExp's answers on short inputs`, {
  timeout: 600_000,
}, () => {
  const tally = { value: 0, limit: 0, bad_regex: 0, compared: 0 };
  let slowest = { ms: 0, what: '' };
  fc.assert(
    fc.property(anchored, input, fc.constantFrom('m', 'e', 'r' as const), ({ src: re, emptyLoop, depth }, s, f) => {
      const t0 = performance.now();
      let out: { v: unknown } | undefined;
      try {
        const r = RULES[f].evaluate(createMessageContext(baseEvent({ topic: 't/1', payload: JSON.stringify({ s, re }) })), 'fuzz');
        assert.ok(!(r instanceof Promise) && r.matched);
        out = r.outputs[0] as { v: unknown };
        tally.value++;
      } catch (err) {
        assert.ok(err instanceof RuleEvalError, `${String(err)} for ${re}`);
        assert.ok(err.code === 'rule.limit' || err.code === 'rule.bad_regex', `${err.code}: ${err.message}`);
        tally[err.code === 'rule.limit' ? 'limit' : 'bad_regex']++;
        // rule.limit only for work past the limit (the input is at most 200,000 characters).
        if (err.code === 'rule.limit') assert.match(err.message, /more regex work than/);
      }
      const took = performance.now() - t0;
      if (took > slowest.ms) slowest = { ms: took, what: `${f} ${re} over ${s.length} characters` };
      assert.ok(took < EVAL_BOUND_MS, `${f}: ${re} over ${s.length} characters took ${took.toFixed(0)} ms`);
      if (out && depth <= NATIVE_DEPTH && s.length <= NATIVE_MAX + 2 && nativeParses(re)) {
        tally.compared++;
        const want = native(re, s);
        // Where the engines may pick different matches, only whether there is one is compared.
        if (f === 'm' || !emptyLoop) assert.deepEqual(out.v, want[f], `${f}: ${re} over ${JSON.stringify(s)}`);
      }
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
  console.log(
    `regex fuzz: ${JSON.stringify(tally)}, slowest evaluation ${slowest.ms.toFixed(1)} ms (${slowest.what}) (bound ${EVAL_BOUND_MS}; work limit ${LIMITS.maxRegexWork})`,
  );
  assert.ok(tally.compared > RUNS / 20, `enough cases compared with RegExp: ${tally.compared}`);
});
