// One SQL mistake, one position: `weir check` and `weir test` name the same file:line:col for a
// rule that does not compile (config/rule-error-at.ts), whether the SQL is a block, a quoted
// string with escapes, or a plain scalar.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../harness/weir.js';

const RULE_TAIL = `actions:
  - sink: tsdb
    table: t
    columns: { temp: '\${temp}' }
tests:
  - event: { topic: device/1/telemetry, payload: '{"temp": 31}' }
    expect: { outputs: [{ temp: 31 }] }
`;

/** The SQL written three ways; the error is the second '>' of '>>', at `want` in the file. */
const CASES: Array<{ name: string; sql: string; want: string }> = [
  {
    name: 'block literal',
    sql: 'sql: |\n  SELECT payload.temp AS temp,\n    clientid\n  FROM "device/+/telemetry"\n  WHERE payload.temp >> 30\n',
    want: '5:23',
  },
  { name: 'double-quoted with escapes', sql: 'sql: "SELECT payload.temp AS temp FROM \\"device/+/telemetry\\" WHERE payload.temp >> 30"\n', want: '1:83' },
  { name: 'single-quoted', sql: `sql: 'SELECT payload.temp AS temp FROM "device/+/telemetry" WHERE payload.temp >> 30'\n`, want: '1:81' },
  { name: 'plain', sql: 'sql: SELECT payload.temp AS temp FROM "device/+/telemetry" WHERE payload.temp >> 30\n', want: '1:80' },
];

for (const c of CASES) {
  test(`a broken rule (${c.name}): weir check and weir test give the same line:col, the error's place in the file`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weir-position-'));
    try {
      mkdirSync(join(dir, 'rules'));
      writeFileSync(join(dir, 'weir.yaml'), 'sinks:\n  tsdb:\n    type: postgres\n    url: postgres://weir@127.0.0.1:5432/weir\n');
      const file = join(dir, 'rules/bad.yaml');
      writeFileSync(file, `${c.sql}id: bad\n${RULE_TAIL}`);
      const [check, ruleTest] = await Promise.all([runCli(['check', '--config', join(dir, 'weir.yaml')]), runCli(['test', file])]);
      assert.equal(check.code, 1, check.stderr);
      assert.equal(ruleTest.code, 1, ruleTest.stdout);
      const at = (out: string) => /bad\.yaml:(\d+:\d+): sql: expected an expression, found '>'/.exec(out)?.[1];
      assert.equal(at(check.stderr), c.want, `weir check:\n${check.stderr}`);
      assert.equal(at(ruleTest.stdout), c.want, `weir test:\n${ruleTest.stdout}`);
      // The caret line under the same character in both.
      const caret = (out: string) => out.split('\n').find((l) => /^\s*\^/.test(l));
      assert.equal(caret(ruleTest.stdout), caret(check.stderr));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
