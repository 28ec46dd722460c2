// A minimal stand-in for the conformance branch's cases.ts (same case shape, same runFamily
// name), so the function families run before the two branches meet: each case goes through
// `weir eval`'s own path (evalLine) and compares the JSON line it answers. When merged, import
// from ./cases.js instead and delete this file. It cannot tell 2.0 from 2 (JSON.parse); the
// cases that depend on that compare str() text instead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evalLine } from '../../../src/rules/eval-lines.js';

export class Fails {
  constructor(readonly text?: string) {}
}
export const fails = (text?: string): Fails => new Fails(text);

export interface ConformanceCase {
  /** The EMQX test it restates: `emqx_rule_funcs_SUITE:t_xxx`. */
  from: string;
  sql: string;
  input: Record<string, unknown>;
  /** The one output record (absent values as null, as weir eval prints them), or fails(). */
  expect: unknown;
}

/**
 * One function call as a case: `SELECT <expr> AS r FROM "t/1"`, the payload (a JSON value, so
 * arguments with newlines or non-ASCII text need no SQL escapes) read as payload.x in `expr`.
 */
export function call(from: string, expr: string, expect: unknown, payload?: unknown): ConformanceCase {
  return {
    from,
    sql: `SELECT ${expr} AS r FROM "t/1"`,
    input: { topic: 't/1', ...(payload === undefined ? {} : { payload }) },
    expect: expect instanceof Fails ? expect : { r: expect },
  };
}

async function checkCase(c: ConformanceCase): Promise<void> {
  const got = JSON.parse(await evalLine(JSON.stringify({ sql: c.sql, event: c.input, rule_id: 'conformance' }))) as { ok: boolean; outputs?: unknown[]; error?: string };
  const where = `${c.from}: ${c.sql}`;
  if (c.expect instanceof Fails) {
    assert.equal(got.ok, false, `${where}: should fail, gave ${JSON.stringify(got.outputs)}`);
    if (c.expect.text !== undefined) assert.ok(got.error?.includes(c.expect.text), `${where}: error ${JSON.stringify(got.error)} lacks ${JSON.stringify(c.expect.text)}`);
    return;
  }
  assert.equal(got.ok, true, `${where}: failed: ${got.error}`);
  // The conformance branch makes weir eval print an undefined field as null; on this branch it is
  // left out, read here as that null.
  const out = { ...(got.outputs?.[0] as object) } as Record<string, unknown>;
  for (const k of Object.keys(c.expect as object)) if (!Object.hasOwn(out, k)) out[k] = null;
  assert.deepStrictEqual(out, c.expect, where);
}

/** One test per case and one named with the family's pass count. */
export async function runFamily(family: string, cases: readonly ConformanceCase[]): Promise<void> {
  const failures: string[] = [];
  for (const c of cases) {
    try {
      await checkCase(c);
    } catch (err) {
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  for (const [i, c] of cases.entries()) test(`${family} ${i + 1}: ${c.from}`, () => checkCase(c));
  test(`${family}: ${cases.length - failures.length}/${cases.length} EMQX cases give EMQX's answer`, () => {
    assert.deepEqual(failures, []);
  });
}
