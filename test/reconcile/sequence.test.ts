// weir reconcile --sequence against a real PostgreSQL: tables built with generate_series, gaps,
// duplicates and restarts made on purpose, the counts checked exactly; then the command itself.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { checkSequence, parseSequenceSpec, planSequence, type SequenceResult, type TimeRange } from '../../src/reconcile/sequence.js';
import { migrate } from '../../src/sinks/postgres/migrate.js';
import { telemetryFiles } from '../e2e/fixtures.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir } from '../harness/process.js';
import { ROOT, runCli, writeWeirFiles } from '../harness/weir.js';

let url: string;
let client: pg.Client;
const T0 = '2024-12-04T00:00:00Z';

before(async () => {
  url = await freshDatabase((await sharedPostgres()).url);
  await migrate(url, join(ROOT, 'migrations'));
  client = new pg.Client({ connectionString: url });
  await client.connect();
});

after(async () => {
  await client?.end();
});

async function sql(text: string): Promise<void> {
  await client.query(text);
}

/** `devices` devices (d01, d02…) × seqs 0..seqs-1, one second apart, in `table` (telemetry's shape). */
async function fill(table: string, devices: number, seqs: number): Promise<void> {
  await sql(`TRUNCATE ${table}`);
  await sql(`INSERT INTO ${table} (ts, device_id, seq)
    SELECT '${T0}'::timestamptz + s * interval '1 second', 'd' || lpad(d::text, 2, '0'), s
    FROM generate_series(1, ${devices}) d, generate_series(0, ${seqs - 1}) s`);
}

async function check(spec: string, range: TimeRange = {}): Promise<SequenceResult> {
  return checkSequence(client, await planSequence(client, parseSequenceSpec(spec), range));
}

test('a complete table: every key one run, nothing missing or duplicated', async () => {
  await fill('telemetry', 5, 100);
  const r = await check('telemetry:device_id:seq');
  assert.equal(r.time, 'ts', 'the table has a ts column, so it orders by it');
  assert.deepEqual(
    { keys: r.keys, rows: r.rows, missing: r.missing, duplicates: r.duplicates, runs: r.runs, keysWithGaps: r.keysWithGaps, worst: r.worst },
    { keys: 5, rows: 500, missing: 0, duplicates: 0, runs: 5, keysWithGaps: 0, worst: [] },
  );
});

test("gaps: exact missing counts per key, worst keys first, their first holes; a loss at a run's start or end is not seen", async () => {
  await fill('telemetry', 6, 100);
  await sql(`DELETE FROM telemetry WHERE
       (device_id = 'd01' AND seq BETWEEN 10 AND 19)          -- one hole of 10
    OR (device_id = 'd02' AND seq = 50)                       -- one of 1
    OR (device_id = 'd03' AND seq IN (5, 7, 9, 30, 31))       -- 4 holes, 5 missing
    OR (device_id = 'd04' AND seq IN (0, 1, 99))              -- the run's first and last: invisible`);
  const r = await check('telemetry:device_id:seq:ts');
  assert.equal(r.rows, 600 - 19);
  assert.equal(r.missing, 16);
  assert.equal(r.keysWithGaps, 3);
  assert.equal(r.duplicates, 0);
  assert.deepEqual(
    r.worst.map((k) => [k.key, k.missing, k.ranges, k.firstMissing]),
    [
      ['d01', 10, 1, [[10, 19]]],
      [
        'd03',
        5,
        4,
        [
          [5, 5],
          [7, 7],
          [9, 9],
        ],
      ],
      ['d02', 1, 1, [[50, 50]]],
    ],
  );
});

test('the worst keys are the 10 with the most missing', async () => {
  await fill('telemetry', 12, 50);
  // Device n loses n numbers (seq 1..n): d12 the most.
  await sql(`DELETE FROM telemetry WHERE seq BETWEEN 1 AND substr(device_id, 2)::int`);
  const r = await check('telemetry:device_id:seq');
  assert.equal(r.missing, (12 * 13) / 2);
  assert.equal(r.keysWithGaps, 12);
  assert.deepEqual(
    r.worst.map((k) => `${k.key}:${k.missing}`),
    ['d12:12', 'd11:11', 'd10:10', 'd09:9', 'd08:8', 'd07:7', 'd06:6', 'd05:5', 'd04:4', 'd03:3'],
  );
});

test('duplicates: the same key and seq twice in a run (a table without the unique key)', async () => {
  await sql('CREATE TABLE raw_samples (ts timestamptz, device text, n integer, v double precision)');
  await sql(
    `INSERT INTO raw_samples SELECT '${T0}'::timestamptz + s * interval '1 second', 'dev-' || d, s, 0 FROM generate_series(1, 3) d, generate_series(1, 200) s`,
  );
  // A redelivered message is an exact copy: 7 copies in dev-1, 2 in dev-2 (one of them twice more).
  await sql(`INSERT INTO raw_samples SELECT * FROM raw_samples WHERE (device = 'dev-1' AND n BETWEEN 100 AND 106) OR (device = 'dev-2' AND n IN (1, 200))`);
  await sql(`INSERT INTO raw_samples SELECT * FROM raw_samples WHERE device = 'dev-2' AND n = 1 LIMIT 1`);
  await sql(`DELETE FROM raw_samples WHERE device = 'dev-3' AND n = 150`);
  const r = await check('raw_samples:device:n:ts');
  assert.deepEqual(
    { rows: r.rows, duplicates: r.duplicates, missing: r.missing, runs: r.runs },
    { rows: 600 + 7 + 3 - 1, duplicates: 10, missing: 1, runs: 3 },
  );
  assert.deepEqual(
    r.worst.map((k) => [k.key, k.missing, k.duplicates]),
    [['dev-3', 1, 0]],
  );
});

test('a device restart (seq back to 0) and a counter wrap-around start new runs: no false gap', async () => {
  await fill('telemetry', 2, 100);
  // d01 restarts after seq 99 and counts 0..49 again; d02's 32-bit counter wraps: …4294967295, 0, 1…
  await sql(`INSERT INTO telemetry (ts, device_id, seq) SELECT '${T0}'::timestamptz + (100 + s) * interval '1 second', 'd01', s FROM generate_series(0, 49) s`);
  await sql(`UPDATE telemetry SET seq = CASE WHEN seq < 50 THEN 4294967246 + seq ELSE seq - 50 END WHERE device_id = 'd02'`);
  const r = await check('telemetry:device_id:seq');
  assert.deepEqual({ rows: r.rows, missing: r.missing, duplicates: r.duplicates, runs: r.runs }, { rows: 250, missing: 0, duplicates: 0, runs: 4 });
  // A gap inside the second run is still seen.
  await sql(`DELETE FROM telemetry WHERE device_id = 'd01' AND ts >= '${T0}'::timestamptz + interval '100 seconds' AND seq IN (20, 21)`);
  const gap = await check('telemetry:device_id:seq');
  assert.deepEqual(
    gap.worst.map((k) => [k.key, k.missing, k.runs, k.firstMissing]),
    [['d01', 2, 2, [[20, 21]]]],
  );
});

test('without a time column: ordered by seq alone, one run per key; --since/--until refused', async () => {
  await sql('CREATE TABLE counters (device text, n bigint)');
  await sql(`INSERT INTO counters SELECT 'c' || d, s FROM generate_series(1, 4) d, generate_series(1, 100) s WHERE NOT (d = 2 AND s % 10 = 5)`);
  const r = await check('counters:device:n');
  assert.equal(r.time, null);
  assert.deepEqual({ keys: r.keys, rows: r.rows, missing: r.missing, runs: r.runs }, { keys: 4, rows: 390, missing: 10, runs: 4 });
  await assert.rejects(check('counters:device:n', { since: T0 }), {
    code: 'reconcile.no_time_column',
    message: /table counters has no column ts: --since\/--until need a time column/,
  });
});

test('a since/until window: only the rows inside it are looked at', async () => {
  await fill('telemetry', 3, 100); // ts = T0 + seq seconds
  await sql(`DELETE FROM telemetry WHERE (device_id = 'd01' AND seq IN (10, 50, 51)) OR (device_id = 'd02' AND seq = 90)`);
  const all = await check('telemetry:device_id:seq');
  assert.equal(all.missing, 4);
  // [T0+40 s, T0+80 s): d01's 50 and 51 inside; its 10 and d02's 90 outside.
  const w = await check('telemetry:device_id:seq', { since: '2024-12-04T00:00:40Z', until: '2024-12-04 00:01:20+00' });
  assert.deepEqual({ rows: w.rows, missing: w.missing, keysWithGaps: w.keysWithGaps }, { rows: 3 * 40 - 2, missing: 2, keysWithGaps: 1 });
  assert.equal(w.since, '2024-12-04T00:00:40.000Z');
  assert.equal(w.until, '2024-12-04T00:01:20.000Z');
  const open = await check('telemetry:device_id:seq', { since: '2024-12-04T00:01:00Z' });
  assert.equal(open.missing, 1, 'd02 seq 90 only');
  await assert.rejects(check('telemetry:device_id:seq', { since: 'yesterday-ish' }), {
    code: 'reconcile.bad_time',
    message: /--since 'yesterday-ish' is not a time PostgreSQL accepts/,
  });
  await assert.rejects(check('telemetry:device_id:seq', { since: '2024-12-05', until: '2024-12-04' }), {
    code: 'reconcile.bad_time',
    message: /is not before --until/,
  });
});

test('a spec the table contradicts gives a clear error, not a SQL stack trace', async () => {
  await assert.rejects(check('telemetry:device_id:sq'), {
    code: 'reconcile.no_column',
    message: 'table telemetry has no column sq (the sequence column of --sequence)',
  });
  await assert.rejects(check('telemetry:device:seq'), { message: /^table telemetry has no column device \(the key column/ });
  await assert.rejects(check('telemetry:device_id:seq:time'), { message: /^table telemetry has no column time \(the time column/ });
  await assert.rejects(check('telemetri:device_id:seq'), { code: 'reconcile.no_table', message: 'no table telemetri in the database' });
  await assert.rejects(check('telemetry:device_id:location'), {
    code: 'reconcile.column_type',
    message: /column location of telemetry is text: a sequence column must be/,
  });
  await assert.rejects(check('telemetry:seq:seq:temp', { since: T0 }), {
    code: 'reconcile.column_type',
    message: /column temp of telemetry is double precision: --since\/--until need a date\/time column/,
  });
  assert.throws(() => parseSequenceSpec('telemetry:device_id'), { code: 'reconcile.sequence_spec' });
  assert.throws(() => parseSequenceSpec('telemetry::seq'), { code: 'reconcile.sequence_spec' });
  assert.throws(() => parseSequenceSpec('tele metry:device_id:seq'), { code: 'reconcile.sequence_spec', message: /is not a table name/ });
});

test('weir reconcile --sequence end to end: the tables, exit codes, GAPS on stderr, --json', { timeout: 120_000 }, async () => {
  const db = await freshDatabase((await sharedPostgres()).url);
  await migrate(db, join(ROOT, 'migrations'));
  const c = new pg.Client({ connectionString: db });
  await c.connect();
  try {
    await c.query(
      `INSERT INTO telemetry (ts, device_id, seq) SELECT '${T0}'::timestamptz + s * interval '1 second', 'd' || d, s FROM generate_series(1, 20) d, generate_series(0, 999) s`,
    );
    // The ledger agrees with the table, as if weir had written the rows.
    await c.query(`INSERT INTO weir_ledger (rule_id, sink, table_name, writer, rows) VALUES ('telemetry_to_tsdb', 'tsdb', 'telemetry', 'test', 20000)`);
    const dir = writeWeirFiles(telemetryFiles({ mqttUrl: 'mqtt://127.0.0.1:1', pgUrl: db }), 9464, tempDir('reconcile-seq'));
    const reconcile = (...args: string[]) => runCli(['reconcile', '-c', join(dir, 'weir.yaml'), ...args]);

    const clean = await reconcile('--sequence', 'telemetry:device_id:seq');
    assert.equal(clean.code, 0, `${clean.stdout}${clean.stderr}`);
    assert.match(clean.stdout, /reconciled: every difference is 0\n/);
    assert.match(clean.stdout, /\ntelemetry +device_id +seq +ts +20 +20000 +0 +0 +20\n/);
    assert.match(clean.stdout, /no gaps in the sequence numbers\n$/);

    // Messages that never reached weir: the ledger still agrees (rows and ledger both lack them).
    await c.query(`DELETE FROM telemetry WHERE (device_id = 'd3' AND seq BETWEEN 100 AND 199) OR (device_id = 'd7' AND seq IN (500, 502))`);
    await c.query(`UPDATE weir_ledger SET rows = rows - 102`);
    const gaps = await reconcile('--sequence', 'telemetry:device_id:seq');
    assert.equal(gaps.code, 1, `${gaps.stdout}${gaps.stderr}`);
    assert.match(gaps.stdout, /reconciled: every difference is 0\n/, 'the ledger cannot see these losses');
    assert.match(gaps.stdout, /\ntelemetry +device_id +seq +ts +20 +19898 +102 +0 +20\n/);
    assert.match(
      gaps.stdout,
      /worst keys of telemetry:device_id:seq:ts \(2 keys with gaps\):\n {2}key +rows +missing +duplicates +runs +first missing\n {2}d3 +900 +100 +0 +1 +100-199\n {2}d7 +998 +2 +0 +1 +500, 502\n/,
    );
    assert.match(gaps.stderr, /^GAPS: telemetry: 102 missing sequence numbers over 2 keys$/m);
    assert.doesNotMatch(gaps.stderr, /DIFFERENCE/);

    const json = await reconcile('--sequence', 'telemetry:device_id:seq:ts', '--since', '2024-12-04T00:08:00Z', '--json');
    assert.equal(json.code, 1, json.stderr);
    const doc = JSON.parse(json.stdout) as { ok: boolean; lines: unknown[]; sequence: SequenceResult[] };
    assert.equal(doc.ok, false);
    assert.equal(doc.lines.length, 1);
    assert.deepEqual(
      doc.sequence.map((s) => ({ since: s.since, missing: s.missing, worst: s.worst.map((k) => [k.key, k.missing, k.firstMissing]) })),
      [
        {
          since: '2024-12-04T00:08:00.000Z',
          missing: 2,
          worst: [
            [
              'd7',
              2,
              [
                [500, 500],
                [502, 502],
              ],
            ],
          ],
        },
      ],
    );

    const window = await reconcile(
      '--sequence',
      'telemetry:device_id:seq',
      '--since',
      '2024-12-04T00:03:20Z',
      '--until',
      '2024-12-04T00:08:00Z',
      '--sink',
      'tsdb',
    );
    assert.equal(window.code, 0, `${window.stdout}${window.stderr}`);
    assert.match(window.stdout, /telemetry: rows with ts >= 2024-12-04T00:03:20.000Z and < 2024-12-04T00:08:00.000Z\n/);

    const usage = async (args: string[], message: RegExp) => {
      const r = await reconcile(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n +at /, 'no stack trace');
    };
    await usage(['--sequence', 'telemetry:device_id:sq'], /^error: table telemetry has no column sq \(the sequence column of --sequence\)\n/);
    await usage(['--sequence', 'telemetry:device_id:seq', '--since', 'last tuesday'], /^error: --since 'last tuesday' is not a time PostgreSQL accepts/);
    await usage(['--sequence', 'telemetry:device_id'], /^error: --sequence 'telemetry:device_id': expected TABLE:KEY_COLUMN:SEQ_COLUMN\[:TIME_COLUMN\]/);
    await usage(['--since', T0], /^error: --since applies to --sequence, and none was given/);
    await usage(['--sequence', 'telemetry:device_id:seq', '--sink', 'nope'], /^error: --sink nope: .*weir\.yaml has no sink of that name/);
  } finally {
    await c.end();
  }
});
