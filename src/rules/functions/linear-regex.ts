// The one engine a rule's regular expressions run on: RE2, through the npm package re2js (a
// pure-JavaScript port of Go's regexp). RE2 matches in time linear in the input: no pattern and
// no string can make it backtrack, where JavaScript's RegExp took 158 s over 40 `a`s and a `!`
// with `^(a+)+$` and held the whole process meanwhile (issue 28). The price is what needs
// backtracking — backreferences, lookahead and lookbehind, atomic groups, possessive
// quantifiers —, refused with rule.bad_regex, and the time of a call: 1.4-5 µs on typical
// telemetry patterns, 8-31 times RegExp's (bench/regex.ts, docs/benchmarks.md "Regular
// expressions"), where a rule without a regex costs about 1-3 µs a message.
//
// Why re2js (measured, docs/benchmarks.md): V8's own linear engine (`--enable-experimental-
// regexp-engine`, the `l` flag) is behind a V8 flag on node's command line and, in Node 20,
// refuses the `i` and `u` flags, so `(?i)` and any non-ASCII pattern could not run on it;
// re2-wasm (RE2 itself in WebAssembly, last published 2021) took 6-20 µs a call, copying each
// string into WebAssembly memory, and 51 ms to load; re2js is kept up (2.10, November), has no
// dependencies and reads RE2's syntax, which is PCRE's (EMQX's) minus the backtracking features:
// inline options anywhere, `(?P<name>…)`, `\x{41}`, `\z`, POSIX classes.
//
// re2js is loaded on the first pattern compiled (13-33 ms measured), so a rule set without a
// regular expression and `weir --help` never pay for it.
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import { checkBudget } from '../compile/budget.js';
import { RuleEvalError } from '../errors.js';
import { LIMITS } from '../limits.js';

type Engine = typeof RE2JS;

let engine: Engine | undefined;

function re2(): Engine {
  engine ??= (createRequire(import.meta.url)('re2js') as { RE2JS: Engine }).RE2JS;
  return engine;
}

/** A compiled pattern and its RE2 program size, the factor of its cost per input character. */
export interface LinearRegex {
  readonly re: RE2JS;
  readonly size: number;
}

/** Work (characters × instructions) from which a call checks the evaluation budget: about 1 ms at RE2's slowest, and a clock read (50-160 ns) beside it is noise. */
const CHECK_BUDGET_FROM = 10_000;

/** Compiled patterns, bounded: rules' SQL patterns by their text, JSONata's apart (their syntax differs). */
const cache = new Map<string, LinearRegex>();
const jsonataCache = new Map<string, LinearRegex>();

function remember(map: Map<string, LinearRegex>, key: string, compiled: LinearRegex): LinearRegex {
  if (map.size >= 500) map.clear();
  map.set(key, compiled);
  return compiled;
}

/**
 * A rule's pattern compiled for RE2, cached (bounded). A leading `(?x)` (PCRE's extended mode,
 * which RE2 lacks) is dropped, as weir always did; any other inline option is RE2's own.
 */
export function compileRegex(fn: string, pattern: string): LinearRegex {
  return cache.get(pattern) ?? remember(cache, pattern, compileWith(fn, pattern, withoutExtended(pattern)));
}

function withoutExtended(pattern: string): string {
  const inline = /^\(\?([imsxU]+)\)/.exec(pattern);
  if (!inline || !inline[1]!.includes('x')) return pattern;
  const rest = inline[1]!.replaceAll('x', '');
  return `${rest ? `(?${rest})` : ''}${pattern.slice(inline[0].length)}`;
}

function compileWith(fn: string, shown: string, source: string): LinearRegex {
  if (source.length > LIMITS.maxRegexLength) {
    throw new RuleEvalError('rule.limit', `${fn}: a regular expression of ${source.length} characters is longer than ${LIMITS.maxRegexLength}`);
  }
  try {
    const re = re2().compile(source);
    return { re, size: re.programSize() };
  } catch (err) {
    throw new RuleEvalError('rule.bad_regex', `${fn}: ${refusal(shown, err)}`, { cause: err });
  }
}

/** Why a pattern is refused: invalid anywhere, or valid only for a backtracking engine. */
function refusal(pattern: string, err: unknown): string {
  const why = (err instanceof Error ? err.message : String(err)).replace(/^error parsing regexp: /, '');
  let backtracking = false;
  try {
    // Compiling (never running) a RegExp is linear: it only tells whether the syntax exists.
    new RegExp(pattern.replace(/^\(\?[imsxU]+\)/, ''));
    backtracking = true;
  } catch {
    // invalid for both engines
  }
  if (!backtracking) return `invalid regular expression ${JSON.stringify(pattern)}: ${why}`;
  return (
    `regular expression ${JSON.stringify(pattern)} needs a backtracking engine (${why}); weir runs patterns in time linear in ` +
    'their input, without backreferences, lookaround, atomic groups or possessive quantifiers (docs/rules.md, "Regular expressions")'
  );
}

/**
 * What finding one more match costs, in units of work: a find() takes 1.5-5 µs whatever it scans
 * (bench/regex.ts, a regex_replace of every character), about 40 units at 50-133 ns a unit.
 */
const MATCH_WORK = 40;

/**
 * Admits one call over `input`: fails with rule.limit when its work (length × program size)
 * exceeds LIMITS.maxRegexWork, and checks the evaluation budget when the call is not small.
 * Returns the work, for chargeMatch.
 */
export function admitInput(fn: string, compiled: LinearRegex, input: string): number {
  const work = input.length * compiled.size;
  if (work < CHECK_BUDGET_FROM) return work;
  if (work > LIMITS.maxRegexWork) throw tooMuchWork(fn, `a pattern of ${compiled.size} instructions over ${input.length} characters`);
  checkBudget(fn);
  return work;
}

/** Charges one more match of a global replacement to `work` (from admitInput): past the limit, rule.limit. */
export function chargeMatch(fn: string, work: number, matches: number): number {
  const total = work + MATCH_WORK;
  if (total > LIMITS.maxRegexWork) throw tooMuchWork(fn, `${matches} matches`);
  return total;
}

function tooMuchWork(fn: string, what: string): RuleEvalError {
  return new RuleEvalError('rule.limit', `${fn}: ${what} is more regex work than ${LIMITS.maxRegexWork} (characters × instructions, ${MATCH_WORK} a match)`);
}

/** Where the next global match may start after one from `start` to `end`: past an empty match by one code point, as RegExp's `u` flag and PCRE do. */
export function nextStart(input: string, start: number, end: number): number {
  if (end > start) return end;
  const c = input.charCodeAt(end);
  return end + (c >= 0xd800 && c <= 0xdbff && end + 1 < input.length ? 2 : 1);
}

/**
 * RE2 behind the RegExp interface JSONata calls (its `RegexEngine` option): `$match`, `$replace`,
 * `$split` and `$contains` with a /regex/ run on RE2 too. JSONata hands over the RegExp its parser
 * built (compiling one does not match anything) with its `g` and its `i`/`m` flags, sets
 * `lastIndex`, calls `exec` and reads `lastIndex` back, as on a global RegExp. JSONata's regex
 * syntax is JavaScript's, translated by re2js.
 */
export class JsonataRegex {
  lastIndex = 0;
  private readonly compiled: LinearRegex;

  constructor(native: RegExp) {
    const key = `${native.flags}/${native.source}`;
    this.compiled = jsonataCache.get(key) ?? remember(jsonataCache, key, compileWith('jsonata', native.source, re2().translateRegExp(native)));
  }

  exec(input: string): RegExpExecArray | null {
    if (input.length * this.compiled.size > LIMITS.maxRegexWork) throw tooMuchWork('jsonata', `a regular expression over ${input.length} characters`);
    const m = this.compiled.re.matcher(input);
    if (this.lastIndex > input.length || !m.find(this.lastIndex)) {
      this.lastIndex = 0;
      return null;
    }
    const groups: string[] = [];
    for (let i = 0; i <= m.groupCount(); i++) groups.push(m.group(i) ?? (undefined as unknown as string));
    const out = groups as unknown as RegExpExecArray;
    out.index = m.start();
    out.input = input;
    this.lastIndex = m.end();
    return out;
  }
}
