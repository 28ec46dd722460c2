// weir reconcile tells a count it could not read (exit 3, the URL or sink named) from a real
// difference (exit 1), against a real PostgreSQL and a port where none listens.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { migrate } from '../../src/sinks/postgres/migrate.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { freePort, tempDir } from '../harness/process.js';
import { ROOT, runCli, writeWeirFiles } from '../harness/weir.js';

test('an unreachable --metrics URL: exit 3, naming the URL and why', async () => {
  const config = 'broker:\n  url: mqtt://127.0.0.1:1\nsinks:\n  db:\n    type: postgres\n    url: postgres://weir@127.0.0.1:1/weir\n';
  const file = join(writeWeirFiles({ config, rules: {} }, 0, tempDir('reconcile')), 'weir.yaml');
  const url = `http://127.0.0.1:${await freePort()}/metrics`;
  const r = await runCli(['reconcile', '-c', file, '-m', url]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, new RegExp(`error: reading --metrics ${url.replace(/[.]/g, '\\.')}: connect ECONNREFUSED`));
  assert.doesNotMatch(r.stderr, /\n +at /);
});

test('weir reconcile --help documents exit 3', async () => {
  const r = await runCli(['reconcile', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /3 when something could not be\s+compared: a --metrics URL, a sink's database or the broker could not be read/);
});

/** weir.yaml with a reachable database (sink tsdb, the shipped rule) and one at a port where nothing listens (sink down). */
async function twoDatabases(): Promise<{ file: string; pgUrl: string; downPort: number }> {
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  await migrate(pgUrl, join(ROOT, 'migrations'));
  const downPort = await freePort();
  const config = `broker: { url: 'mqtt://127.0.0.1:1', client_id: reconcile-down }
sinks:
  tsdb: { type: postgres, url: '${pgUrl}' }
  down: { type: postgres, url: 'postgres://weir@127.0.0.1:${downPort}/weir', connect_timeout_ms: 2000 }
dead_letter: { sink: tsdb }
`;
  const toDown = `id: to_down
sql: SELECT payload.seq AS seq FROM "down/+"
actions:
  - sink: down
    table: samples
    columns:
      seq: \${seq}
`;
  const rules = { 'telemetry.yaml': readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8'), 'to-down.yaml': toDown };
  return { file: join(writeWeirFiles({ config, rules }, 0, tempDir('reconcile-down')), 'weir.yaml'), pgUrl, downPort };
}

test('a sink whose database is unreachable: exit 3, its line says "could not read", never NaN; the reachable one is counted', { timeout: 60_000 }, async () => {
  const { file, downPort } = await twoDatabases();
  const r = await runCli(['reconcile', '-c', file]);
  assert.equal(r.code, 3, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /\n {2}to_down → down: could not read: connect ECONNREFUSED 127\.0\.0\.1:\d+\n/);
  assert.match(r.stdout, /to_down +down +- +- +- +- +- +- +- +could not read +-\n/);
  assert.match(r.stdout, /telemetry_to_tsdb +tsdb +telemetry +- +- +- +- +0 +0 +0 +0\n/, 'the reachable database is counted');
  assert.match(r.stdout, /not reconciled: could not read the count of sink down\n$/);
  assert.match(r.stderr, new RegExp(`(^|\\n)error: could not read the count of sink down: connect ECONNREFUSED 127\\.0\\.0\\.1:${downPort}\\n$`));
  assert.doesNotMatch(`${r.stdout}${r.stderr}`, /NaN|DIFFERENCE|\n +at /);

  const json = await runCli(['reconcile', '-c', file, '--json']);
  assert.equal(json.code, 3, json.stderr);
  const doc = JSON.parse(json.stdout) as {
    ok: boolean;
    differs: boolean;
    unread: string[];
    lines: Array<{ sink: string; unread?: string; difference?: number }>;
  };
  assert.deepEqual([doc.ok, doc.differs, doc.unread], [false, false, ['down']]);
  assert.match(doc.lines.find((l) => l.sink === 'down')?.unread ?? '', /ECONNREFUSED/);
  assert.equal(doc.lines.find((l) => l.sink === 'down')?.difference, undefined);
});

test('a real difference beside an unreachable database still exits 1, and says both', { timeout: 60_000 }, async () => {
  const { file, pgUrl } = await twoDatabases();
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  await c.query(`INSERT INTO telemetry (ts, device_id, seq) VALUES (now(), 'behind-weirs-back', 1)`);
  await c.end();
  const r = await runCli(['reconcile', '-c', file]);
  assert.equal(r.code, 1, `${r.stdout}${r.stderr}`);
  assert.match(r.stderr, /DIFFERENCE rule telemetry_to_tsdb → tsdb \(telemetry\): sink has 1, weir stored 0, difference 1\n/);
  assert.match(r.stderr, /error: could not read the count of sink down: /);
  assert.match(r.stdout, /\nNOT reconciled\n$/);
  assert.doesNotMatch(`${r.stdout}${r.stderr}`, /NaN/);
});
