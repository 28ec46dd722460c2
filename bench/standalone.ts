// weir alone, without a broker in the way (npm run bench -- standalone): QoS 1 PUBLISH packets,
// encoded before each run, written over loopback by a stand-in broker in this process
// (bench/stand-in-broker.ts: no routing, no queues, only as fast as weir's receive window allows)
// into weir running the shipped weir.yaml and rules/ (4 connections, max_unacked 2,000, batches
// of 2,000 or 20 ms, ack after commit), with two sinks:
//   (a) discard: a bench-only sink that encodes each output into its row as the PostgreSQL sink
//       does and then drops the batch (bench/discard-weir.mjs; registered only in that process);
//   (b) pg: the real PostgreSQL (fsync on, test/harness/postgres.ts), through bin/weir.js.
// A run ends when the stand-in has every PUBACK; with ack after commit that is every row stored.
// weir runs compiled in its own process; its CPU (utime + stime) and RSS are read from /proc of
// that process. Placement: weir alone on cpu 1; the stand-in (this process) and PostgreSQL on
// cpu 0 (BENCH_PIN=0: none).
//
// Knobs: STANDALONE_SINKS (default "discard,pg"), STANDALONE_MESSAGES per run (default 400,000),
// STANDALONE_ROUNDS (default 3), STANDALONE_WARMUP (default 100,000), STANDALONE_DEVICES (distinct
// device topics, default 1,000), STANDALONE_RULES (below), STANDALONE_IDLE_S (idle RSS read this
// long after subscribing, default 30), BENCH_NO_BUILD=1, and BENCH_CPU_PROF / BENCH_NODE_ARGS as in
// bench/e2e.ts.
// Writes bench/results/standalone.json.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { join } from 'node:path';
import { telemetrySample } from '../src/embedded/devices.js';
import { freshDatabase, startPostgres, type PostgresServer } from '../test/harness/postgres.js';
import { freePort, startService, tempDir, waitFor, type Service } from '../test/harness/process.js';
import { parseMetrics, ROOT } from '../test/harness/weir.js';
import { median, PLACEMENT, procStats, replaceOnce, rssMb, usPerMsg, weirNodeArgs } from './e2e.js';
import { machine, printTable, writeResult } from './report.js';
import { encodeRun, StandInBroker, type EncodedRun } from './stand-in-broker.js';

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
const SIZE = 200;
/** The shipped weir.yaml's broker.connections. */
const CONNECTIONS = 4;

/** The messages of every run so far: device k mod DEVICES, each device's seq counting on across runs (so PostgreSQL's rows stay distinct). */
class Feed {
  private readonly seqs = new Uint32Array(DEVICES);
  private k = 0;

  /** One run of `n` messages, dealt to the connections in turn, encoded. */
  encode(n: number): EncodedRun[] {
    const per = Array.from({ length: CONNECTIONS }, (_, c) => Math.floor(n / CONNECTIONS) + (c < n % CONNECTIONS ? 1 : 0));
    const ts = Date.now();
    return per.map((count) =>
      encodeRun(count, () => {
        const device = this.k++ % DEVICES;
        const seq = ++this.seqs[device]!;
        const topic = RULES > 1 ? `device/${device}/telemetry${this.k % RULES}` : `device/${device}/telemetry`;
        return { topic, payload: telemetrySample(String(device), seq, SIZE, ts) };
      }),
    );
  }
}

interface Run {
  msgs_per_s: number;
  weir_cpu_us_per_msg: number;
  weir_cpu_pct: number;
  weir_rss_mb_peak: number;
  loadavg_1m: number;
}

async function startWeirOn(sink: string, broker: StandInBroker, pgUrl: string | undefined): Promise<{ svc: Service; httpPort: number; dir: string }> {
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
    WEIR_LOG_LEVEL: 'warn',
    BENCH_MEMORY_PROBE: dir,
  };
  const entry = sink === 'discard' ? [join(ROOT, 'bench/discard-weir.mjs')] : [join(ROOT, 'bin/weir.js'), 'run', '-c'];
  const config = RULES > 1 ? manyRules(dir) : join(ROOT, 'weir.yaml');
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

/** The shipped weir.yaml in `dir`, with RULES copies of the shipped rule in dir/rules, rule k reading device/+/telemetry<k>; returns the weir.yaml path. */
function manyRules(dir: string): string {
  const rule = parseYaml(readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8')) as { id: string; sql: string; tests?: unknown };
  mkdirSync(join(dir, 'rules'));
  for (let k = 0; k < RULES; k++) {
    const sql = replaceOnce(rule.sql, 'FROM "device/+/telemetry"', `FROM "device/+/telemetry${k}"`);
    writeFileSync(join(dir, 'rules', `telemetry-${k}.yaml`), stringifyYaml({ ...rule, id: `${rule.id}_${k}`, sql, tests: undefined }));
  }
  copyFileSync(join(ROOT, 'weir.yaml'), join(dir, 'weir.yaml'));
  return join(dir, 'weir.yaml');
}

async function metric(httpPort: number, name: string): Promise<number> {
  let sum = 0;
  for (const [k, v] of parseMetrics(await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text())) if (k === name || k.startsWith(`${name}{`)) sum += v;
  return sum;
}

/** Warm-up, then ROUNDS timed runs through the stand-in; weir's CPU and RSS from /proc of `pid`, and what it stored. */
async function drive(broker: StandInBroker, httpPort: number, pid: number, pgUrl: string | undefined) {
  // taskset execs node in place, so the pid is weir's own.
  await broker.whenSubscribed(CONNECTIONS);
  await new Promise((r) => setTimeout(r, 2_000));
  const rss_mb_subscribed = rssMb(pid);
  // Idle is read IDLE_S after subscribing: V8's memory reducer starts 8 s after start-up and then
  // gives back the young generation that module loading grew (32 MB at 2 s, 1 MB after).
  await new Promise((r) => setTimeout(r, Math.max(0, IDLE_S * 1000 - 2_000)));
  const rss_mb_idle_start = rssMb(pid);
  const feed = new Feed();
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
  const rows = pgUrl ? await countRows(pgUrl) : undefined;
  return { rss_mb_subscribed, rss_mb_idle_start, runs, rss_mb_idle_after, total, stored, deadLettered, rows };
}

async function benchSink(sink: string, broker: StandInBroker, pg: PostgresServer | undefined): Promise<Record<string, unknown>> {
  const pgUrl = sink === 'pg' && pg ? await freshDatabase(pg.url, 'standalone_pg') : undefined;
  const weir = await startWeirOn(sink, broker, pgUrl);
  const pid = weir.svc.proc.pid!;
  // weir is stopped whatever happens, so a failed run leaves no weir behind on the measured core.
  let driven: Awaited<ReturnType<typeof drive>>;
  try {
    driven = await drive(broker, weir.httpPort, pid, pgUrl);
  } finally {
    await weir.svc.stop(30_000);
  }
  const { rss_mb_subscribed, rss_mb_idle_start, runs, rss_mb_idle_after, total, stored, deadLettered, rows } = driven;
  const memory = readMemoryProbe(join(weir.dir, `memory-${pid}.json`));
  const med = (f: (r: Run) => number) => Math.round(median(runs.map(f)) * 100) / 100;
  const result = {
    sink,
    messages: total,
    stored,
    dead_lettered: deadLettered,
    ...(rows === undefined ? {} : { rows }),
    weir_msgs_per_s: med((r) => r.msgs_per_s),
    weir_cpu_us_per_msg: med((r) => r.weir_cpu_us_per_msg),
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
      'weir cpu%': r.weir_cpu_pct,
      'rss MB peak': r.weir_rss_mb_peak,
      load: r.loadavg_1m,
    })),
  );
  process.stdout.write(`  ${sink} heap: ${JSON.stringify(memory)}\n`);
  process.stdout.write(
    `  ${sink}: ${result.weir_msgs_per_s} msg/s, ${result.weir_cpu_us_per_msg} µs/msg of weir CPU (median of ${ROUNDS}); RSS ${rss_mb_subscribed} MB 2 s after subscribing, idle ${rss_mb_idle_start} MB ${IDLE_S} s after, ${rss_mb_idle_after} MB after, ${result.weir_rss_mb_peak} MB peak; stored ${stored} of ${total}${rows === undefined ? '' : `, ${rows} rows`}, ${deadLettered} dead-lettered\n`,
  );
  if (stored !== total || (rows !== undefined && rows !== total) || deadLettered !== 0)
    throw new Error(`${sink}: ${total} sent, ${stored} stored, ${rows ?? '-'} rows, ${deadLettered} dead-lettered`);
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
  const [r] = await query<{ n: string }>(url, 'SELECT count(*) AS n FROM telemetry');
  return Number(r!.n);
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
      `standalone bench: stand-in broker → weir (shipped weir.yaml and rules/) → ${SINKS.join(', ')}; ${ROUNDS} × ${MESSAGES} messages of ${SIZE} B over ${DEVICES} device topics, ${RULES} rule(s), after ${WARMUP} of warm-up\n`,
    );
    const results = [];
    for (const sink of SINKS) results.push(await benchSink(sink, broker, pg));
    const result = {
      bench: 'standalone',
      command: 'npm run bench -- standalone',
      at: new Date().toISOString(),
      machine: machine(),
      placement: PLACEMENT ? `weir on cpu ${PLACEMENT.measured}; the stand-in broker and PostgreSQL on cpu ${PLACEMENT.load}` : 'none',
      cpu_measured_from: '/proc/<weir pid>/stat (utime + stime) of the weir process',
      messages_per_run: MESSAGES,
      rounds: ROUNDS,
      warmup_messages: WARMUP,
      idle_rss_read_after_s: IDLE_S,
      devices: DEVICES,
      rules: RULES,
      payload_bytes: SIZE,
      node_args: weirNodeArgs(),
      sinks: results,
    };
    writeResult('standalone', result);
    return result;
  } finally {
    await broker.close();
    await pg?.dispose();
  }
}
