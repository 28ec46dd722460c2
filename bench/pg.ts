// PostgreSQL end-to-end benchmark (npm run bench -- pg): QoS 1, 200 B JSON payloads published
// through a real Mosquitto as fast as one publisher process goes, measured in one run by the
// method of bench/e2e/interleave.ts (weir's runs interleaved with the MQTT delivery ceiling's):
//   1. weir with ack after commit and unnest inserts (the defaults), BENCH_ROUNDS runs; then
//      `ack: on_receive`, and insert_mode values, one run each — each run: msg/s from the first
//      publish to the last commit, p50/p99 publish→commit latency (from the rows: received_at =
//      now() of the inserting transaction, ts = publish time), CPU and peak RSS from /proc, lost
//      and duplicate rows;
//   2. the raw insert paths (unnest, multi-row VALUES, COPY) on the same database, without MQTT
//      (pg-insert-paths.ts).
// Prints tables and writes bench/results/pg.json.
//
// `npm run bench -- pg-timescaledb` is the same on a server with TimescaleDB preloaded (built or
// found by test/harness/timescaledb.ts): weir's migrate_on_start makes telemetry a hypertable.
//   1. `hypertable` (1-day chunks, as the shipped weir.yaml), BENCH_ROUNDS runs; then
//      `hypertable_compressing`, BENCH_ROUNDS runs: 1-minute chunks, a compression policy with
//      compress_after 1 minute whose job is scheduled every 10 s, so chunks are compressed on the
//      same cores while weir inserts into the newest one;
//   2. the insert paths into a hypertable, and into a hypertable's compressed chunk (late rows).
// Writes bench/results/pg-timescaledb.json.
import { execFileSync } from 'node:child_process';
import { benchBrokerVersion, startBenchMosquitto } from './e2e/broker.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { waitFor } from '../test/harness/process.js';
import { ROOT, startWeir } from '../test/harness/weir.js';
import { endSessions, query, telemetryFiles } from '../test/e2e/fixtures.js';
import { insertPaths } from './pg-insert-paths.js';
import { printTable, writeResult } from './report.js';
import { CeilingSubscriber } from './e2e/ceiling.js';
import { interleave } from './e2e/interleave.js';
import { type Occupancy, printOccupancy, sampleOccupancy } from './e2e/occupancy.js';
import { receivedByWeir } from './e2e/received.js';
import { listenerPid, placeLoadListener, placement, placeSelf } from './e2e/placement.js';
import type { ReadBack } from './e2e/read-back.js';
import { measuredFields, printInterleaved, resultHeader } from './e2e/results.js';
import { BATCH_YAML, DEVICES, MAX_UNACKED, MESSAGES, PUB_CLIENTS, QUIET_MS, ROUNDS, WEIR_LOG_LEVEL } from './e2e/settings.js';
import { replaceOnce, weirNodeArgs } from './e2e/weir-config.js';

const CONNECTIONS = 4;
const SIZE = 200;

/** One weir configuration, measured by interleave(): the fields of measuredFields() with its name. */
type ModeResult = ReturnType<typeof measuredFields> & { mode: string; weir_occupancy: Occupancy };

interface ModeSettings {
  ack?: string;
  insertMode?: string;
  /** YAML of the sink's hypertables key (indented under it). */
  hypertables?: string;
  /** SQL run once weir has migrated (e.g. to schedule a policy's job more often). */
  afterMigrate?: string;
}

async function weirMode(
  mqttUrl: string,
  brokerPid: number,
  adminUrl: string,
  ceiling: CeilingSubscriber,
  rounds: number,
  mode: string,
  extra: ModeSettings,
): Promise<ModeResult> {
  const pgUrl = await freshDatabase(adminUrl, 'bench');
  const clientId = `bench-${mode}`;
  let files = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: CONNECTIONS });
  files = {
    ...files,
    config: [
      ['max_unacked: 5000', `max_unacked: ${MAX_UNACKED}`],
      ['reconnect: { min_ms: 100, max_ms: 1000 }', `reconnect: { min_ms: 100, max_ms: 1000, quiet_ms: ${QUIET_MS} }`],
      ['batch: { max_items: 1000, max_delay_ms: 10 }', BATCH_YAML],
      [
        '    connect_timeout_ms: 2000',
        `    connect_timeout_ms: 2000\n    insert_mode: ${extra.insertMode ?? 'unnest'}${extra.hypertables ? `\n    hypertables:\n${extra.hypertables}` : ''}`,
      ],
      ['  max_payload_bytes', `  ack: ${extra.ack ?? 'after_commit'}\n  max_payload_bytes`],
    ].reduce((text, [from, to]) => replaceOnce(text, from!, to!), files.config),
  };
  const weir = await startWeir(files, { env: { WEIR_LOG_LEVEL }, compiled: true, nodeArgs: weirNodeArgs() });
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  if (extra.afterMigrate) await query(pgUrl, extra.afterMigrate);
  const occupancy = sampleOccupancy(weir);
  const { ceilings, runs } = await interleave(
    { weir, mqttUrl, size: SIZE, brokerPid, serverPid: listenerPid(Number(new URL(adminUrl).port)) },
    ceiling,
    rounds,
  );
  const waits = await printOccupancy(occupancy);
  const received = await receivedByWeir(weir, runs);
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
    const lat = await query<{ ms: number }>(
      pgUrl,
      'SELECT extract(epoch FROM received_at - ts) * 1000 AS ms FROM telemetry WHERE ts BETWEEN $1 AND $2 ORDER BY 1',
      [new Date(run.published.startedAt), new Date(run.published.endedAt)],
    );
    backs.push({
      records: Number(r!.rows),
      distinct: Number(r!.distinct),
      lastStored: r!.last_commit.getTime(),
      latenciesMs: Float64Array.from(lat, (l) => Number(l.ms)),
    });
  }
  const fields = measuredFields(ceilings, runs, backs);
  printInterleaved(mode, fields);
  return { mode, ...fields, ...received, weir_occupancy: waits };
}

/** The modes of each variant: name, rounds, settings. */
const VARIANTS = {
  pg: [
    ['after_commit', ROUNDS, {}],
    ['on_receive', 1, { ack: 'on_receive' }],
    ['after_commit_values', 1, { insertMode: 'values' }],
  ],
  'pg-timescaledb': [
    ['hypertable', ROUNDS, { hypertables: '      telemetry: { chunk_interval: 1 day }' }],
    [
      'hypertable_compressing',
      ROUNDS,
      {
        hypertables: '      telemetry: { chunk_interval: 1 minute, compression: { segment_by: [device_id], compress_after: 1 minute } }',
        afterMigrate:
          "SELECT alter_job(job_id, schedule_interval => interval '10 seconds') FROM timescaledb_information.jobs WHERE proc_name = 'policy_compression'",
      },
    ],
  ],
} satisfies Record<string, ReadonlyArray<readonly [string, number, ModeSettings]>>;

export async function benchPg(variant: keyof typeof VARIANTS = 'pg'): Promise<object> {
  const timescaledb = variant === 'pg-timescaledb';
  // weir runs compiled, as in production (tsx's transform would be measured otherwise).
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  placeSelf();
  const mq = await startBenchMosquitto();
  const brokerPid = placeLoadListener(mq.port);
  const server = await startPostgres({ fsync: true, timescaledb });
  try {
    if (timescaledb && !server.timescaledb.available) throw new Error(`pg-timescaledb: no TimescaleDB: ${server.timescaledb.reason}`);
    process.stdout.write(
      `${variant} bench: ${ROUNDS} × ${MESSAGES} messages of 200 B, QoS 1, ${PUB_CLIENTS} publishers over ${DEVICES} device topics, weir with ${CONNECTIONS} connections\n`,
    );
    process.stdout.write(`  placement: ${placement()}\n  broker: ${benchBrokerVersion()}\n`);
    const ceiling = await CeilingSubscriber.start(mq.url, SIZE, CONNECTIONS, brokerPid);
    // The default (ack after commit, unnest) over ROUNDS runs; the alternatives once each.
    const modes: ModeResult[] = [];
    for (const [mode, rounds, extra] of VARIANTS[variant]) {
      modes.push(await weirMode(mq.url, brokerPid, server.url, ceiling, rounds, mode, extra));
    }
    await ceiling.close();
    const inserts = timescaledb
      ? { hypertable: await insertPaths(server.url, 'hypertable'), compressed_chunk: await insertPaths(server.url, 'compressed') }
      : await insertPaths(server.url);
    const { mode: _main, ...main } = modes[0]!;
    const result = {
      ...resultHeader(variant, SIZE, ROUNDS),
      ...main,
      ...(timescaledb ? { timescaledb: server.timescaledb } : {}),
      other_modes: modes.slice(1).map((m) => ({
        mode: m.mode,
        weir_msgs_per_s: m.weir_msgs_per_s,
        ratio: m.ratio,
        p50_ms: m.p50_ms,
        p99_ms: m.p99_ms,
        weir_cpu_us_per_msg: m.weir_cpu_us_per_msg,
        weir_rss_mb_peak: m.weir_rss_mb_peak,
        weir_rss_mb_idle: m.weir_rss_mb_idle,
        server_cpu_us_per_msg: m.server_cpu_us_per_msg,
        lost: m.lost,
        duplicates: m.duplicates,
        weir_occupancy: m.weir_occupancy,
      })),
      insert_paths_rows_per_s: inserts,
    };
    printTable(
      modes.map((m) => ({
        mode: m.mode,
        'msg/s': m.weir_msgs_per_s,
        ratio: m.ratio,
        'to best ceiling': m.ratio_to_best_ceiling,
        p50: m.p50_ms,
        p99: m.p99_ms,
        'µs/msg': m.weir_cpu_us_per_msg,
        'rss MB': m.weir_rss_mb_peak,
        'idle MB': m.weir_rss_mb_idle,
        'server µs/msg': m.server_cpu_us_per_msg,
        lost: m.lost,
        dup: m.duplicates,
      })),
    );
    process.stdout.write(`  insert paths (rows/s, batches of 1000, no MQTT): ${JSON.stringify(inserts)}\n`);
    writeResult(variant, result);
    return result;
  } finally {
    await server.dispose();
    await mq.stop();
  }
}
