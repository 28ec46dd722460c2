// The shipped weir.yaml against PostgreSQL as a managed service gives it: a login role that is not
// superuser (`create role weir login; create database weir owner weir`). Such a role may not read
// shared_preload_libraries, so weir must tell where TimescaleDB stands from what any role may read
// (pg_extension, pg_available_extensions, pg_settings), and on a server without a usable extension
// say so and leave plain tables, whatever the role:
//   - the run's shared server preloads TimescaleDB: a role owning its database creates the
//     extension (it is a trusted one) and gets the hypertable and its policies;
//   - same server, a role without CREATE on the database may not create the extension: plain
//     tables and a note saying why;
//   - a server that has the extension's files but does not preload the library: plain tables, and
//     no CREATE EXTENSION (which would end the session: TimescaleDB raises FATAL there).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ordinaryRoleDatabase, sharedPostgres, startPostgres } from '../harness/postgres.js';
import { timescaleTest } from '../harness/timescale-test.js';
import { ROOT, runCli } from '../harness/weir.js';
import { query } from './fixtures.js';

const SHIPPED = join(ROOT, 'weir.yaml');
const server = await sharedPostgres();

function migrate(url: string) {
  return runCli(['migrate', '-c', SHIPPED], { WEIR_PG_URL: url });
}

async function notSuperuser(url: string): Promise<void> {
  const [me] = await query<{ rolsuper: boolean }>(url, 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
  assert.equal(me!.rolsuper, false, 'the test role is an ordinary one');
}

async function hypertables(url: string): Promise<string[]> {
  const ext = await query(url, "SELECT 1 FROM pg_extension WHERE extname = 'timescaledb'");
  if (!ext.length) return [];
  return (await query<{ n: string }>(url, 'SELECT hypertable_name AS n FROM timescaledb_information.hypertables ORDER BY 1')).map((r) => r.n);
}

async function telemetryIndexes(url: string): Promise<string[]> {
  return (await query<{ i: string }>(url, "SELECT indexname AS i FROM pg_indexes WHERE tablename = 'telemetry' ORDER BY 1")).map((r) => r.i);
}

timescaleTest(
  server.timescaledb,
  'weir migrate with the shipped weir.yaml, as a role that owns its database and is not superuser, creates the extension and a hypertable with its policies',
  async () => {
    const url = await ordinaryRoleDatabase(server.url);
    await notSuperuser(url);
    const r = await migrate(url);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /applied 001_dead_letter\.sql, 002_telemetry\.sql, 003_ledger\.sql, 004_dead_letter_replay\.sql/);
    assert.match(r.stdout, /telemetry: chunk interval set to 1 day/);
    assert.match(r.stdout, /telemetry: compression policy added \(compress_after 7 days\)/);
    assert.doesNotMatch(r.stdout, /note:/);
    assert.deepEqual(await hypertables(url), ['telemetry']);
    const again = await migrate(url);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /applied nothing new; 4 already applied\n$/);
  },
);

timescaleTest(server.timescaledb, 'a role that may not create the extension gets plain tables and a note saying why; migrate and the tables work', async () => {
  const url = await ordinaryRoleDatabase(server.url, { owner: false });
  await notSuperuser(url);
  const r = await migrate(url);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /tsdb: note: TimescaleDB is not used: the timescaledb extension is available but this role could not create it \(permission denied to create extension "timescaledb"\); .*CREATE EXTENSION timescaledb.*: telemetry stays a plain table/,
  );
  assert.deepEqual(await hypertables(url), []);
  assert.deepEqual(await telemetryIndexes(url), ['telemetry_pkey', 'telemetry_ts']);
  await query(url, "INSERT INTO telemetry (ts, device_id, seq) VALUES (now(), 'd1', 1)");
  const again = await migrate(url);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /applied nothing new; 4 already applied/);
});

const plain = startPostgres();
after(async () => (await plain).dispose());

test('on a server that does not preload TimescaleDB an ordinary role gets plain tables and a note, and no session is lost to CREATE EXTENSION', {
  timeout: 90_000,
}, async () => {
  const url = await ordinaryRoleDatabase((await plain).url);
  await notSuperuser(url);
  const available = (await query(url, "SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb'")).length > 0;
  const r = await migrate(url);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    available
      ? /tsdb: note: TimescaleDB is not used: the server does not preload the timescaledb library \(shared_preload_libraries\); .*: telemetry stays a plain table/
      : /tsdb: note: TimescaleDB is not used: the timescaledb extension is not installed on this server: telemetry stays a plain table/,
  );
  assert.deepEqual(await hypertables(url), []);
  assert.deepEqual(await telemetryIndexes(url), ['telemetry_pkey', 'telemetry_ts']);
});
