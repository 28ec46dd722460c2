// weir against the real TimescaleDB extension (built or found by test/harness/timescaledb.ts and
// preloaded in the run's PostgreSQL): weir migrate makes the telemetry table a hypertable with the
// chunk interval, compression and retention of weir.yaml, idempotently; the policies' jobs, run
// with CALL run_job, compress and drop old chunks; weir's sink path (SinkRunner + PostgresSink)
// inserts into a compressed range. Without the extension each test is reported as not run.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir } from '../harness/process.js';
import { timescaleTest } from '../harness/timescale-test.js';
import { ROOT, runCli } from '../harness/weir.js';
import { query } from './fixtures.js';
import { startPgRunner } from './pg-runner.js';

const server = await sharedPostgres();

function config(pgUrl: string, hypertables: string): string {
  const dir = tempDir('tsdb');
  writeFileSync(
    join(dir, 'weir.yaml'),
    `sinks:\n  tsdb:\n    type: postgres\n    url: ${pgUrl}\n    hypertables:\n${hypertables.replace(/^/gm, '      ')}\nrules_dir: ${join(ROOT, 'rules')}\n`,
  );
  return join(dir, 'weir.yaml');
}

const SETTINGS = `telemetry:
  chunk_interval: 1 day
  compression: { segment_by: [device_id], order_by: [ts DESC], compress_after: 3 days }
  retention: { drop_after: 10 days }`;

async function policies(url: string): Promise<Record<string, string>> {
  const rows = await query<{ proc_name: string; v: string }>(
    url,
    `SELECT proc_name, coalesce(config->>'compress_after', config->>'drop_after') AS v FROM timescaledb_information.jobs WHERE hypertable_name = 'telemetry' ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.proc_name, r.v]));
}

async function migrated(settings = SETTINGS): Promise<{ url: string; cfg: string; stdout: string }> {
  const url = await freshDatabase(server.url, 'weir_tsdb');
  const cfg = config(url, settings);
  const r = await runCli(['migrate', '-c', cfg]);
  assert.equal(r.code, 0, r.stderr);
  return { url, cfg, stdout: r.stdout };
}

timescaleTest(
  server.timescaledb,
  'weir migrate makes telemetry a hypertable with the chunk interval and policies of weir.yaml, and a second run changes nothing',
  async () => {
    const { url, cfg, stdout } = await migrated();
    assert.match(stdout, /telemetry: chunk interval set to 1 day/);
    assert.match(stdout, /telemetry: compression enabled \(segment_by \[device_id\], order_by \[ts DESC\]\)/);
    assert.match(stdout, /telemetry: compression policy added \(compress_after 3 days\)/);
    assert.match(stdout, /telemetry: retention policy added \(drop_after 10 days\)/);
    const dim = await query<{ column_name: string; time_interval: string }>(
      url,
      "SELECT column_name, time_interval::text FROM timescaledb_information.dimensions WHERE hypertable_name = 'telemetry'",
    );
    assert.deepEqual(dim, [{ column_name: 'ts', time_interval: '1 day' }]);
    const comp = await query<{ segmentby: string; orderby: string }>(
      url,
      "SELECT segmentby, orderby FROM timescaledb_information.hypertable_compression_settings WHERE hypertable = 'telemetry'::regclass",
    );
    assert.deepEqual(comp, [{ segmentby: 'device_id', orderby: 'ts DESC' }]);
    assert.deepEqual(await policies(url), { policy_compression: '3 days', policy_retention: '10 days' });

    const again = await runCli(['migrate', '-c', cfg]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^tsdb \(.*\): applied nothing new; 4 already applied\n$/);
    assert.deepEqual(await policies(url), { policy_compression: '3 days', policy_retention: '10 days' });
  },
);

timescaleTest(server.timescaledb, 'a changed setting replaces its policy; a removed one removes it', async () => {
  const { url } = await migrated();
  const cfg = config(url, `telemetry:\n  chunk_interval: 12 hours\n  compression: { segment_by: [device_id], order_by: [ts DESC], compress_after: 2 days }`);
  const r = await runCli(['migrate', '-c', cfg]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /telemetry: chunk interval set to 12 hours/);
  assert.match(r.stdout, /telemetry: compression policy changed \(compress_after 2 days, was 3 days\)/);
  assert.match(r.stdout, /telemetry: retention policy removed/);
  assert.doesNotMatch(r.stdout, /compression (enabled|settings changed)/, 'unchanged compression settings are left alone');
  assert.deepEqual(await policies(url), { policy_compression: '2 days' });
});

timescaleTest(
  server.timescaledb,
  'the compression job compresses chunks older than compress_after and the retention job drops those older than drop_after',
  async () => {
    const { url } = await migrated();
    // 5 devices, a sample every 6 hours over the last 20 days: about 21 one-day chunks.
    await query(
      url,
      `INSERT INTO telemetry (ts, device_id, seq, temp, humidity, location)
     SELECT date_trunc('second', now()) - make_interval(hours => h * 6), 'dev-' || d, h, 20 + d, 50, 'lab'
       FROM generate_series(0, 79) h, generate_series(1, 5) d`,
    );
    const chunks = async () =>
      query<{ old: boolean; compressed: boolean; n: number }>(
        url,
        `SELECT range_end < now() - interval '3 days' AS old, is_compressed AS compressed, count(*)::int AS n
         FROM timescaledb_information.chunks WHERE hypertable_name = 'telemetry' GROUP BY 1, 2 ORDER BY 1, 2`,
      );
    const before = await chunks();
    assert.ok(
      before.every((c) => !c.compressed),
      'nothing compressed before the job runs',
    );
    assert.ok(before.reduce((n, c) => n + c.n, 0) >= 20, `one chunk per day: ${JSON.stringify(before)}`);

    const job = async (proc: string) =>
      (
        await query<{ id: number }>(url, `SELECT job_id AS id FROM timescaledb_information.jobs WHERE proc_name = '${proc}' AND hypertable_name = 'telemetry'`)
      )[0]!.id;
    await query(url, `CALL run_job(${await job('policy_compression')})`);
    const after = await chunks();
    const ranges = await query(
      url,
      "SELECT range_start::text, range_end::text, is_compressed FROM timescaledb_information.chunks WHERE hypertable_name = 'telemetry' ORDER BY range_start",
    );
    assert.ok(
      after.some((c) => c.old && c.compressed),
      `old chunks compressed: ${JSON.stringify(ranges)}`,
    );
    assert.ok(!after.some((c) => c.old && !c.compressed), `no old chunk left uncompressed: ${JSON.stringify(after)}`);
    assert.ok(
      after.some((c) => !c.old && !c.compressed),
      'recent chunks stay uncompressed',
    );
    const [count] = await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM telemetry');
    assert.equal(count!.n, 400, 'compression keeps every row readable');

    await query(url, `CALL run_job(${await job('policy_retention')})`);
    const [left] = await query<{ oldest: boolean; n: number }>(
      url,
      "SELECT min(ts) >= now() - interval '11 days' AS oldest, count(*)::int AS n FROM telemetry",
    );
    assert.equal(left!.oldest, true, 'rows older than drop_after (plus one chunk) are gone');
    assert.ok(left!.n < 400 && left!.n >= 200, `the last ~10 days stay: ${left!.n}`);
  },
);

timescaleTest(server.timescaledb, "weir's sink inserts into a compressed chunk, and a redelivered row there is absorbed by ON CONFLICT", async () => {
  const { url } = await migrated();
  await query(
    url,
    `INSERT INTO telemetry (ts, device_id, seq, temp) SELECT date_trunc('second', now()) - make_interval(days => 5, hours => h), 'dev-1', h, 20 FROM generate_series(0, 23) h`,
  );
  await query(url, "SELECT compress_chunk(c) FROM show_chunks('telemetry', older_than => interval '3 days') c");
  const [chunk] = await query<{ compressed: number }>(
    url,
    "SELECT count(*)::int AS compressed FROM timescaledb_information.chunks WHERE hypertable_name = 'telemetry' AND is_compressed",
  );
  assert.ok(chunk!.compressed >= 1, 'a compressed chunk to write into');
  const [old] = await query<{ ts: string }>(url, 'SELECT (extract(epoch FROM ts) * 1000)::bigint::text AS ts FROM telemetry WHERE seq = 3');

  const fiveDaysAgo = Date.now() - 5 * 86_400_000 - 30 * 60_000;
  const rows = [
    { ts: Number(old!.ts), device: 'dev-1', seq: 3, temp: 99 }, // already there, compressed: a redelivery
    ...Array.from({ length: 10 }, (_, i) => ({ ts: fiveDaysAgo - i * 60_000, device: 'dev-2', seq: 100 + i, temp: 21 })),
  ];
  const pg = await startPgRunner(url, { insertMode: 'unnest', instance: 'tsdb' });
  try {
    const action = {
      table: 'telemetry',
      columns: { ts: '${ts}', device_id: '${device}', seq: '${seq}', temp: '${temp}' },
      on_conflict: '(device_id, ts, seq) DO NOTHING',
    };
    assert.deepEqual(
      await pg.store('telemetry', action, rows),
      rows.map(() => 'stored'),
      'every row committed, none dead-lettered or stuck',
    );
  } finally {
    await pg.close();
  }
  const stored = await query<{ device_id: string; n: number; temp: number }>(
    url,
    'SELECT device_id, count(*)::int AS n, max(temp) AS temp FROM telemetry GROUP BY 1 ORDER BY 1',
  );
  assert.deepEqual(stored, [
    { device_id: 'dev-1', n: 24, temp: 20 },
    { device_id: 'dev-2', n: 10, temp: 21 },
  ]);
  const [letters] = await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM weir_dead_letter');
  assert.equal(letters!.n, 0);
});
