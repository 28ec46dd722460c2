// weir alone, without a broker in the way (npm run bench -- standalone): QoS 1 PUBLISH packets,
// encoded before each run, written over loopback by a stand-in broker in this process
// (bench/stand-in-broker.ts: no routing, no queues, only as fast as weir's receive window allows)
// into weir running the shipped weir.yaml and rules/ (4 connections, max_unacked 2,000, batches
// of 2,000 or 20 ms, ack after commit), with one of these sinks:
//   (a) discard: a bench-only sink that encodes each output into its row as the PostgreSQL sink
//       does and then drops the batch (bench/discard-weir.mjs; registered only in that process);
//   (b) pg: the real PostgreSQL (fsync on, test/harness/postgres.ts), through bin/weir.js;
//   (c) a sink with its own service, its weir.yaml and payload size, set up by
//       bench/standalone-<sink>.ts (SERVICE_SINKS below) and read back afterwards: kafka, pulsar, mqtt and http (bench/standalone-republish.ts).
// A run ends when the stand-in has every PUBACK; with ack after commit that is every row stored.
// weir runs compiled in its own process; its CPU (utime + stime) and RSS are read from /proc of
// that process. Placement: weir alone on cpu 1; the stand-in (this process) and the sink's
// service (PostgreSQL, Kafka) on cpu 0 (BENCH_PIN=0: none).
//
// Knobs: STANDALONE_SINKS (default "discard,pg"; also kafka, pulsar, mqtt, http), STANDALONE_MESSAGES per run (default 400,000),
// STANDALONE_ROUNDS (default 3), STANDALONE_WARMUP (default 100,000), STANDALONE_DEVICES (distinct
// device topics, default 1,000), STANDALONE_RULES and STANDALONE_FANOUT (below), STANDALONE_IDLE_S
// (idle RSS read this long after subscribing, default 30), BENCH_NO_BUILD=1, and BENCH_CPU_PROF /
// BENCH_NODE_ARGS as in bench/e2e/.
// Writes bench/results/standalone.json (standalone-rules<n>.json, standalone-fanout<n>.json,
// standalone-protobuf.json, standalone-sparkplug.json with those knobs).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { join } from 'node:path';
import { telemetrySample } from '../src/embedded/devices.js';
import { migrate } from '../src/sinks/postgres/migrate.js';
import { freshDatabase, startPostgres, type PostgresServer } from '../test/harness/postgres.js';
import { freePort, startService, tempDir, waitFor, type Service } from '../test/harness/process.js';
import { parseMetrics, ROOT } from '../test/harness/weir.js';
import { PLACEMENT } from './e2e/placement.js';
import { WEIR_LOG_LEVEL } from './e2e/settings.js';
import { procStats, rssMb, usPerMsg } from './e2e/proc-stats.js';
import { median } from './e2e/stats.js';
import { replaceOnce, weirNodeArgs } from './e2e/weir-config.js';
import { machine, printTable, writeResult } from './report.js';
import { encodeRun, StandInBroker, type EncodedRun } from './stand-in-broker.js';
import { binaryPayload } from './standalone-binary.js';
import { standaloneKafka } from './standalone-kafka.js';
import { startPulsarSink } from './standalone-pulsar.js';
import { standaloneRepublish, standaloneWebhook } from './standalone-republish.js';

const SINKS = (process.env.STANDALONE_SINKS ?? 'discard,pg').split(',').filter(Boolean);
const MESSAGES = Number(process.env.STANDALONE_MESSAGES ?? 400_000);
const ROUNDS = Number(process.env.STANDALONE_ROUNDS ?? 3);
const WARMUP = Number(process.env.STANDALONE_WARMUP ?? 100_000);
const DEVICES = Number(process.env.STANDALONE_DEVICES ?? 1_000);
/** Seconds after subscribing at which idle RSS is read, before any load (STANDALONE_IDLE_S). */
const IDLE_S = Number(process.env.STANDALONE_IDLE_S ?? 30);
/**
 * Rules (STANDALONE_RULES, default 1: the shipped rules/). With more, weir runs copies of the
 * shipped rule, rule k reading `device/+/telemetry<k>` only, and message i goes to
 * `device/<d>/telemetry<i mod rules>`: each message matches exactly one rule of many.
 */
const RULES = Number(process.env.STANDALONE_RULES ?? 1);
/**
 * Rules that each read every message (STANDALONE_FANOUT, default 1: the shipped rules/). With
 * more, weir runs that many copies of the shipped rule, all reading `device/+/telemetry`, copy k
 * writing table `telemetry_<k>` (created like `telemetry`, a hypertable alike where TimescaleDB
 * is there): each message becomes FANOUT rows, one in each table, and CPU is also given per row.
 */
const FANOUT = Number(process.env.STANDALONE_FANOUT ?? 1);
if (RULES > 1 && FANOUT > 1) throw new Error('STANDALONE_RULES and STANDALONE_FANOUT: one or the other');
const SIZE = 200;
const PAYLOAD_KIND = process.env.STANDALONE_PAYLOAD ?? 'json';
const BINARY = binaryPayload(PAYLOAD_KIND, SIZE);
if (BINARY && (RULES > 1 || FANOUT > 1)) throw new Error('STANDALONE_PAYLOAD goes with one rule');
/** Rows each message becomes. */
const ROWS_PER_MSG = BINARY?.rowsPerMsg ?? FANOUT;
/** The tables the rows go to. */
const TABLES = BINARY?.ddl ? ['spb_metric'] : FANOUT > 1 ? Array.from({ length: FANOUT }, (_, k) => `telemetry_${k}`) : ['telemetry'];
/** The shipped weir.yaml's broker.connections. */
const CONNECTIONS = 4;

/** A sink's real service for the runs: weir's config writing into it, its payload size, and a count read back from it afterwards. */
export interface ServiceSink {
  /** Payload bytes of its messages; SIZE when not given. */
  readonly size?: number;
  /** Writes weir.yaml and its rules into `dir` for weir fed by the stand-in at `brokerUrl`; returns weir.yaml's path. */
  config(dir: string, brokerUrl: string, httpPort: number): string;
  /** How many distinct messages of the `total` sent the service holds. */
  stored(total: number): Promise<number>;
  dispose(): Promise<void>;
}

/** Sinks with a service of their own, each started by its bench/standalone-<sink>.ts; weir runs through bin/weir.js. */
const SERVICE_SINKS: Record<string, (connections: number) => Promise<ServiceSink>> = {
  kafka: standaloneKafka,
  pulsar: startPulsarSink,
  mqtt: standaloneRepublish,
  http: standaloneWebhook,
};

/** The messages of every run so far: device k mod DEVICES, each device's seq counting on across runs (so PostgreSQL's rows stay distinct). */
class Feed {
  private readonly seqs = new Uint32Array(DEVICES);
  private k = 0;

  constructor(private readonly size: number) {}

  /** One run of `n` messages, dealt to the connections in turn, encoded. */
  encode(n: number): EncodedRun[] {
    const per = Array.from({ length: CONNECTIONS }, (_, c) => Math.floor(n / CONNECTIONS) + (c < n % CONNECTIONS ? 1 : 0));
    const ts = Date.now();
    return per.map((count) =>
      encodeRun(count, () => {
        const device = this.k++ % DEVICES;
        const seq = ++this.seqs[device]!;
        if (BINARY) return BINARY.message(device, seq, ts);
        const topic = RULES > 1 ? `device/${device}/telemetry${this.k % RULES}` : `device/${device}/telemetry`;
        return { topic, payload: telemetrySample(String(device), seq, this.size, ts) };
      }),
    );
  }
}

interface Run {
  msgs_per_s: number;
  weir_cpu_us_per_msg: number;
  weir_cpu_us_per_row: number;
  weir_cpu_pct: number;
  weir_rss_mb_peak: number;
  loadavg_1m: number;
}

async function startWeirOn(
  sink: string,
  broker: StandInBroker,
  pgUrl: string | undefined,
  service: ServiceSink | undefined,
): Promise<{ svc: Service; httpPort: number; dir: string }> {
  const httpPort = await freePort();
  const dir = tempDir('standalone');
  // The shipped weir.yaml and rules/, with only the endpoints from the environment it reads.
  const env = {
    ...process.env,
    WEIR_MQTT_URL: broker.url,
    WEIR_PG_URL: pgUrl ?? 'postgres://weir@127.0.0.1:1/unused',
    WEIR_HTTP_PORT: String(httpPort),
    WEIR_CLIENT_ID: `standalone-${sink}`,
    WEIR_DATA_DIR: dir,
    WEIR_LOG_LEVEL,
    BENCH_MEMORY_PROBE: dir,
  };
  const entry = sink === 'discard' ? [join(ROOT, 'bench/discard-weir.mjs')] : [join(ROOT, 'bin/weir.js'), 'run', '-c'];
  const config = service
    ? service.config(dir, broker.url, httpPort)
    : BINARY
      ? BINARY.config(dir)
      : RULES > 1 || FANOUT > 1
        ? ruleCopies(dir)
        : join(ROOT, 'weir.yaml');
  // Every run samples weir's heap (bench/memory-probe.mjs, 10 samples a second) into its directory.
  const args = ['--import', join(ROOT, 'bench/memory-probe.mjs'), ...weirNodeArgs(), ...entry, config];
  const [cmd, argv] = PLACEMENT ? ['taskset', ['-c', PLACEMENT.measured, process.execPath, ...args]] : [process.execPath, args];
  const svc = startService(cmd, argv, join(dir, 'weir.log'), { cwd: ROOT, env });
  await waitFor(
    async () => {
      if (svc.proc.exitCode !== null) throw new Error(`weir exited with ${svc.proc.exitCode}:\n${svc.tail()}`);
      return (await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => undefined))?.ok;
    },
    60_000,
    'weir ready',
  );
  return { svc, httpPort, dir };
}

/**
 * The shipped weir.yaml in `dir`, with copies of the shipped rule in dir/rules: RULES copies, rule
 * k reading device/+/telemetry<k>; or FANOUT copies, rule k writing table telemetry_<k> (with the
 * hypertable settings of telemetry). Returns the weir.yaml path.
 */
function ruleCopies(dir: string): string {
  const rule = parseYaml(readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8')) as { id: string; sql: string; actions: Array<Record<string, unknown>> };
  mkdirSync(join(dir, 'rules'));
  for (let k = 0; k < Math.max(RULES, FANOUT); k++) {
    const copy =
      RULES > 1
        ? { ...rule, sql: replaceOnce(rule.sql, 'FROM "device/+/telemetry"', `FROM "device/+/telemetry${k}"`) }
        : { ...rule, actions: rule.actions.map((a) => ({ ...a, table: TABLES[k] })) };
    writeFileSync(join(dir, 'rules', `telemetry-${k}.yaml`), stringifyYaml({ ...copy, id: `${rule.id}_${k}`, tests: undefined }));
  }
  if (FANOUT === 1) {
    copyFileSync(join(ROOT, 'weir.yaml'), join(dir, 'weir.yaml'));
    return join(dir, 'weir.yaml');
  }
  // Interpolation happens after parsing, so the ${…} values pass through as they are.
  const config = parseYaml(readFileSync(join(ROOT, 'weir.yaml'), 'utf8')) as { sinks: Record<string, { hypertables?: Record<string, unknown> }> };
  for (const sink of Object.values(config.sinks)) {
    const like = sink.hypertables?.telemetry;
    if (like) sink.hypertables = Object.fromEntries(TABLES.map((t) => [t, like]));
  }
  writeFileSync(join(dir, 'weir.yaml'), stringifyYaml(config));
  return join(dir, 'weir.yaml');
}

/** A database for the pg case: weir's migrations, and the fan-out tables made like telemetry before weir's own migrate_on_start makes them hypertables. */
async function databaseFor(pg: PostgresServer): Promise<string> {
  const url = await freshDatabase(pg.url, 'standalone_pg');
  if (BINARY?.ddl) {
    const { query } = await import('../test/e2e/fixtures.js');
    await query(url, BINARY.ddl);
  }
  if (FANOUT > 1) {
    await migrate(url, join(ROOT, 'migrations'));
    const { query } = await import('../test/e2e/fixtures.js');
    for (const t of TABLES) await query(url, `CREATE TABLE ${t} (LIKE telemetry INCLUDING ALL)`);
  }
  return url;
}

async function metric(httpPort: number, name: string): Promise<number> {
  let sum = 0;
  for (const [k, v] of parseMetrics(await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text())) if (k === name || k.startsWith(`${name}{`)) sum += v;
  return sum;
}

/** Warm-up, then ROUNDS timed runs through the stand-in; weir's CPU and RSS from /proc of `pid`, and what it stored. */
async function drive(broker: StandInBroker, httpPort: number, pid: number, pgUrl: string | undefined, service: ServiceSink | undefined, size: number) {
  // taskset execs node in place, so the pid is weir's own.
  await broker.whenSubscribed(CONNECTIONS);
  await new Promise((r) => setTimeout(r, 2_000));
  const rss_mb_subscribed = rssMb(pid);
  // Idle is read IDLE_S after subscribing: V8's memory reducer starts 8 s after start-up and then
  // gives back the young generation that module loading grew (32 MB at 2 s, 1 MB after).
  await new Promise((r) => setTimeout(r, Math.max(0, IDLE_S * 1000 - 2_000)));
  const rss_mb_idle_start = rssMb(pid);
  const feed = new Feed(size);
  // Sparkplug: every device's DBIRTH, stored before any DDATA names its aliases.
  const births = BINARY?.births(DEVICES) ?? [];
  if (births.length > 0) {
    const per = Array.from({ length: CONNECTIONS }, (_, c) => births.filter((_, k) => k % CONNECTIONS === c));
    await broker.send(per.map((list) => encodeRun(list.length, (k) => list[k]!)));
  }
  if (WARMUP > 0) await broker.send(feed.encode(WARMUP));
  const runs: Run[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const encoded = feed.encode(MESSAGES);
    await broker.whenSubscribed(CONNECTIONS);
    const before = procStats(pid);
    const t0 = performance.now();
    await broker.send(encoded);
    const ms = performance.now() - t0;
    const after = procStats(pid);
    const cpuMs = after.cpuMs - before.cpuMs;
    runs.push({
      msgs_per_s: Math.round(MESSAGES / (ms / 1000)),
      weir_cpu_us_per_msg: usPerMsg(cpuMs, MESSAGES),
      weir_cpu_us_per_row: usPerMsg(cpuMs, MESSAGES * ROWS_PER_MSG),
      weir_cpu_pct: Math.round((cpuMs / ms) * 100),
      weir_rss_mb_peak: after.rssPeakMb,
      loadavg_1m: machine().loadavg_1m as number,
    });
  }
  // Idle again: what weir keeps once the load is gone (V8 shrinks its young generation after a few idle GCs).
  await new Promise((r) => setTimeout(r, 5_000));
  const rss_mb_idle_after = rssMb(pid);
  const total = WARMUP + ROUNDS * MESSAGES;
  const stored = await metric(httpPort, 'weir_sink_success_total');
  const deadLettered = await metric(httpPort, 'weir_dead_letter_total');
  const rows = pgUrl ? await countRows(pgUrl) : await service?.stored(total);
  return { rss_mb_subscribed, rss_mb_idle_start, runs, rss_mb_idle_after, total, stored, deadLettered, rows };
}

async function benchSink(
  sink: string,
  broker: StandInBroker,
  pg: PostgresServer | undefined,
  service: ServiceSink | undefined,
): Promise<Record<string, unknown>> {
  const pgUrl = sink === 'pg' && pg ? await databaseFor(pg) : undefined;
  const size = service?.size ?? SIZE;
  const weir = await startWeirOn(sink, broker, pgUrl, service);
  const pid = weir.svc.proc.pid!;
  // weir is stopped whatever happens, so a failed run leaves no weir behind on the measured core.
  let driven: Awaited<ReturnType<typeof drive>>;
  try {
    driven = await drive(broker, weir.httpPort, pid, pgUrl, service, size);
  } finally {
    await weir.svc.stop(30_000);
    await service?.dispose();
  }
  const { rss_mb_subscribed, rss_mb_idle_start, runs, rss_mb_idle_after, total, stored, deadLettered, rows } = driven;
  const memory = readMemoryProbe(join(weir.dir, `memory-${pid}.json`));
  const med = (f: (r: Run) => number) => Math.round(median(runs.map(f)) * 100) / 100;
  const result = {
    sink,
    payload_bytes: size,
    messages: total,
    stored,
    dead_lettered: deadLettered,
    ...(rows === undefined ? {} : { rows }),
    weir_msgs_per_s: med((r) => r.msgs_per_s),
    weir_cpu_us_per_msg: med((r) => r.weir_cpu_us_per_msg),
    rows_per_msg: ROWS_PER_MSG,
    weir_cpu_us_per_row: med((r) => r.weir_cpu_us_per_row),
    weir_msgs_per_cpu_s: Math.round(1e6 / med((r) => r.weir_cpu_us_per_msg)),
    weir_rss_mb_peak: Math.max(...runs.map((r) => r.weir_rss_mb_peak)),
    weir_rss_mb_subscribed: rss_mb_subscribed,
    weir_rss_mb_idle_start: rss_mb_idle_start,
    weir_rss_mb_idle_after: rss_mb_idle_after,
    memory,
    runs,
  };
  printTable(
    runs.map((r, i) => ({
      sink,
      run: i + 1,
      'msg/s': r.msgs_per_s,
      'weir µs/msg': r.weir_cpu_us_per_msg,
      ...(ROWS_PER_MSG > 1 ? { 'weir µs/row': r.weir_cpu_us_per_row } : {}),
      'weir cpu%': r.weir_cpu_pct,
      'rss MB peak': r.weir_rss_mb_peak,
      load: r.loadavg_1m,
    })),
  );
  process.stdout.write(`  ${sink} heap: ${JSON.stringify(memory)}\n`);
  process.stdout.write(
    `  ${sink}: ${result.weir_msgs_per_s} msg/s, ${result.weir_cpu_us_per_msg} µs/msg${ROWS_PER_MSG > 1 ? ` (${result.weir_cpu_us_per_row} µs per row, ${ROWS_PER_MSG} rows a message)` : ''} of weir CPU (median of ${ROUNDS}); RSS ${rss_mb_subscribed} MB 2 s after subscribing, idle ${rss_mb_idle_start} MB ${IDLE_S} s after, ${rss_mb_idle_after} MB after, ${result.weir_rss_mb_peak} MB peak; stored ${stored} of ${total * ROWS_PER_MSG + (BINARY?.birthRows(DEVICES) ?? 0)}${rows === undefined ? '' : `, ${rows} ${pgUrl ? 'rows' : 'read back'}`}, ${deadLettered} dead-lettered\n`,
  );
  const expected = total * ROWS_PER_MSG + (BINARY?.birthRows(DEVICES) ?? 0);
  if (stored !== expected || (rows !== undefined && rows !== expected) || deadLettered !== 0)
    throw new Error(`${sink}: ${total} sent (${expected} rows expected), ${stored} stored, ${rows ?? '-'} rows, ${deadLettered} dead-lettered`);
  return result;
}

/** The peaks bench/memory-probe.mjs recorded: RSS, V8's heap (used and reserved), its new and old spaces, memory outside the heap. */
function readMemoryProbe(file: string): Record<string, number> | undefined {
  if (!existsSync(file)) return undefined;
  const { peak } = JSON.parse(readFileSync(file, 'utf8')) as { peak: Record<string, number> };
  const pick = ['rss', 'heapTotal', 'heapUsed', 'new_space.size', 'old_space.size', 'large_object_space.size', 'external', 'arrayBuffers'];
  return Object.fromEntries(pick.map((k) => [`${k}_mb_peak`, peak[k] ?? 0]));
}

async function countRows(url: string): Promise<number> {
  const { query } = await import('../test/e2e/fixtures.js');
  let n = 0;
  for (const t of TABLES) n += Number((await query<{ n: string }>(url, `SELECT count(*) AS n FROM ${t}`))[0]!.n);
  return n;
}

export async function benchStandalone(): Promise<object> {
  // weir runs compiled, as in production; BENCH_NO_BUILD=1 skips the build (a series of runs on one build).
  if (process.env.BENCH_NO_BUILD !== '1') execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  // The stand-in and PostgreSQL on the other core, so weir's core is its own.
  if (PLACEMENT) execFileSync('taskset', ['-a', '-p', '-c', PLACEMENT.load, String(process.pid)], { stdio: 'ignore' });
  const broker = await StandInBroker.start();
  const pg = SINKS.includes('pg') ? await startPostgres({ fsync: true }) : undefined;
  try {
    process.stdout.write(
      `standalone bench: stand-in broker → weir (shipped weir.yaml and rules/; pulsar: bench/pulsar.ts's) → ${SINKS.join(', ')}; ${ROUNDS} × ${MESSAGES} ${PAYLOAD_KIND} messages${BINARY?.ddl ? '' : ` of ${SIZE} B`} (pulsar: 1 KB) over ${DEVICES} device topics, ${RULES > 1 ? `${RULES} rules, each message matching one` : FANOUT > 1 ? `${FANOUT} rules each matching every message, into ${FANOUT} tables` : '1 rule'}, after ${WARMUP} of warm-up\n`,
    );
    const results = [];
    for (const sink of SINKS) {
      const service = await SERVICE_SINKS[sink]?.(CONNECTIONS);
      try {
        results.push(await benchSink(sink, broker, pg, service));
      } finally {
        await service?.dispose();
      }
    }
    const result = {
      bench: 'standalone',
      command: 'npm run bench -- standalone',
      at: new Date().toISOString(),
      machine: machine(),
      placement: PLACEMENT ? `weir on cpu ${PLACEMENT.measured}; the stand-in broker and the sink's service on cpu ${PLACEMENT.load}` : 'none',
      cpu_measured_from: '/proc/<weir pid>/stat (utime + stime) of the weir process',
      messages_per_run: MESSAGES,
      rounds: ROUNDS,
      warmup_messages: WARMUP,
      idle_rss_read_after_s: IDLE_S,
      devices: DEVICES,
      rules: Math.max(RULES, FANOUT),
      rules_per_message: ROWS_PER_MSG,
      payload_bytes: SIZE,
      payload: PAYLOAD_KIND,
      node_args: weirNodeArgs(),
      sinks: results,
    };
    writeResult(
      BINARY ? `standalone-${PAYLOAD_KIND}` : RULES > 1 ? `standalone-rules${RULES}` : FANOUT > 1 ? `standalone-fanout${FANOUT}` : 'standalone',
      result,
    );
    return result;
  } finally {
    await broker.close();
    await pg?.dispose();
  }
}
