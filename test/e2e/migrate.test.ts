// weir migrate against a real PostgreSQL: versioned files applied once, in order, recorded; a
// changed migration is refused; on a server without TimescaleDB (one started here, since the
// run's shared server preloads it) the telemetry table is time-indexed and hypertables settings
// are left with a note. The hypertable branch is tested in timescaledb.test.ts.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { freshDatabase, sharedPostgres, startPostgres } from '../harness/postgres.js';
import { tempDir } from '../harness/process.js';
import { ROOT, runCli } from '../harness/weir.js';
import { query } from './fixtures.js';

function config(pgUrl: string, extra = ''): string {
  const dir = tempDir('migrate');
  writeFileSync(join(dir, 'weir.yaml'), `sinks:\n  tsdb:\n    type: postgres\n    url: ${pgUrl}\n${extra}rules_dir: ${join(ROOT, 'rules')}\n`);
  return join(dir, 'weir.yaml');
}

const plain = startPostgres();
after(async () => (await plain).dispose());

test('weir migrate applies each migration once and records it (plain PostgreSQL)', { timeout: 60_000 }, async () => {
  const pgUrl = await freshDatabase((await plain).url);
  const cfg = config(pgUrl, '    hypertables:\n      telemetry: { chunk_interval: 1 day }\n');
  const first = await runCli(['migrate', '-c', cfg]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /applied 001_dead_letter\.sql, 002_telemetry\.sql, 003_ledger\.sql, 004_dead_letter_replay\.sql; 0 already applied\n/);
  assert.match(
    first.stdout,
    /tsdb: note: TimescaleDB is not used: the (server does not preload|timescaledb extension is not installed).*: telemetry stays a plain table/,
  );
  const second = await runCli(['migrate', '-c', cfg]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /applied nothing new; 4 already applied/);
  const versions = await query<{ version: number }>(pgUrl, 'SELECT version FROM weir_migrations ORDER BY version');
  assert.deepEqual(
    versions.map((v) => v.version),
    [1, 2, 3, 4],
  );
  // 004 adds the replay columns only where missing: run again (a table made by hand), it changes nothing.
  await query(pgUrl, readFileSync(join(ROOT, 'migrations/004_dead_letter_replay.sql'), 'utf8'));
  const cols = await query<{ column_name: string }>(
    pgUrl,
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'weir_dead_letter' AND column_name IN ('attempts', 'replay_of', 'replayed_at', 'replay_outcome', 'replay_note') ORDER BY 1",
  );
  assert.deepEqual(
    cols.map((c) => c.column_name),
    ['attempts', 'replay_note', 'replay_of', 'replay_outcome', 'replayed_at'],
  );
  const idx = await query<{ indexname: string }>(pgUrl, "SELECT indexname FROM pg_indexes WHERE tablename = 'telemetry' ORDER BY indexname");
  assert.deepEqual(
    idx.map((i) => i.indexname),
    ['telemetry_pkey', 'telemetry_ts'],
  );
  assert.ok(!first.stdout.includes('password'), 'no credentials echoed');
});

test('a migration changed after it was applied is refused', { timeout: 60_000 }, async () => {
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const cfg = config(pgUrl);
  const dir = tempDir('migrations');
  cpSync(join(ROOT, 'migrations'), dir, { recursive: true });
  assert.equal((await runCli(['migrate', '-c', cfg, '--dir', dir])).code, 0);
  writeFileSync(join(dir, '001_dead_letter.sql'), '-- edited\nSELECT 1;\n');
  const r = await runCli(['migrate', '-c', cfg, '--dir', dir]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /001_dead_letter\.sql was changed after it was applied/);
});

test('a database that applied the earlier text of 002_telemetry.sql (before it stopped reading shared_preload_libraries) is not refused', {
  timeout: 60_000,
}, async () => {
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const cfg = config(pgUrl);
  assert.equal((await runCli(['migrate', '-c', cfg])).code, 0);
  // The checksum that text had (git show 031f1de:migrations/002_telemetry.sql | sha256sum).
  await query(pgUrl, "UPDATE weir_migrations SET checksum = '78099c463f88f54e7b9e2270f7a149fb921ec06dfa4951a0a8622d5f73fe6211' WHERE version = 2");
  const r = await runCli(['migrate', '-c', cfg]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /applied nothing new; 4 already applied/);
});

test('weir migrate names the sink and the reason when the database cannot be reached, without the password', { timeout: 60_000 }, async () => {
  const cfg = config('postgres://weir:hunter2@127.0.0.1:1/nowhere');
  const r = await runCli(['migrate', '-c', cfg]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: tsdb: .*ECONNREFUSED/);
  assert.ok(!r.stderr.includes('hunter2') && !r.stdout.includes('hunter2'));
});
