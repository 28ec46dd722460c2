// Staleness in weir reconcile --sequence, against a real PostgreSQL: per key, the silence since its
// last row against its own usual interval (the time per sequence number), keys silent for more than N intervals
// flagged with the messages expected and missing. Tables built with generate_series, checked exactly.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { checkSequence, parseSequenceSpec, planSequence, type SequenceResult, type TimeRange } from '../../src/reconcile/sequence.js';
import { migrate } from '../../src/sinks/postgres/migrate.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { ROOT, runCli } from '../harness/weir.js';

let client: pg.Client;
const T0 = '2024-12-04T00:00:00Z';
/** T0 + s seconds, as --until takes it. */
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();

before(async () => {
  const url = await freshDatabase((await sharedPostgres()).url);
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

async function check(spec: string, range: TimeRange = {}, staleAfter?: number): Promise<SequenceResult> {
  return checkSequence(client, await planSequence(client, parseSequenceSpec(spec), range, staleAfter));
}

/** `devices` devices (d01…) × seqs 0..seqs-1, `every` seconds apart. */
async function fill(devices: number, seqs: number, every = 1): Promise<void> {
  await sql('TRUNCATE telemetry');
  await sql(`INSERT INTO telemetry (ts, device_id, seq)
    SELECT '${T0}'::timestamptz + s * ${every} * interval '1 second', 'd' || lpad(d::text, 2, '0'), s
    FROM generate_series(1, ${devices}) d, generate_series(0, ${seqs - 1}) s`);
}

test('a device whose last 30 messages were never stored: stale, 30 expected and missing; the gap check cannot see it', async () => {
  await fill(5, 100);
  await sql(`DELETE FROM telemetry WHERE device_id = 'd03' AND seq >= 70`);
  const r = await check('telemetry:device_id:seq', { until: at(100) });
  assert.equal(r.missing, 0, 'no gap: the loss is at the tail');
  assert.deepEqual(r.staleness, {
    now: at(100),
    staleAfter: 10,
    keysTimed: 5,
    staleKeys: 1,
    missing: 30,
    // Last row at 69 s, now 100 s: 31 s of silence, 31 intervals; 70..99 were due.
    stalest: [{ key: 'd03', rows: 70, lastAt: at(69), silenceS: 31, intervalS: 1, missing: 30 }],
  });
  const lenient = await check('telemetry:device_id:seq', { until: at(100) }, 40);
  assert.deepEqual([lenient.staleness?.staleAfter, lenient.staleness?.staleKeys, lenient.staleness?.missing], [40, 0, 0], '31 intervals is not more than 40');
});

test("each key against its own interval: a minute's silence is stale for a device sending every second, not for one sending every minute", async () => {
  await sql('TRUNCATE telemetry');
  // fast: every second for 10 min; slow: every minute for an hour; both end at T0+10 min / T0+60 min.
  await sql(`INSERT INTO telemetry (ts, device_id, seq)
    SELECT '${T0}'::timestamptz + s * interval '1 second', 'fast', s FROM generate_series(0, 599) s
    UNION ALL SELECT '${T0}'::timestamptz + s * interval '1 minute', 'slow', s FROM generate_series(0, 59) s`);
  // now = T0 + 64 min: slow is 5 minutes (5 intervals) silent, fast 3,241 s (3,241 intervals).
  const r = await check('telemetry:device_id:seq', { until: at(64 * 60) });
  assert.deepEqual(
    r.staleness?.stalest.map((k) => [k.key, k.intervalS, k.silenceS, k.missing]),
    [['fast', 1, 64 * 60 - 599, 64 * 60 - 599 - 1]],
  );
  assert.equal(r.staleness?.keysTimed, 2);
});

test('the usual interval is the time per sequence number: an outage in which the device counted on does not stretch it', async () => {
  await fill(2, 200, 10);
  // d01 was offline for an hour in the middle (its clock and counter went on): seq 50..149 missing.
  await sql(`DELETE FROM telemetry WHERE device_id = 'd01' AND seq BETWEEN 50 AND 149`);
  // now: 200 s after the last sample (1,990 s) — 20 intervals of 10 s for both.
  const r = await check('telemetry:device_id:seq', { until: at(2190) });
  assert.equal(r.missing, 100, 'the outage is a gap');
  assert.deepEqual(
    r.staleness?.stalest.map((k) => [k.key, k.intervalS, k.silenceS, k.missing]),
    [
      ['d01', 10, 200, 19],
      ['d02', 10, 200, 19],
    ],
  );
});

test('a key that lost every other message keeps its own interval, and its estimate counts sequence numbers', async () => {
  await sql('TRUNCATE telemetry');
  // Sends every second, only the even numbers stored: stored rows are 2 s apart, the device's interval is 1 s.
  await sql(`INSERT INTO telemetry (ts, device_id, seq)
    SELECT '${T0}'::timestamptz + s * interval '1 second', 'lossy', s FROM generate_series(0, 98, 2) s`);
  // Last row at 98 s, now 120 s: 22 intervals; 99..119 were due (21, the one at 120 may be on its way).
  const r = await check('telemetry:device_id:seq', { until: at(120) });
  assert.equal(r.missing, 49);
  assert.deepEqual(
    r.staleness?.stalest.map((k) => [k.key, k.intervalS, k.silenceS, k.missing]),
    [['lossy', 1, 22, 21]],
  );
});

test('a duplicate does not shrink the interval; time the device did not count (asleep, or off and restarted) stretches it', async () => {
  await sql('TRUNCATE telemetry');
  // All three end at E = T0 + 4,590 s.
  await sql(`INSERT INTO telemetry (ts, device_id, seq)
    -- every 10 s, 0..99, and seq 10 stored twice (a redelivery, 5 s after the first)
    SELECT '${T0}'::timestamptz + interval '3600 seconds' + s * interval '10 seconds', 'redelivered', s FROM generate_series(0, 99) s
    UNION ALL SELECT '${T0}'::timestamptz + interval '3705 seconds', 'redelivered', 10
    -- every 10 s, 0..99, asleep for 1,000 s between 49 and 50 without counting: 1,980 s over 99 numbers
    UNION ALL SELECT '${T0}'::timestamptz + interval '2610 seconds' + s * interval '10 seconds' + (s >= 50)::int * interval '990 seconds', 'sleeper', s
      FROM generate_series(0, 99) s
    -- every 10 s: 0..49, off for 980 s, then from 0 again (a new run) 0..49: 1,960 s over 98 numbers
    UNION ALL SELECT '${T0}'::timestamptz + interval '2630 seconds' + s * interval '10 seconds', 'rebooted', s FROM generate_series(0, 49) s
    UNION ALL SELECT '${T0}'::timestamptz + interval '4100 seconds' + s * interval '10 seconds', 'rebooted', s FROM generate_series(0, 49) s`);
  const E = 4590;
  const r = await check('telemetry:device_id:seq', { until: at(E + 150) });
  assert.deepEqual([r.runs, r.duplicates, r.missing], [4, 1, 0]);
  assert.equal(r.staleness?.keysTimed, 3);
  // 150 s: 15 intervals of 10 s, stale, 14 due; 7.5 of the other two's 20 s, not stale.
  assert.deepEqual(
    r.staleness?.stalest.map((k) => [k.key, k.intervalS, k.silenceS, k.missing]),
    [['redelivered', 10, 150, 14]],
  );
  // 201 s: more than 10 of 20 s as well; 10 numbers due, 9 estimated missing.
  const late = await check('telemetry:device_id:seq', { until: at(E + 201) });
  assert.deepEqual(
    late.staleness?.stalest.map((k) => [k.key, k.intervalS, k.missing]),
    [
      ['redelivered', 10, 19],
      ['rebooted', 20, 9],
      ['sleeper', 20, 9],
    ],
  );
});

test('a key with a single row, or all its rows at one time, is not judged; without a timestamp column there is no staleness', async () => {
  await fill(2, 10);
  await sql(`INSERT INTO telemetry (ts, device_id, seq) VALUES ('${T0}', 'once', 0), ('${T0}', 'burst', 0), ('${T0}', 'burst', 1)`);
  const r = await check('telemetry:device_id:seq', { until: at(1000) });
  assert.equal(r.keys, 4);
  assert.equal(r.staleness?.keysTimed, 2);
  assert.deepEqual(
    r.staleness?.stalest.map((k) => k.key),
    ['d01', 'd02'],
  );
  await sql('CREATE TABLE plain_counters (device text, n bigint)');
  await sql(`INSERT INTO plain_counters SELECT 'c' || d, s FROM generate_series(1, 2) d, generate_series(1, 10) s`);
  assert.equal((await check('plain_counters:device:n')).staleness, null);
});

test("now is the database's now() without --until; a timestamp without time zone column works the same", async () => {
  await sql('TRUNCATE telemetry');
  // Every minute for two hours, ending an hour ago: 60 intervals silent, 59 due and missing.
  await sql(`INSERT INTO telemetry (ts, device_id, seq)
    SELECT date_trunc('second', now()) - interval '1 hour' - (119 - s) * interval '1 minute', 'quiet', s FROM generate_series(0, 119) s
    UNION ALL SELECT date_trunc('second', now()) - (119 - s) * interval '1 minute', 'live', s FROM generate_series(0, 119) s`);
  const r = await check('telemetry:device_id:seq');
  const [db] = (await client.query<{ now: Date }>('SELECT now() AS now')).rows;
  assert.ok(Math.abs(Date.parse(r.staleness!.now) - db!.now.getTime()) < 60_000, `now ${r.staleness!.now} is the database's`);
  assert.deepEqual(
    r.staleness?.stalest.map((k) => [k.key, k.intervalS, Math.floor(k.silenceS / 60), k.missing]),
    [['quiet', 60, 60, 59]],
  );

  await sql('CREATE TABLE local_samples (at timestamp, device text, n integer)');
  await sql(`INSERT INTO local_samples SELECT '2024-12-04 00:00:00'::timestamp + s * interval '1 second', 'dev-' || d, s
    FROM generate_series(1, 3) d, generate_series(0, 99) s WHERE NOT (d = 2 AND s >= 50)`);
  const local = await check('local_samples:device:n:at', { until: '2024-12-04 00:01:40' });
  assert.deepEqual(
    local.staleness?.stalest.map((k) => [k.key, k.silenceS, k.missing]),
    [['dev-2', 51, 50]],
  );
});

test('--stale-after: a number of intervals above 0, and only with --sequence (exit 2, one line)', async () => {
  for (const [args, message] of [
    [['--sequence', 'telemetry:device_id:seq', '--stale-after', 'ten'], /^error: --stale-after takes a number of intervals, above 0, not 'ten'\n/],
    [['--sequence', 'telemetry:device_id:seq', '--stale-after', '0'], /^error: --stale-after takes a number of intervals, above 0, not '0'\n/],
    [['--stale-after', '10'], /^error: --stale-after applies to --sequence, and none was given\n/],
  ] as const) {
    const r = await runCli(['reconcile', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const help = await runCli(['reconcile', '--help']);
  assert.match(help.stdout, /--stale-after N {5}a key silent for more than N of its usual intervals is stale/);
});
