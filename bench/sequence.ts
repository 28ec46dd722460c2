// `weir reconcile --sequence` benchmark (npm run bench -- sequence): the shipped telemetry table
// (migrations/, primary key (device_id, ts, seq)) filled inside PostgreSQL with DEVICES × 1,000
// samples (10,000,000 rows by default; BENCH_SEQ_ROWS for fewer) minus a known set of holes,
// VACUUM ANALYZE (the visibility map lets the primary key serve an index-only scan), then the
// check's one statement timed 3 times (median) over the whole table, over a since/until window
// of the middle half and over one of 1%. Fails unless the missing counts are exactly the holes made (those
// the method can see: every hole is inside a device's run). Writes bench/results/sequence.json.
// Each case is timed over the statement without staleness (as it was before issue 35) and with
// it (the interval per sequence number, src/reconcile/sequence.ts), runs interleaved (before,
// with, before, with…) so that a load spike hits both alike; the whole table also with the
// median gap per key (the first staleness statement, 5b27df6, rebuilt here by swapping its
// interval expression back in), to show what the choice saves. BENCH_SEQ_RUNS runs each (5).
// Then staleness is checked exact once: to 20 s after the last sample (999 s, never a hole),
// every device is 21 intervals of 1 s silent, stale, with 20 messages estimated missing.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { checkSequence, planSequence, type SequencePlan, type SequenceResult, type TimeRange } from '../src/reconcile/sequence.js';
import { migrate } from '../src/sinks/postgres/migrate.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { ROOT } from '../test/harness/weir.js';
import { machine, printTable, writeResult } from './report.js';

const ROWS = Number(process.env.BENCH_SEQ_ROWS ?? 10_000_000);
const SEQS = 1000;
const DEVICES = Math.max(1, Math.round(ROWS / SEQS));
const RUNS = Number(process.env.BENCH_SEQ_RUNS ?? 5);
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

interface Timing {
  ms: number[];
  median_s: number;
  result: SequenceResult;
  plan: string;
}

type Variant = 'before' | 'stale' | 'median';
/** The interval as 5b27df6 computed it: lag(ts) over the window, the median of the gaps between a key's rows (an ordered-set aggregate, sorted per key). */
const MEDIAN_INTERVAL = 'extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY at - prev_at) FILTER (WHERE at > prev_at)) AS interval_s';

function withMedian(plan: SequencePlan): SequencePlan {
  const sql = plan.sql
    .replace(/^ {4}nullif\(extract\(epoch FROM .* AS interval_s$/m, `    ${MEDIAN_INTERVAL}`)
    .replace('"ts" AS at\n', '"ts" AS at, lag("ts") OVER w AS prev_at\n');
  if (!sql.includes(MEDIAN_INTERVAL) || !sql.includes('prev_at\n')) throw new Error('sequence bench: the interval expression was not found in the statement');
  return { ...plan, sql };
}

/** The statement without staleness and with it over one range (and with the median, if asked), RUNS times each, interleaved. */
async function timed(client: pg.Client, range: TimeRange, median = false): Promise<Partial<Record<Variant, Timing>> & { before: Timing; stale: Timing }> {
  const spec = { table: 'telemetry', key: 'device_id', seq: 'seq' };
  const stale = await planSequence(client, spec, range);
  const plans: Partial<Record<Variant, SequencePlan>> = {
    before: await planSequence(client, spec, range, null),
    stale,
    ...(median ? { median: withMedian(stale) } : {}),
  };
  const variants = Object.keys(plans) as Variant[];
  const shape = async (plan: SequencePlan) =>
    scanPath(
      (await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${plan.sql}`, plan.params)).rows[0]!['QUERY PLAN'][0]!.Plan,
    );
  const ms: Partial<Record<Variant, number[]>> = Object.fromEntries(variants.map((v) => [v, []]));
  const results: Partial<Record<Variant, SequenceResult>> = {};
  for (let i = 0; i < RUNS; i++) {
    for (const v of variants) {
      const t0 = performance.now();
      results[v] = await checkSequence(client, plans[v]!);
      ms[v]!.push(Math.round(performance.now() - t0));
    }
  }
  const median_ = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(RUNS / 2)]! / 1000;
  const out: Partial<Record<Variant, Timing>> = {};
  for (const v of variants) out[v] = { ms: ms[v]!, median_s: median_(ms[v]!), result: results[v]!, plan: await shape(plans[v]!) };
  return out as Partial<Record<Variant, Timing>> & { before: Timing; stale: Timing };
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

      const full = await timed(client, {}, true);
      const window = await timed(client, { since: at(WINDOW.from), until: at(WINDOW.to) });
      const short = await timed(client, { since: at(SHORT.from), until: at(SHORT.to) });
      const wantFull = expectedMissing(0, SEQS);
      const wantWindow = expectedMissing(WINDOW.from, WINDOW.to);
      const wantShort = expectedMissing(SHORT.from, SHORT.to);
      const row = (name: string, t: Timing) => ({
        case: name,
        rows: t.result.rows,
        missing: t.result.missing,
        'keys with gaps': t.result.keysWithGaps,
        'stale keys': t.result.staleness?.staleKeys ?? '-',
        'median s': t.median_s,
        'runs ms': t.ms.join(' '),
        plan: t.plan,
      });
      const windowName = `ts in [${WINDOW.from} s, ${WINDOW.to} s)`;
      const shortName = `ts in [${SHORT.from} s, ${SHORT.to} s)`;
      printTable([
        row('whole table, before', full.before),
        row('whole table, with staleness', full.stale),
        row('whole table, with the median (5b27df6)', full.median!),
        row(`${windowName}, before`, window.before),
        row(`${windowName}, with staleness`, window.stale),
        row(`${shortName}, before`, short.before),
        row(`${shortName}, with staleness`, short.stale),
      ]);
      // Staleness exact: to 20 s after the last sample, every device 21 s (intervals) silent.
      const TAIL_S = 20;
      const t2 = performance.now();
      const tail = await checkSequence(client, await planSequence(client, { table: 'telemetry', key: 'device_id', seq: 'seq' }, { until: at(SEQS + TAIL_S) }));
      const tailMs = Math.round(performance.now() - t2);
      const z = tail.staleness!;
      process.stdout.write(`  staleness to ${at(SEQS + TAIL_S)}: ${z.staleKeys} stale keys, ${z.missing} estimated missing (${tailMs} ms, one run)\n`);
      const intervals = (t: Timing) => {
        const z = t.result.staleness!;
        return [z.keysTimed, z.staleKeys, z.stalest.map((k) => [k.key, k.intervalS])];
      };
      const problems = [
        ...[full.before, full.stale, full.median!].flatMap((t) => [
          t.result.missing !== holes && `whole table: ${t.result.missing} missing found, ${holes} holes made`,
          t.result.missing !== wantFull.missing && `whole table: ${t.result.missing} missing, expected ${wantFull.missing}`,
          t.result.keysWithGaps !== wantFull.keys && `whole table: ${t.result.keysWithGaps} keys with gaps, expected ${wantFull.keys}`,
          t.result.duplicates !== 0 && `whole table: ${t.result.duplicates} duplicates, none made`,
          t.result.runs !== DEVICES && `whole table: ${t.result.runs} runs, expected one per device`,
        ]),
        ...[window.before, window.stale].map(
          (t) => t.result.missing !== wantWindow.missing && `window: ${t.result.missing} missing, expected ${wantWindow.missing}`,
        ),
        ...[short.before, short.stale].map(
          (t) => t.result.missing !== wantShort.missing && `short window: ${t.result.missing} missing, expected ${wantShort.missing}`,
        ),
        // "now" is the database's, a moment apart: compare what does not move with it.
        JSON.stringify(intervals(full.median!)) !== JSON.stringify(intervals(full.stale)) &&
          `whole table: intervals with the median ${JSON.stringify(intervals(full.median!))}, per sequence number ${JSON.stringify(intervals(full.stale))}`,
        window.stale.result.staleness?.staleKeys !== 0 && `window: ${window.stale.result.staleness?.staleKeys} stale keys, none expected (silent 1-2 s)`,
        short.stale.result.staleness?.staleKeys !== 0 && `short window: ${short.stale.result.staleness?.staleKeys} stale keys, none expected`,
        (z.keysTimed !== DEVICES || z.staleKeys !== DEVICES) && `tail: ${z.staleKeys} stale of ${z.keysTimed} timed, expected all ${DEVICES}`,
        z.missing !== DEVICES * TAIL_S && `tail: ${z.missing} estimated missing, expected ${DEVICES * TAIL_S}`,
      ].filter(Boolean);
      if (problems.length) throw new Error(`sequence bench: wrong counts:\n${problems.join('\n')}`);
      process.stdout.write(`  counts exact: ${holes} holes made, ${full.stale.result.missing} missing found; staleness exact\n`);
      const figures = (t: Timing) => ({ median_s: t.median_s, runs_ms: t.ms, rows: t.result.rows, missing: t.result.missing, plan: t.plan });
      // The figure that matters: each run against the "before" run next to it, then the median of those ratios.
      const ratio = (t: Timing, base: Timing) => {
        const each = t.ms.map((m, i) => Number((m / base.ms[i]!).toFixed(3)));
        return { each, median: [...each].sort((a, b) => a - b)[Math.floor(RUNS / 2)]! };
      };
      const ratios = {
        whole_table: { with_staleness: ratio(full.stale, full.before), with_the_median: ratio(full.median!, full.before) },
        window: ratio(window.stale, window.before),
        short_window: ratio(short.stale, short.before),
      };
      const loadEnd = loadavg()[0];
      process.stdout.write(
        `  ratio to before, per run (median): whole table ${ratios.whole_table.with_staleness.each.join(' ')} (${ratios.whole_table.with_staleness.median}), with the median ${ratios.whole_table.with_the_median.each.join(' ')} (${ratios.whole_table.with_the_median.median}); half ${ratios.window.median}; 1 % ${ratios.short_window.median}; load ${loadEnd} at the end\n`,
      );
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
        loadavg_1m_end: loadEnd,
        ratio_to_before: ratios,
        whole_table: {
          before: { ...figures(full.before), keys_with_gaps: full.before.result.keysWithGaps },
          with_staleness: figures(full.stale),
          with_the_median: figures(full.median!),
        },
        window: { since: at(WINDOW.from), until: at(WINDOW.to), before: figures(window.before), with_staleness: figures(window.stale) },
        short_window: { since: at(SHORT.from), until: at(SHORT.to), before: figures(short.before), with_staleness: figures(short.stale) },
        staleness_exact: { until: at(SEQS + TAIL_S), stale_keys: z.staleKeys, estimated_missing: z.missing, ms: tailMs },
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
