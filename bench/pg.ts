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
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { MqttSession } from '../src/core/mqtt-session.js';
import { silentLogger } from '../src/log.js';
import { BrokerSpec, type BrokerConfig } from '../src/config/schema.js';
import { Value } from '@sinclair/typebox/value';
import { startMosquitto } from '../test/harness/mosquitto.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { waitFor } from '../test/harness/process.js';
import { ROOT, startWeir } from '../test/harness/weir.js';
import { endSessions, query, telemetryFiles } from '../test/e2e/fixtures.js';
import { machine, printTable, writeResult } from './report.js';

const N = Number(process.env.BENCH_MESSAGES ?? 200_000);
const CONNECTIONS = 4;
const PUB_CLIENTS = 20;
const DEVICES = 1000;

/** Runs the publisher as its own process (so it never shares an event loop with a measured party). */
function publish(url: string, limit: number, prefix: string): Promise<{ published: number; acked: number; msgs_per_s: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/load/publisher.ts'), '-h', url, '-c', String(PUB_CLIENTS), '--devices', String(DEVICES), '-s', '200', '-q', '1', '-L', String(limit), '-t', `${prefix}/%i/telemetry`], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`publisher exited ${code}`))));
  });
}

async function ceiling(url: string): Promise<number> {
  const cfg: BrokerConfig = Value.Default(BrokerSpec, { url, client_id: 'bench-ceiling', connections: CONNECTIONS, max_unacked: 10_000 }) as BrokerConfig;
  let count = 0;
  let first = 0;
  let last = 0;
  const sessions = Array.from({ length: CONNECTIONS }, (_, i) =>
    new MqttSession(cfg, i, (_m, settle) => {
      const now = Date.now();
      if (count++ === 0) first = now;
      last = now;
      settle();
    }, silentLogger),
  );
  for (const s of sessions) {
    await s.setFilters(['$share/ceiling/device/+/telemetry']);
    s.start();
    await s.whenConnected();
  }
  await new Promise((r) => setTimeout(r, 300));
  await publish(url, N, 'device');
  await waitFor(() => count >= N, 120_000, 'the counting subscriber to see every message');
  for (const s of sessions) await s.close(true);
  return Math.round(N / ((last - first) / 1000));
}

function procStats(pid: number): { cpuMs: number; rssPeakMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100/s)
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuMs: ticks * 10, rssPeakMb: Math.round(Number(hwm?.[1] ?? 0) / 1024) };
}

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
}

async function weirRun(mqttUrl: string, adminUrl: string, mode: string, extra: { ack?: string; insertMode?: string }): Promise<WeirRun> {
  const pgUrl = await freshDatabase(adminUrl, 'bench');
  const clientId = `bench-${mode}`;
  let files = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: CONNECTIONS });
  files = {
    ...files,
    config: files.config
      .replace('max_unacked: 5000', 'max_unacked: 10000')
      .replace('batch: { max_items: 1000, max_delay_ms: 10 }', 'batch: { max_items: 2000, max_delay_ms: 20 }')
      .replace('    connect_timeout_ms: 2000', `    connect_timeout_ms: 2000\n    insert_mode: ${extra.insertMode ?? 'unnest'}`)
      .replace('  max_payload_bytes', `  ack: ${extra.ack ?? 'after_commit'}\n  max_payload_bytes`),
  };
  const weir = await startWeir(files, { env: { WEIR_LOG_LEVEL: 'warn' }, compiled: true });
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  const pid = weir.svc.proc.pid!;
  const before = procStats(pid);
  const t0 = Date.now();
  const pub = await publish(mqttUrl, N, 'device');
  await waitFor(async () => (await weir.metric('weir_ingest_received_total')) >= N && (await weir.metric('weir_sink_success_total')) >= N, 300_000, 'every message stored');
  const after = procStats(pid);
  const wall = Date.now() - t0;
  const [r] = await query<{ rows: string; distinct: string; first_pub: Date; last_commit: Date; p50: number; p99: number }>(
    pgUrl,
    `SELECT count(*) AS rows, count(DISTINCT (device_id, seq)) AS distinct, min(ts) AS first_pub, max(received_at) AS last_commit,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM received_at - ts) * 1000) AS p50,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM received_at - ts) * 1000) AS p99
       FROM telemetry`,
  );
  await weir.stop();
  await endSessions(mqttUrl, clientId, CONNECTIONS);
  const seconds = (r!.last_commit.getTime() - r!.first_pub.getTime()) / 1000;
  const cpuMs = after.cpuMs - before.cpuMs;
  return {
    mode,
    published: pub.acked,
    stored: Number(r!.distinct),
    lost: pub.acked - Number(r!.distinct),
    duplicates: Number(r!.rows) - Number(r!.distinct),
    weir_msgs_per_s: Math.round(N / seconds),
    p50_ms: Math.round(r!.p50),
    p99_ms: Math.round(r!.p99),
    weir_cpu_pct: Math.round((cpuMs / wall) * 100),
    weir_cpu_us_per_msg: Math.round(((cpuMs * 1000) / N) * 10) / 10,
    weir_rss_mb_peak: after.rssPeakMb,
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
  const mq = await startMosquitto();
  const server = await startPostgres({ fsync: true });
  try {
    process.stdout.write(`pg bench: ${N} messages of 200 B, QoS 1, ${PUB_CLIENTS} publishers over ${DEVICES} device topics, weir with ${CONNECTIONS} connections\n`);
    const ceiling_msgs_per_s = await ceiling(mq.url);
    process.stdout.write(`  delivery ceiling: ${ceiling_msgs_per_s} msg/s\n`);
    const runs: WeirRun[] = [];
    for (const [mode, extra] of [
      ['after_commit', {}],
      ['on_receive', { ack: 'on_receive' }],
      ['after_commit_values', { insertMode: 'values' }],
    ] as const) {
      runs.push(await weirRun(mq.url, server.url, mode, extra));
      process.stdout.write(`  ${mode}: ${runs.at(-1)!.weir_msgs_per_s} msg/s\n`);
    }
    const inserts = await insertPaths(server.url);
    const main = runs[0]!;
    const result = {
      bench: 'pg',
      command: 'npm run bench -- pg',
      at: new Date().toISOString(),
      machine: machine(),
      messages: N,
      payload_bytes: 200,
      published: main.published,
      stored: main.stored,
      lost: main.lost,
      duplicates: main.duplicates,
      ceiling_msgs_per_s,
      weir_msgs_per_s: main.weir_msgs_per_s,
      ratio: Math.round((main.weir_msgs_per_s / ceiling_msgs_per_s) * 100) / 100,
      p50_ms: main.p50_ms,
      p99_ms: main.p99_ms,
      weir_cpu_pct: main.weir_cpu_pct,
      weir_cpu_us_per_msg: main.weir_cpu_us_per_msg,
      weir_rss_mb_peak: main.weir_rss_mb_peak,
      runs: runs.map((r) => ({ ...r, ratio: Math.round((r.weir_msgs_per_s / ceiling_msgs_per_s) * 100) / 100 })),
      insert_paths_rows_per_s: inserts,
    };
    printTable(
      runs.map((r) => ({ mode: r.mode, 'msg/s': r.weir_msgs_per_s, ratio: (r.weir_msgs_per_s / ceiling_msgs_per_s).toFixed(2), p50: r.p50_ms, p99: r.p99_ms, 'cpu%': r.weir_cpu_pct, 'µs/msg': r.weir_cpu_us_per_msg, 'rss MB': r.weir_rss_mb_peak, lost: r.lost, dup: r.duplicates })),
    );
    process.stdout.write(`  insert paths (rows/s, batches of 1000, no MQTT): ${JSON.stringify(inserts)}\n`);
    writeResult('pg', result);
    return result;
  } finally {
    await server.dispose();
    await mq.stop();
  }
}
