// The EMQX conformance suite's one case shape and runner (docs/rules.md, EMQX conformance). Each
// case is weir's own restatement of what one EMQX test asserts, named by that test; it runs
// through `weir eval`'s own path (src/rules/tools/eval-lines.ts: the JSON line in, the JSON line out),
// so what passes here is what an operator sees from `weir eval`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evalLine } from '../../../src/rules/tools/eval-lines.js';

/** A float whose value is a whole number, as EMQX prints it (`2.0`); see parseKeepingFloats. */
export class Float {
  constructor(readonly value: number) {}
}
/** `float(2)`: the expected output holds the float 2.0, not the integer 2. */
export const float = (n: number): Float => new Float(n);

/** The rule does not match (FROM or WHERE): `{"ok": true, "matched": false}`. */
export const NO_MATCH = Symbol('no match');
/** The evaluation fails (`{"ok": false}`), its error containing `text` when given. */
export class Fails {
  constructor(readonly text?: string) {}
}
export const fails = (text?: string): Fails => new Fails(text);

export interface ConformanceCase {
  /** The EMQX test it restates: `emqx_rule_engine_SUITE:t_sqlselect_01`. */
  from: string;
  sql: string;
  /** The event as a `weir eval` line gives it: payload (text or a JSON value), topic, clientid… */
  input: Record<string, unknown>;
  /**
   * One record (a SELECT's output), a list of records (FOREACH: every output), NO_MATCH, or
   * fails(). Undefined fields are `null`, as `weir eval` prints them; integral floats are float(n).
   */
  expect: unknown;
  /**
   * EMQX asserted with a map pattern (`?assertMatch(#{a := 1}, …)`): records need hold only the
   * fields expected, at every depth; lists still match element by element.
   */
  partial?: true;
}

/** What `weir eval` answers for one case, with integral floats kept apart from integers. */
export async function evalCase(c: ConformanceCase): Promise<{ ok: boolean; matched?: boolean; outputs?: unknown[]; error?: string }> {
  const line = await evalLine(JSON.stringify({ sql: c.sql, event: c.input, rule_id: 'conformance' }));
  return parseKeepingFloats(line) as { ok: boolean; matched?: boolean; outputs?: unknown[]; error?: string };
}

/** Checks one case; throws an AssertionError that says what weir answered instead. */
export async function checkCase(c: ConformanceCase): Promise<void> {
  const got = await evalCase(c);
  const where = `${c.from}: ${c.sql}`;
  if (c.expect instanceof Fails) {
    assert.equal(got.ok, false, `${where}: should fail, gave ${JSON.stringify(got)}`);
    if (c.expect.text !== undefined)
      assert.ok(got.error?.includes(c.expect.text), `${where}: error ${JSON.stringify(got.error)} lacks ${JSON.stringify(c.expect.text)}`);
    return;
  }
  assert.equal(got.ok, true, `${where}: failed: ${got.error}`);
  if (c.expect === NO_MATCH) {
    assert.equal(got.matched, false, `${where}: should not match, gave ${JSON.stringify(got.outputs)}`);
    return;
  }
  assert.equal(got.matched, true, `${where}: did not match`);
  const outputs = Array.isArray(c.expect) ? got.outputs : got.outputs?.[0];
  if (!Array.isArray(c.expect)) assert.equal(got.outputs?.length, 1, `${where}: ${got.outputs?.length} outputs`);
  assert.deepStrictEqual(c.partial ? shapedLike(outputs, c.expect) : outputs, c.expect, where);
}

/** `got` with only the record fields `want` names, at every depth (an Erlang map pattern). */
function shapedLike(got: unknown, want: unknown): unknown {
  if (Array.isArray(got) && Array.isArray(want)) return got.map((g, i) => shapedLike(g, want[i]));
  if (!isRecord(got) || !isRecord(want)) return got;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(want)) if (Object.hasOwn(got, k)) out[k] = shapedLike(got[k], want[k]);
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Float);
}

/**
 * Registers one test per case and one test named with the family's pass count, so the runner's
 * output reads `sql-select: 52/52 EMQX cases give EMQX's answer`.
 */
export async function runFamily(family: string, cases: readonly ConformanceCase[]): Promise<void> {
  const failures: string[] = [];
  for (const c of cases) {
    try {
      await checkCase(c);
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  for (const [i, c] of cases.entries()) {
    test(`${family} ${i + 1}: ${c.from}`, () => checkCase(c));
  }
  test(`${family}: ${cases.length - failures.length}/${cases.length} EMQX cases give EMQX's answer`, () => {
    assert.deepEqual(failures, []);
  });
}

/**
 * JSON.parse, except that a number written as a float with a whole value (`2.0`, `1e3`) becomes
 * Float: JSON.parse alone would make `2.0` and `2` the same, and EMQX keeps them apart.
 */
export function parseKeepingFloats(text: string): unknown {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const value = (): unknown => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return out;
      }
      for (;;) {
        ws();
        const k = value() as string;
        ws();
        i++; // ':'
        Object.defineProperty(out, k, { value: value(), enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i++] === '}') return out;
      }
    }
    if (ch === '[') {
      i++;
      const out: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return out;
      }
      for (;;) {
        out.push(value());
        ws();
        if (text[i++] === ']') return out;
      }
    }
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const s = JSON.parse(text.slice(i, j + 1)) as string;
      i = j + 1;
      return s;
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) throw new SyntaxError(`not JSON at ${i}: ${text.slice(i, i + 20)}`);
    i += m[0].length;
    const v = JSON.parse(m[0]) as unknown;
    return typeof v === 'number' && /[.eE]/.test(m[0]) && Number.isInteger(v) ? new Float(v) : v;
  };
  return value();
}
