// PostgreSQL end-to-end benchmark (npm run bench -- pg): QoS 1, 200 B JSON payloads published
// through a real Mosquitto as fast as one publisher process goes, measured in one run:
//   1. the delivery ceiling: the same broker and load, delivered to a subscriber that only counts
//      (weir's own MQTT reader, acking on receipt);
//   2. weir end to end with ack after commit (the default), then with `ack: on_receive`, and with
//      insert_mode values — each: msg/s from first publish to last commit, p50/p99 publish→commit
//      latency (from the rows: received_at = now() of the inserting transaction, ts = publish
//      time), weir's CPU and peak RSS from /proc, lost and duplicate rows;
//   3. the raw insert paths (unnest, multi-row VALUES, COPY) on the same database, without MQTT.
// Prints a table and writes bench/results/pg.json.
import { execFileSync } from 'node:child_process';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { startMosquitto } from '../test/harness/mosquitto.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { waitFor } from '../test/harness/process.js';
import { ROOT, startWeir } from '../test/harness/weir.js';
import { endSessions, query, telemetryFiles } from '../test/e2e/fixtures.js';
import { machine, printTable, writeResult } from './report.js';
import { ceiling, DEVICES, MAX_UNACKED, listenerPid, WARMUP, placeLoadListener, placement, placeSelf, PUB_CLIENTS, ratio, timedRun, weirNodeArgs } from './e2e.js';

const N = Number(process.env.BENCH_MESSAGES ?? 200_000);
const CONNECTIONS = 4;
const SIZE = 200;

interface WeirRun {
  mode: string;
  published: number;
  stored: number;
  lost: number;
  duplicates: number;
  weir_msgs_per_s: number;
  p50_ms: number;
  p99_ms: number;
  weir_cpu_pct: number;
  weir_cpu_us_per_msg: number;
  weir_rss_mb_peak: number;
  server_cpu_us_per_msg: number;
  steal_pct: number;
}

async function weirRun(mqttUrl: string, adminUrl: string, mode: string, extra: { ack?: string; insertMode?: string }): Promise<WeirRun> {
  const pgUrl = await freshDatabase(adminUrl, 'bench');
  const clientId = `bench-${mode}`;
  let files = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: CONNECTIONS });
  files = {
    ...files,
    config: files.config
      .replace('max_unacked: 5000', `max_unacked: ${MAX_UNACKED}`)
      .replace('batch: { max_items: 1000, max_delay_ms: 10 }', 'batch: { max_items: 2000, max_delay_ms: 20 }')
      .replace('    connect_timeout_ms: 2000', `    connect_timeout_ms: 2000\n    insert_mode: ${extra.insertMode ?? 'unnest'}`)
      .replace('  max_payload_bytes', `  ack: ${extra.ack ?? 'after_commit'}\n  max_payload_bytes`),
  };
  const weir = await startWeir(files, { env: { WEIR_LOG_LEVEL: 'warn' }, compiled: true, nodeArgs: weirNodeArgs() });
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  const run = await timedRun(weir, mqttUrl, N, SIZE, listenerPid(Number(new URL(adminUrl).port)));
  const [r] = await query<{ rows: string; distinct: string; first_pub: Date; last_commit: Date; p50: number; p99: number }>(
    pgUrl,
    `SELECT count(*) AS rows, count(DISTINCT (device_id, seq)) AS distinct, min(ts) AS first_pub, max(received_at) AS last_commit,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM received_at - ts) * 1000) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM received_at - ts) * 1000) AS p99
       FROM telemetry WHERE ts >= $1`,
    [new Date(run.since)],
  );
  await weir.stop();
  await endSessions(mqttUrl, clientId, CONNECTIONS);
  const seconds = (r!.last_commit.getTime() - r!.first_pub.getTime()) / 1000;
  return {
    mode,
    published: run.published.acked,
    stored: Number(r!.distinct),
    lost: run.published.acked - Number(r!.distinct),
    duplicates: Number(r!.rows) - Number(r!.distinct),
    weir_msgs_per_s: Math.round(N / seconds),
    p50_ms: Math.round(r!.p50),
    p99_ms: Math.round(r!.p99),
    weir_cpu_pct: run.weir_cpu_pct,
    weir_cpu_us_per_msg: run.weir_cpu_us_per_msg,
    weir_rss_mb_peak: run.weir_rss_mb_peak,
    server_cpu_us_per_msg: run.server_cpu_us_per_msg,
    steal_pct: run.steal_pct,
  };
}

/** The three bulk paths on their own: 100k rows in batches of 1000, rows/s. */
async function insertPaths(adminUrl: string): Promise<Record<string, number>> {
  const url = await freshDatabase(adminUrl, 'bench_insert');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('CREATE TABLE t (ts timestamptz, device_id text, seq bigint, temp float8, humidity float8, location text)');
  const rows = 100_000;
  const batch = 1000;
  const loc = 'x'.repeat(120);
  const make = (b: number) => Array.from({ length: batch }, (_, i) => [new Date(1733140000000 + b * batch + i), `d${i % 1000}`, b * batch + i, 21.5, 40.1, loc]);
  const out: Record<string, number> = {};
  const time = async (name: string, write: (rs: unknown[][]) => Promise<unknown>) => {
    await c.query('TRUNCATE t');
    const t0 = performance.now();
    for (let b = 0; b < rows / batch; b++) await write(make(b));
    out[name] = Math.round(rows / ((performance.now() - t0) / 1000));
  };
  await time('unnest', (rs) =>
    c.query('INSERT INTO t SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::bigint[], $4::float8[], $5::float8[], $6::text[])', [0, 1, 2, 3, 4, 5].map((j) => rs.map((r) => r[j]))),
  );
  await time('values', (rs) =>
    c.query(`INSERT INTO t VALUES ${rs.map((_, i) => `(${[1, 2, 3, 4, 5, 6].map((k) => `$${i * 6 + k}`).join(',')})`).join(',')}`, rs.flat()),
  );
  await time('copy', async (rs) => {
    const text = rs.map((r) => [(r[0] as Date).toISOString(), ...r.slice(1)].join('\t')).join('\n') + '\n';
    await pipeline(Readable.from([text]), c.query(copyFrom('COPY t FROM STDIN')));
  });
  await c.end();
  return out;
}

export async function benchPg(): Promise<object> {
  // weir runs compiled, as in production (tsx's transform would be measured otherwise).
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  placeSelf();
  const mq = await startMosquitto();
  placeLoadListener(mq.port);
  const server = await startPostgres({ fsync: true });
  try {
    process.stdout.write(`pg bench: ${N} messages of 200 B, QoS 1, ${PUB_CLIENTS} publishers over ${DEVICES} device topics, weir with ${CONNECTIONS} connections\n`);
    process.stdout.write(`  placement: ${placement()}\n`);
    const ceilings = await ceiling(mq.url, N, SIZE, CONNECTIONS);
    process.stdout.write(`  delivery ceiling before: ${ceilings.join(', ')} msg/s\n`);
    const runs: WeirRun[] = [];
    for (const [mode, extra] of [
      ['after_commit', {}],
      ['on_receive', { ack: 'on_receive' }],
      ['after_commit_values', { insertMode: 'values' }],
    ] as const) {
      runs.push(await weirRun(mq.url, server.url, mode, extra));
      process.stdout.write(`  ${mode}: ${runs.at(-1)!.weir_msgs_per_s} msg/s\n`);
    }
    ceilings.push(...(await ceiling(mq.url, N, SIZE, CONNECTIONS)));
    const ceiling_msgs_per_s = Math.max(...ceilings);
    process.stdout.write(`  delivery ceiling after: ${ceilings.slice(2).join(', ')} msg/s\n`);
    const inserts = await insertPaths(server.url);
    const main = runs[0]!;
    const result = {
      bench: 'pg',
      command: 'npm run bench -- pg',
      at: new Date().toISOString(),
      machine: machine(),
      placement: placement(),
      messages: N,
      warmup_messages: WARMUP,
      payload_bytes: 200,
      published: main.published,
      stored: main.stored,
      lost: main.lost,
      duplicates: main.duplicates,
      ceiling_msgs_per_s,
      ceiling_runs_msgs_per_s: ceilings,
      weir_msgs_per_s: main.weir_msgs_per_s,
      ratio: ratio(main.weir_msgs_per_s, ceiling_msgs_per_s),
      p50_ms: main.p50_ms,
      p99_ms: main.p99_ms,
      weir_cpu_pct: main.weir_cpu_pct,
      weir_cpu_us_per_msg: main.weir_cpu_us_per_msg,
      weir_rss_mb_peak: main.weir_rss_mb_peak,
      weir_msgs_per_cpu_s: Math.round(1e6 / main.weir_cpu_us_per_msg),
      server_cpu_us_per_msg: main.server_cpu_us_per_msg,
      steal_pct: main.steal_pct,
      runs: runs.map((r) => ({ ...r, ratio: ratio(r.weir_msgs_per_s, ceiling_msgs_per_s) })),
      insert_paths_rows_per_s: inserts,
    };
    printTable(
      runs.map((r) => ({ mode: r.mode, 'msg/s': r.weir_msgs_per_s, ratio: (r.weir_msgs_per_s / ceiling_msgs_per_s).toFixed(2), p50: r.p50_ms, p99: r.p99_ms, 'cpu%': r.weir_cpu_pct, 'µs/msg': r.weir_cpu_us_per_msg, 'rss MB': r.weir_rss_mb_peak, 'server µs/msg': r.server_cpu_us_per_msg, lost: r.lost, dup: r.duplicates })),
    );
    process.stdout.write(`  insert paths (rows/s, batches of 1000, no MQTT): ${JSON.stringify(inserts)}\n`);
    writeResult('pg', result);
    return result;
  } finally {
    await server.dispose();
    await mq.stop();
  }
}
