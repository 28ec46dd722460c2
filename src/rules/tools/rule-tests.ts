// Rule tests: a rule file's `tests:` entries (event → expected outputs, no match, or error) run
// against the compiled rule. `weir test` prints the results; this module only computes them.
import { plainNumbers } from '../values/floats.js';
import { toError } from '../../errors.js';
import { compileSql } from '../compile/compile.js';
import { createMessageContext } from '../compile/context.js';
import { eventFromJson } from './eval-lines.js';
import { compileJsonata } from '../compile/jsonata.js';
import { FUNCTIONS } from '../functions/all.js';
import type { FunctionRegistry } from '../functions/registry.js';
import { toJsonValue } from '../values/json-out.js';
import { stripShare } from '../topic.js';
import type { CompiledRule, OutputRecord, RuleEvent } from '../types.js';
import { isObj } from '../values/value-types.js';

export interface RuleTestExpect {
  /** The exact output records, in order. */
  readonly outputs?: unknown[];
  /** The rule must not match (FROM or WHERE false). */
  readonly no_match?: boolean;
  /** The rule must fail: true for any error, or text the error code or message must contain. */
  readonly error?: boolean | string;
}

export interface RuleTestCase {
  readonly name?: string;
  /** Event fields as in `weir eval`; `payload` may be an object (it is JSON-encoded). */
  readonly event?: Record<string, unknown>;
  readonly expect: RuleTestExpect;
}

export interface RuleTestSpec {
  readonly sql?: string;
  readonly jsonata?: string;
  readonly filters?: readonly string[];
  readonly tests: readonly RuleTestCase[];
}

export interface RuleTestResult {
  readonly index: number;
  readonly name: string;
  readonly pass: boolean;
  /** Why it failed (or 'ok'): the first difference, with its path. */
  readonly message: string;
}

/** A topic the first filter matches, for tests that leave the topic out (`a/+/#` → `a/x/x`). */
export function exampleTopic(filters: readonly string[]): string {
  const f = filters[0];
  if (f === undefined) return '';
  return stripShare(f)
    .split('/')
    .map((l) => (l === '+' || l === '#' ? 'x' : l))
    .join('/');
}

/** The first difference between two JSON-like values, as "at <path>: expected X, got Y". */
export function firstDifference(expected: unknown, actual: unknown, path = '$'): string | undefined {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      if (i >= actual.length) return `at ${path}[${i}]: expected ${show(expected[i])}, got nothing (${actual.length} element(s))`;
      if (i >= expected.length) return `at ${path}[${i}]: unexpected ${show(actual[i])} (expected ${expected.length} element(s))`;
      const d = firstDifference(expected[i], actual[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isObj(expected) && isObj(actual)) {
    for (const k of Object.keys(expected)) {
      if (!Object.hasOwn(actual, k)) return `at ${path}.${k}: expected ${show(expected[k])}, got nothing`;
      const d = firstDifference(expected[k], actual[k], `${path}.${k}`);
      if (d) return d;
    }
    for (const k of Object.keys(actual)) {
      if (!Object.hasOwn(expected, k)) return `at ${path}.${k}: unexpected ${show(actual[k])}`;
    }
    return undefined;
  }
  if (Object.is(expected, actual) || (typeof expected === 'number' && expected === actual)) return undefined;
  return `at ${path}: expected ${show(expected)}, got ${show(actual)}`;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

/**
 * Makes the event of a test's fields. The engine's own (eventFromJson) takes them as they are;
 * `weir test` passes the one `weir run` uses (core/app/test-event.ts), so a test sees what is stored.
 */
export type EventMaker = (fields: Record<string, unknown>) => RuleEvent;

/** A test's event as the rule sees it; a left-out topic is one the rule's first filter matches. */
function testEvent(t: RuleTestCase, filters: readonly string[], eventOf: EventMaker): RuleEvent {
  const ev = { ...(t.event ?? {}) };
  if (ev.topic === undefined) ev.topic = exampleTopic(filters);
  return eventOf(ev);
}

/**
 * The outputs a rule gives for its own tests' events, with each event: sample values for checking
 * that a sink can take them (`weir check --connect`). Tests that fail or expect an error give none.
 */
export async function ruleTestOutputs(
  rule: CompiledRule,
  tests: readonly RuleTestCase[],
  ruleId: string,
  eventOf: EventMaker = eventFromJson,
): Promise<Array<{ record: OutputRecord; event: RuleEvent }>> {
  const out: Array<{ record: OutputRecord; event: RuleEvent }> = [];
  for (const t of tests) {
    if (t.expect?.error) continue;
    try {
      const event = testEvent(t, rule.filters, eventOf);
      const res = await rule.evaluate(createMessageContext(event), ruleId);
      if (res.matched) for (const record of res.outputs) out.push({ record, event });
    } catch {
      // a failing test is weir test's to report
    }
  }
  return out;
}

function errorMatches(want: boolean | string, err: unknown): boolean {
  if (want === true) return true;
  if (typeof want !== 'string') return false;
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  return code === want || message.includes(want);
}

async function runOne(
  rule: CompiledRule | Error,
  filters: readonly string[],
  t: RuleTestCase,
  ruleId: string,
  eventOf: EventMaker,
): Promise<{ pass: boolean; message: string }> {
  const want = t.expect ?? {};
  let outputs: unknown;
  let matched: boolean;
  try {
    if (rule instanceof Error) throw rule;
    const res = await rule.evaluate(createMessageContext(testEvent(t, filters, eventOf)), ruleId);
    matched = res.matched;
    // YAML has one kind of number, so a test's 25 matches the float 25.0 as well.
    outputs = res.matched ? plainNumbers(toJsonValue(res.outputs)) : undefined;
  } catch (err) {
    if (want.error !== undefined && want.error !== false) {
      return errorMatches(want.error, err)
        ? { pass: true, message: 'ok' }
        : { pass: false, message: `expected an error with ${show(want.error)}, got: ${err instanceof Error ? err.message : String(err)}` };
    }
    return { pass: false, message: `failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (want.error !== undefined && want.error !== false) return { pass: false, message: `expected an error, got ${matched ? show(outputs) : 'no match'}` };
  if (want.no_match) return matched ? { pass: false, message: `expected no match, got ${show(outputs)}` } : { pass: true, message: 'ok' };
  if (!matched) return { pass: false, message: 'expected outputs, the rule did not match' };
  if (want.outputs === undefined) return { pass: true, message: 'ok' };
  const diff = firstDifference(want.outputs, outputs);
  return diff ? { pass: false, message: diff } : { pass: true, message: 'ok' };
}

/** Runs every test of a rule; never throws (a rule that does not compile fails each test). */
export async function runRuleTests(
  spec: RuleTestSpec,
  ruleId = 'test',
  eventOf: EventMaker = eventFromJson,
  registry: FunctionRegistry = FUNCTIONS,
): Promise<RuleTestResult[]> {
  let rule: CompiledRule | Error;
  let filters: readonly string[] = spec.filters ?? [];
  try {
    if (typeof spec.sql === 'string') rule = compileSql(spec.sql, registry);
    else if (typeof spec.jsonata === 'string') rule = compileJsonata(spec.jsonata, [...(spec.filters ?? ['#'])]);
    else throw new Error('the rule has neither sql nor jsonata');
    filters = rule.filters;
  } catch (err) {
    rule = toError(err);
  }
  const results: RuleTestResult[] = [];
  for (let i = 0; i < spec.tests.length; i++) {
    const t = spec.tests[i] as RuleTestCase;
    const r = await runOne(rule, filters, t, ruleId, eventOf);
    results.push({ index: i, name: t.name ?? `test ${i + 1}`, ...r });
  }
  return results;
}
