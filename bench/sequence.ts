// `weir reconcile --sequence` benchmark (npm run bench -- sequence): the shipped telemetry table
// (migrations/, primary key (device_id, ts, seq)) filled inside PostgreSQL with DEVICES × 1,000
// samples (10,000,000 rows by default; BENCH_SEQ_ROWS for fewer) minus a known set of holes,
// VACUUM ANALYZE (the visibility map lets the primary key serve an index-only scan), then the
// check's one statement timed 3 times (median) over the whole table, over a since/until window
// of the middle half and over one of 1%. Fails unless the missing counts are exactly the holes made (those
// the method can see: every hole is inside a device's run). Writes bench/results/sequence.json.
import { join } from 'node:path';
import pg from 'pg';
import { checkSequence, planSequence, type SequenceResult, type TimeRange } from '../src/reconcile/sequence.js';
import { migrate } from '../src/sinks/postgres/migrate.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { ROOT } from '../test/harness/weir.js';
import { machine, printTable, writeResult } from './report.js';

const ROWS = Number(process.env.BENCH_SEQ_ROWS ?? 10_000_000);
const SEQS = 1000;
const DEVICES = Math.max(1, Math.round(ROWS / SEQS));
const RUNS = 3;
const T0 = Date.parse('2024-12-04T00:00:00Z');
/** Sample s of every device is at T0 + s seconds. */
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
/** The middle half (read from the primary key), and 1% (read through the ts index and sorted). */
const WINDOW = { from: 250, to: 750 };
const SHORT = { from: 250, to: 260 };

// The holes, written once for SQL and once for JS: a scattered 1 in 1,000 and, on every 97th
// device, a burst of 50 (a broker restart's worth). Never the first or last sample, so that each
// hole is inside its device's run and must be counted.
const HOLE_SQL = `s BETWEEN 1 AND ${SEQS - 2} AND ((d * 7 + s * 13) % 1000 = 0 OR (d % 97 = 0 AND s BETWEEN 300 AND 349))`;
const isHole = (d: number, s: number) => s >= 1 && s <= SEQS - 2 && ((d * 7 + s * 13) % 1000 === 0 || (d % 97 === 0 && s >= 300 && s <= 349));

/** Missing numbers the check must find among samples [from, to): holes between each device's first and last sample there. */
function expectedMissing(from: number, to: number): { missing: number; keys: number } {
  let missing = 0;
  let keys = 0;
  for (let d = 1; d <= DEVICES; d++) {
    let first = from;
    while (first < to && isHole(d, first)) first++;
    let last = to - 1;
    while (last > first && isHole(d, last)) last--;
    let n = 0;
    for (let s = first + 1; s < last; s++) if (isHole(d, s)) n++;
    missing += n;
    if (n) keys++;
  }
  return { missing, keys };
}

async function timed(client: pg.Client, range: TimeRange): Promise<{ ms: number[]; median_s: number; result: SequenceResult; plan: string }> {
  const plan = await planSequence(client, { table: 'telemetry', key: 'device_id', seq: 'seq' }, range);
  const shape = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${plan.sql}`, plan.params);
  const ms: number[] = [];
  let result: SequenceResult | undefined;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    result = await checkSequence(client, plan);
    ms.push(Math.round(performance.now() - t0));
  }
  const median = [...ms].sort((a, b) => a - b)[Math.floor(RUNS / 2)]!;
  return { ms, median_s: median / 1000, result: result!, plan: scanPath(shape.rows[0]!['QUERY PLAN'][0]!.Plan) };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The plan's node types from the top down to the table scan, e.g. `… ← WindowAgg ← Index Only Scan (telemetry_pkey)`. */
function scanPath(node: PlanNode): string {
  const path: string[] = [];
  for (let n: PlanNode | undefined = node; n; n = n.Plans?.find((p) => p.Plans || /Scan/.test(p['Node Type'])) ?? n.Plans?.[0]) {
    path.push(n['Index Name'] ? `${n['Node Type']} (${n['Index Name']})` : n['Node Type']);
  }
  return path.join(' ← ');
}

export async function benchSequence(): Promise<object> {
  const server = await startPostgres();
  try {
    const url = await freshDatabase(server.url, 'bench_seq');
    await migrate(url, join(ROOT, 'migrations'));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      process.stdout.write(`sequence bench: ${DEVICES} devices × ${SEQS} samples, holes: ${HOLE_SQL}\n  machine: ${JSON.stringify(machine())}\n`);
      const t0 = performance.now();
      // Inside PostgreSQL, in the primary key's order: nothing passes through Node.
      await client.query(`INSERT INTO telemetry (ts, device_id, seq, temp, humidity, location)
        SELECT '${at(0)}'::timestamptz + s * interval '1 second', 'dev-' || lpad(d::text, 5, '0'), s, 20 + (s % 50) / 10.0, 40.5, 'hall-' || d % 10
        FROM generate_series(1, ${DEVICES}) d CROSS JOIN generate_series(0, ${SEQS - 1}) s
        WHERE NOT (${HOLE_SQL})
        ORDER BY d, s`);
      const loadS = (performance.now() - t0) / 1000;
      const t1 = performance.now();
      await client.query('VACUUM ANALYZE telemetry');
      const vacuumS = (performance.now() - t1) / 1000;
      const [stored] = (await client.query<{ n: string; bytes: string }>(`SELECT count(*) AS n, pg_total_relation_size('telemetry') AS bytes FROM telemetry`))
        .rows;
      const rows = Number(stored!.n);
      const holes = DEVICES * SEQS - rows;
      process.stdout.write(
        `  loaded ${rows} rows (${holes} holes) in ${loadS.toFixed(1)} s, VACUUM ANALYZE ${vacuumS.toFixed(1)} s, table + indexes ${(Number(stored!.bytes) / 2 ** 20).toFixed(0)} MB\n`,
      );

      const full = await timed(client, {});
      const window = await timed(client, { since: at(WINDOW.from), until: at(WINDOW.to) });
      const short = await timed(client, { since: at(SHORT.from), until: at(SHORT.to) });
      const wantFull = expectedMissing(0, SEQS);
      const wantWindow = expectedMissing(WINDOW.from, WINDOW.to);
      const wantShort = expectedMissing(SHORT.from, SHORT.to);
      const cases = [
        {
          case: 'whole table',
          rows: full.result.rows,
          missing: full.result.missing,
          'keys with gaps': full.result.keysWithGaps,
          'median s': full.median_s,
          'runs ms': full.ms.join(' '),
          plan: full.plan,
        },
        {
          case: `ts in [${WINDOW.from} s, ${WINDOW.to} s)`,
          rows: window.result.rows,
          missing: window.result.missing,
          'keys with gaps': window.result.keysWithGaps,
          'median s': window.median_s,
          'runs ms': window.ms.join(' '),
          plan: window.plan,
        },
        {
          case: `ts in [${SHORT.from} s, ${SHORT.to} s)`,
          rows: short.result.rows,
          missing: short.result.missing,
          'keys with gaps': short.result.keysWithGaps,
          'median s': short.median_s,
          'runs ms': short.ms.join(' '),
          plan: short.plan,
        },
      ];
      printTable(cases);
      const problems = [
        full.result.missing !== holes && `whole table: ${full.result.missing} missing found, ${holes} holes made`,
        full.result.missing !== wantFull.missing && `whole table: ${full.result.missing} missing, expected ${wantFull.missing}`,
        full.result.keysWithGaps !== wantFull.keys && `whole table: ${full.result.keysWithGaps} keys with gaps, expected ${wantFull.keys}`,
        full.result.duplicates !== 0 && `whole table: ${full.result.duplicates} duplicates, none made`,
        full.result.runs !== DEVICES && `whole table: ${full.result.runs} runs, expected one per device`,
        window.result.missing !== wantWindow.missing && `window: ${window.result.missing} missing, expected ${wantWindow.missing}`,
        short.result.missing !== wantShort.missing && `short window: ${short.result.missing} missing, expected ${wantShort.missing}`,
      ].filter(Boolean);
      if (problems.length) throw new Error(`sequence bench: wrong counts:\n${problems.join('\n')}`);
      process.stdout.write(`  counts exact: ${holes} holes made, ${full.result.missing} missing found\n`);
      const result = {
        bench: 'sequence',
        command: `${process.env.BENCH_SEQ_ROWS ? `BENCH_SEQ_ROWS=${process.env.BENCH_SEQ_ROWS} ` : ''}npm run bench -- sequence`,
        at: new Date().toISOString(),
        machine: machine(),
        devices: DEVICES,
        seqs_per_device: SEQS,
        rows,
        holes,
        load_s: Number(loadS.toFixed(1)),
        vacuum_analyze_s: Number(vacuumS.toFixed(1)),
        table_and_indexes_mb: Math.round(Number(stored!.bytes) / 2 ** 20),
        runs: RUNS,
        whole_table: { median_s: full.median_s, runs_ms: full.ms, missing: full.result.missing, keys_with_gaps: full.result.keysWithGaps, plan: full.plan },
        window: {
          since: at(WINDOW.from),
          until: at(WINDOW.to),
          median_s: window.median_s,
          runs_ms: window.ms,
          rows: window.result.rows,
          missing: window.result.missing,
          plan: window.plan,
        },
        short_window: {
          since: at(SHORT.from),
          until: at(SHORT.to),
          median_s: short.median_s,
          runs_ms: short.ms,
          rows: short.result.rows,
          missing: short.result.missing,
          plan: short.plan,
        },
      };
      writeResult('sequence', result);
      return result;
    } finally {
      await client.end();
    }
  } finally {
    await server.dispose();
  }
}
