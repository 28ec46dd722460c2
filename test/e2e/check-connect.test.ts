// weir check --connect against a real PostgreSQL: a missing table, a missing column and a column
// whose type refuses the rule's values are each named with the rule file and line; a missing table
// comes with a CREATE TABLE; the README's hot_samples example gets exactly that answer; a sink that
// cannot be reached exits 3; weir run logs the same problems at start, at error level.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir } from '../harness/process.js';
import { ROOT, runCli, startWeir } from '../harness/weir.js';
import { suggestTable } from '../../src/sinks/postgres/verify.js';
import { query } from './fixtures.js';

/** The README's rule example, as written there. */
const README_RULE = /### A rule[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))![1]!;

const RULES: Record<string, string> = {
  'telemetry.yaml': readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8'),
  'hot.yaml': README_RULE,
  'misnamed.yaml': `id: misnamed
sql: SELECT payload.temp AS temp, timestamp AS ts, clientid FROM "device/+/telemetry"
actions:
  - sink: tsdb
    table: telemetry
    columns:
      ts: \${ts}
      device_id: \${clientid}
      seq: \${ts}
      temprature: \${temp}
`,
  'wrong-type.yaml': `id: wrong_type
sql: SELECT payload.seq AS seq, payload.ts AS ts, clientid FROM "device/+/telemetry"
actions:
  - sink: tsdb
    table: telemetry
    columns:
      ts: \${ts}
      device_id: \${clientid}
      seq: \${seq}
tests:
  - event: { topic: device/7/telemetry, clientid: "7", payload: '{"seq": "first", "ts": 1733140000000}' }
    expect: { outputs: [{ seq: first, ts: 1733140000000, clientid: "7" }] }
`,
};

function lineOf(file: string, text: string): number {
  return RULES[file]!.split('\n').findIndex((l) => l.includes(text)) + 1;
}

async function project(pgUrl: string, rules = RULES): Promise<{ dir: string; cfg: string }> {
  const dir = tempDir('check-connect');
  mkdirSync(join(dir, 'rules'));
  for (const [n, t] of Object.entries(rules)) writeFileSync(join(dir, 'rules', n), t);
  writeFileSync(join(dir, 'weir.yaml'), `sinks:\n  tsdb:\n    type: postgres\n    url: ${pgUrl}\n    connect_timeout_ms: 2000\ndead_letter: { sink: tsdb }\n`);
  return { dir, cfg: join(dir, 'weir.yaml') };
}

test('weir check --connect names a missing table, a missing column and a wrong type, each at its rule file and line', { timeout: 60_000 }, async () => {
  const url = await freshDatabase((await sharedPostgres()).url);
  const { dir, cfg } = await project(url);
  const m = await runCli(['migrate', '-c', cfg]);
  assert.equal(m.code, 0, m.stderr);
  const r = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(r.code, 1, r.stderr);
  const errors = r.stderr.split('\n').filter((l) => l.startsWith('error: '));
  assert.deepEqual(errors, [
    `error: ${join(dir, 'rules/hot.yaml')}:${lineOf('hot.yaml', 'table: hot_samples')}: rule hot_devices: table hot_samples does not exist`,
    `error: ${join(dir, 'rules/misnamed.yaml')}:${lineOf('misnamed.yaml', 'temprature:')}: rule misnamed: table telemetry has no column temprature`,
    `error: ${join(dir, 'rules/wrong-type.yaml')}:${lineOf('wrong-type.yaml', 'seq: ${seq}')}: rule wrong_type: column telemetry.seq is bigint, which refuses the rule's string "first" from its tests (invalid input syntax for type bigint: "first")`,
  ]);
  // The missing table comes with a CREATE TABLE from the action's columns (types from the rule's test outputs).
  assert.match(
    r.stderr,
    /CREATE TABLE hot_samples \(\n {4} {2}"ts" timestamptz NOT NULL,\n {4} {2}"device_id" text,\n {4} {2}"temp" double precision\n {4}\);/,
  );
  assert.match(r.stderr, /SELECT create_hypertable\('hot_samples', by_range\('ts', INTERVAL '1 day'\)\);/);
  assert.match(r.stderr, /ALTER TABLE telemetry ADD COLUMN "temprature"/);
  assert.doesNotMatch(r.stderr, /telemetry\.yaml/, 'the shipped rule has all it needs');
});

test('weir check --connect on a database that weir migrate never saw names the dead-letter and ledger tables; everything fixed, it exits 0', {
  timeout: 60_000,
}, async () => {
  const url = await freshDatabase((await sharedPostgres()).url);
  const { cfg } = await project(url, { 'telemetry.yaml': RULES['telemetry.yaml']! });
  const before = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(before.code, 1);
  assert.match(before.stderr, /rules\/telemetry\.yaml:\d+: rule telemetry_to_tsdb: table telemetry does not exist/);
  assert.match(before.stderr, /error: dead_letter: table weir_dead_letter does not exist: run weir migrate/);
  assert.match(before.stderr, /error: ledger: table weir_ledger does not exist/);
  assert.equal((await runCli(['migrate', '-c', cfg])).code, 0);
  const after = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(after.code, 0, after.stderr);
  assert.match(after.stdout, /ok: sink tsdb has what the rules need/);
});

test('weir check --connect exits 3 when a sink cannot be reached, without the password', { timeout: 60_000 }, async () => {
  const { cfg } = await project('postgres://weir:hunter2@127.0.0.1:1/nowhere', { 'telemetry.yaml': RULES['telemetry.yaml']! });
  const r = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /error: sink tsdb: cannot connect: .*ECONNREFUSED/);
  assert.ok(!r.stderr.includes('hunter2'));
});

test('weir run logs at start, at error level, what a rule needs and the sink lacks', { timeout: 60_000 }, async () => {
  const url = await freshDatabase((await sharedPostgres()).url);
  const { url: mqttUrl } = await sharedMosquitto();
  const w = await startWeir(
    {
      config: `broker: { url: ${mqttUrl}, client_id: weir-check-connect, connections: 1, share_group: '' }\nsinks:\n  tsdb: { type: postgres, url: '${url}' }\ndead_letter: { sink: tsdb }\nhttp: { host: 127.0.0.1, port: {{HTTP_PORT}} }\nmigrate_on_start: true\n`,
      rules: { 'hot.yaml': README_RULE },
    },
    { args: ['--transient'] },
  );
  try {
    const deadline = Date.now() + 15_000;
    while (!w.log().includes('sink lacks') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const line = w
      .log()
      .split('\n')
      .find((l) => l.includes('sink lacks'));
    assert.ok(line, w.log());
    const entry = JSON.parse(line) as { level: number; msg: string; fix?: string };
    assert.equal(entry.level, 50, 'error level');
    assert.match(entry.msg, new RegExp(`rules/hot\\.yaml:${lineOf('hot.yaml', 'table: hot_samples')}: rule hot_devices: table hot_samples does not exist`));
    assert.match(entry.fix ?? '', /^CREATE TABLE hot_samples/);
  } finally {
    await w.stop();
  }
});

test("weir check --connect checks an action's on_conflict target, and the CREATE TABLE it suggests has the key the target needs", {
  timeout: 90_000,
}, async () => {
  const { url: serverUrl, timescaledb } = await sharedPostgres();
  const url = await freshDatabase(serverUrl);
  const rules = {
    'telemetry.yaml': RULES['telemetry.yaml']!,
    'named.yaml': `id: named
sql: SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq FROM "device/+/telemetry"
actions:
  - sink: tsdb
    table: telemetry
    columns: { ts: '\${ts}', device_id: '\${device_id}', seq: '\${seq}' }
    on_conflict: ON CONSTRAINT telemetry_identity DO NOTHING
`,
  };
  const { dir, cfg } = await project(url, rules);
  const m = await runCli(['migrate', '-c', cfg]);
  assert.equal(m.code, 0, m.stderr);
  const at = (file: keyof typeof rules, text: string) => `${join(dir, 'rules', file)}:${rules[file].split('\n').findIndex((l) => l.includes(text)) + 1}`;

  // The table as an operator writes it from a CREATE TABLE without a key: every insert of the
  // shipped rule would fail (42P10) and its messages be held, so check must say so.
  await query(url, 'DROP TABLE telemetry');
  await query(
    url,
    'CREATE TABLE telemetry (ts timestamptz NOT NULL, device_id text, seq bigint, temp double precision, humidity double precision, location text)',
  );
  const keyless = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(keyless.code, 1, keyless.stderr);
  const errors = keyless.stderr.split('\n').filter((l) => l.startsWith('error: '));
  assert.deepEqual(errors, [
    `error: ${at('named.yaml', 'on_conflict:')}: rule named: on_conflict ON CONSTRAINT telemetry_identity: table telemetry has no constraint telemetry_identity (constraint "telemetry_identity" for table "telemetry" does not exist)`,
    `error: ${at('telemetry.yaml', 'on_conflict:')}: rule telemetry_to_tsdb: on_conflict (device_id, ts, seq): table telemetry has no unique index or constraint on (device_id, ts, seq), so every insert would be refused (there is no unique or exclusion constraint matching the ON CONFLICT specification)`,
  ]);
  assert.match(keyless.stderr, /\n {4}ALTER TABLE telemetry ADD UNIQUE \("device_id", "ts", "seq"\);\n/);

  // No table at all: the CREATE TABLE check suggests has the key, with the time column in it.
  await query(url, 'DROP TABLE telemetry');
  const missing = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(missing.code, 1);
  const shipped = missing.stderr.slice(missing.stderr.indexOf(`error: ${at('telemetry.yaml', 'table: telemetry')}`));
  const suggestion = /\n {4}(CREATE TABLE telemetry \([\s\S]*?\n {4}\);(?:\n {4}-- with TimescaleDB:\n {4}SELECT create_hypertable\([^\n]*\);)?)/.exec(
    shipped,
  )?.[1];
  assert.ok(suggestion, missing.stderr);
  assert.match(suggestion, /,\n {4} {2}PRIMARY KEY \("device_id", "ts", "seq"\)\n {4}\);/);
  // Run as printed (the create_hypertable too, where TimescaleDB is there): then check passes
  // for the shipped rule. A hypertable takes the key only because it holds the time column.
  let ddl = suggestion.replace(/^ {4}/gm, '');
  if (!timescaledb.available) ddl = ddl.replace(/SELECT create_hypertable[^\n]*/, '');
  await query(url, ddl);
  await query(url, 'ALTER TABLE telemetry ADD CONSTRAINT telemetry_identity UNIQUE (device_id, ts, seq)');
  const ok = await runCli(['check', '--connect', '-c', cfg]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /ok: sink tsdb has what the rules need/);
});

test('an on_conflict target whose columns do not make a hypertable key gets no create_hypertable, and says why', () => {
  const action = { table: 'readings', columns: { ts: '${ts}', device_id: '${device_id}', seq: '${seq}' }, on_conflict: '(device_id, seq) DO NOTHING' };
  const sql = suggestTable(action, new Map([['seq', [1]]]));
  assert.match(sql, /PRIMARY KEY \("device_id", "seq"\)\n\);/);
  assert.doesNotMatch(sql, /SELECT create_hypertable/);
  assert.match(sql, /-- not a hypertable: TimescaleDB needs the time column \(ts\) in every unique key, and on_conflict's \(device_id, seq\) lacks it/);
});
