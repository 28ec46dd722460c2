// PostgreSQL end-to-end benchmark (npm run bench -- pg): QoS 1, 200 B JSON payloads published
// through a real Mosquitto as fast as one publisher process goes, measured in one run by the
// method of bench/e2e.ts (weir's runs interleaved with the MQTT delivery ceiling's):
//   1. weir with ack after commit and unnest inserts (the defaults), BENCH_ROUNDS runs; then
//      `ack: on_receive`, and insert_mode values, one run each — each run: msg/s from the first
//      publish to the last commit, p50/p99 publish→commit latency (from the rows: received_at =
//      now() of the inserting transaction, ts = publish time), CPU and peak RSS from /proc, lost
//      and duplicate rows;
//   2. the raw insert paths (unnest, multi-row VALUES, COPY) on the same database, without MQTT.
// Prints tables and writes bench/results/pg.json.
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
import { printTable, writeResult } from './report.js';
import { BATCH_YAML, CeilingSubscriber, DEVICES, interleave, listenerPid, MAX_UNACKED, measuredFields, MESSAGES, placeLoadListener, placement, placeSelf, printInterleaved, PUB_CLIENTS, replaceOnce, resultHeader, ROUNDS, weirNodeArgs, type ReadBack } from './e2e.js';

const CONNECTIONS = 4;
const SIZE = 200;

/** One weir configuration, measured by interleave(): the fields of measuredFields() with its name. */
type ModeResult = ReturnType<typeof measuredFields> & { mode: string };

async function weirMode(mqttUrl: string, brokerPid: number, adminUrl: string, ceiling: CeilingSubscriber, rounds: number, mode: string, extra: { ack?: string; insertMode?: string }): Promise<ModeResult> {
  const pgUrl = await freshDatabase(adminUrl, 'bench');
  const clientId = `bench-${mode}`;
  let files = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: CONNECTIONS });
  files = {
    ...files,
    config: [
      ['max_unacked: 5000', `max_unacked: ${MAX_UNACKED}`],
      ['batch: { max_items: 1000, max_delay_ms: 10 }', BATCH_YAML],
      ['    connect_timeout_ms: 2000', `    connect_timeout_ms: 2000\n    insert_mode: ${extra.insertMode ?? 'unnest'}`],
      ['  max_payload_bytes', `  ack: ${extra.ack ?? 'after_commit'}\n  max_payload_bytes`],
    ].reduce((text, [from, to]) => replaceOnce(text, from!, to!), files.config),
  };
  const weir = await startWeir(files, { env: { WEIR_LOG_LEVEL: 'warn' }, compiled: true, nodeArgs: weirNodeArgs() });
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  const { ceilings, runs } = await interleave({ weir, mqttUrl, size: SIZE, brokerPid, serverPid: listenerPid(Number(new URL(adminUrl).port)) }, ceiling, rounds);
  await weir.stop();
  await endSessions(mqttUrl, clientId, CONNECTIONS);
  // Each run's rows, by publish time (ts) inside its publisher's window; received_at is the
  // inserting transaction's now(), so the latest one is when the run's last row was committed.
  const backs: ReadBack[] = [];
  for (const run of runs) {
    const [r] = await query<{ rows: string; distinct: string; last_commit: Date }>(
      pgUrl,
      'SELECT count(*) AS rows, count(DISTINCT (device_id, seq)) AS distinct, max(received_at) AS last_commit FROM telemetry WHERE ts BETWEEN $1 AND $2',
      [new Date(run.published.startedAt), new Date(run.published.endedAt)],
    );
    const lat = await query<{ ms: number }>(pgUrl, 'SELECT extract(epoch FROM received_at - ts) * 1000 AS ms FROM telemetry WHERE ts BETWEEN $1 AND $2 ORDER BY 1', [new Date(run.published.startedAt), new Date(run.published.endedAt)]);
    backs.push({ records: Number(r!.rows), distinct: Number(r!.distinct), lastStored: r!.last_commit.getTime(), latenciesMs: Float64Array.from(lat, (l) => Number(l.ms)) });
  }
  const fields = measuredFields(ceilings, runs, backs);
  printInterleaved(mode, fields);
  return { mode, ...fields };
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
    const text = `${rs.map((r) => [(r[0] as Date).toISOString(), ...r.slice(1)].join('\t')).join('\n')}\n`;
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
  const brokerPid = placeLoadListener(mq.port);
  const server = await startPostgres({ fsync: true });
  try {
    process.stdout.write(`pg bench: ${ROUNDS} × ${MESSAGES} messages of 200 B, QoS 1, ${PUB_CLIENTS} publishers over ${DEVICES} device topics, weir with ${CONNECTIONS} connections\n`);
    process.stdout.write(`  placement: ${placement()}\n`);
    const ceiling = await CeilingSubscriber.start(mq.url, SIZE, CONNECTIONS, brokerPid);
    // The default (ack after commit, unnest) over ROUNDS runs; the alternatives once each.
    const modes: ModeResult[] = [];
    for (const [mode, rounds, extra] of [
      ['after_commit', ROUNDS, {}],
      ['on_receive', 1, { ack: 'on_receive' }],
      ['after_commit_values', 1, { insertMode: 'values' }],
    ] as const) {
      modes.push(await weirMode(mq.url, brokerPid, server.url, ceiling, rounds, mode, extra));
    }
    await ceiling.close();
    const inserts = await insertPaths(server.url);
    const { mode: _main, ...main } = modes[0]!;
    const result = {
      ...resultHeader('pg', SIZE, ROUNDS),
      ...main,
      other_modes: modes.slice(1).map((m) => ({ mode: m.mode, weir_msgs_per_s: m.weir_msgs_per_s, ratio: m.ratio, p50_ms: m.p50_ms, p99_ms: m.p99_ms, weir_cpu_us_per_msg: m.weir_cpu_us_per_msg, weir_rss_mb_peak: m.weir_rss_mb_peak, weir_rss_mb_idle: m.weir_rss_mb_idle, server_cpu_us_per_msg: m.server_cpu_us_per_msg, lost: m.lost, duplicates: m.duplicates })),
      insert_paths_rows_per_s: inserts,
    };
    printTable(modes.map((m) => ({ mode: m.mode, 'msg/s': m.weir_msgs_per_s, ratio: m.ratio, 'to best ceiling': m.ratio_to_best_ceiling, p50: m.p50_ms, p99: m.p99_ms, 'µs/msg': m.weir_cpu_us_per_msg, 'rss MB': m.weir_rss_mb_peak, 'idle MB': m.weir_rss_mb_idle, 'server µs/msg': m.server_cpu_us_per_msg, lost: m.lost, dup: m.duplicates })));
    process.stdout.write(`  insert paths (rows/s, batches of 1000, no MQTT): ${JSON.stringify(inserts)}\n`);
    writeResult('pg', result);
    return result;
  } finally {
    await server.dispose();
    await mq.stop();
  }
}
