// A newcomer's first experiment: with `npm run demo` running, edit the shipped rule and watch the
// rows change. The demo runs on a temporary copy of weir.yaml and rules/; the rule's edit must be
// reloaded (said on stdout, as `weir run` does it: core/app/rules-watch.ts) and the rows stored after
// it must carry the edit. The rows are read from the demo's embedded database over its wire port.
import assert from 'node:assert/strict';
import { cpSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { ROOT, spawnDemo } from './demo-process.js';

test('weir demo: editing a rule file reloads the rules, and the rows stored after carry the edit', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'weir-demo-reload-'));
  copyFileSync(join(ROOT, 'weir.yaml'), join(dir, 'weir.yaml'));
  cpSync(join(ROOT, 'rules'), join(dir, 'rules'), { recursive: true });
  const ruleFile = join(dir, 'rules/telemetry.yaml');
  const demo = spawnDemo(process.execPath, [
    '--import',
    'tsx',
    'src/cli/demo.ts',
    '--config',
    join(dir, 'weir.yaml'),
    '--http-port',
    '0',
    '--devices',
    '5',
    '--interval-ms',
    '100',
  ]);
  const { child, exited } = demo;
  const show = () => `\nstdout:\n${demo.out()}\nstderr:\n${demo.err()}`;
  const until = async (what: string, ok: () => boolean | Promise<boolean>, ms: number) => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
      if (await ok()) return;
      assert.equal(child.exitCode, null, `the demo exited while waiting for ${what}${show()}`);
    }
    assert.fail(`${what}: not within ${ms} ms${show()}`);
  };
  let db: pg.Client | undefined;
  try {
    await until('rows stored', () => /stored [1-9]/.test(demo.out()), 60_000);
    db = new pg.Client({ connectionString: /database (postgres:\/\/\S+)/.exec(demo.out())![1] });
    await db.connect();
    const count = async (where: string) => (await db!.query<{ n: number }>(`SELECT count(*)::int AS n FROM telemetry WHERE ${where}`)).rows[0]!.n;
    assert.equal(await count('temp >= 1000'), 0, 'the simulated devices report temperatures below 1000');

    const rule = readFileSync(ruleFile, 'utf8');
    assert.ok(rule.includes('payload.temp AS temp,'));
    writeFileSync(ruleFile, rule.replace('payload.temp AS temp,', 'payload.temp + 1000 AS temp,'));
    await until('the reload is reported', () => /rules reloaded from .*: telemetry_to_tsdb/.test(demo.out()), 10_000);
    const before = await count('true');
    await until('rows with the edited temperature', async () => (await count('temp >= 1000')) > 0, 20_000);
    assert.ok(before > 0);
    assert.doesNotMatch(demo.out(), /rejected/);
    assert.ok(demo.out().includes(`edit the rules in ${join(dir, 'rules')}`), 'the demo says where the rules it reloads are');
  } finally {
    await db?.end().catch(() => {});
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
  }
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
  const { code } = await exited;
  clearTimeout(timer);
  rmSync(dir, { recursive: true, force: true });
  assert.equal(code, 0, `the demo exited with ${code}${show()}`);
  assert.doesNotMatch(demo.err(), /error|failed/i);
});
