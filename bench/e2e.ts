// What the end-to-end benchmarks (pg, kafka, pulsar) share: the publisher process, the MQTT
// delivery ceiling, CPU placement, the warm-up, weir's CPU and memory from /proc, the timed run,
// and the result's fields.
//
// Method, in each benchmark's one run: the ceiling is measured twice after a warm-up; weir is
// started, warmed up with the same load (BENCH_WARMUP, 50,000 messages: weir's and the sink
// server's JIT would otherwise be measured), then timed over BENCH_MESSAGES; the ceiling is
// measured twice more; the ratio divides weir's rate by the best of the four ceilings.
//
// CPU placement. This machine has 2 cores; unpinned, the publisher, Mosquitto, the sink's server
// and weir all compete, and the ratio to the ceiling says more about the scheduler than about
// weir. So, like the seeds' reports (load generators on their own machines), the load side —
// publisher and Mosquitto — gets core 0, and the measured side — weir, the sink's server and the
// ceiling's counting subscriber — gets core 1, in both the ceiling run and the weir runs. The
// ratio then says whether weir and its sink, on one core, keep up with what one core of broker
// and publisher can deliver. BENCH_PIN=0 turns placement off (it is off on a 1-core machine).
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { BrokerSpec, type BrokerConfig } from '../src/config/schema.js';
import { MqttSession } from '../src/core/mqtt-session.js';
import { silentLogger } from '../src/log.js';
import { waitFor } from '../test/harness/process.js';
import { ROOT, type WeirFiles, type WeirProcess } from '../test/harness/weir.js';
import { machine, printTable } from './report.js';

export const PUB_CLIENTS = 20;
/** weir's broker.max_unacked per connection in the benchmarks (BENCH_MAX_UNACKED; weir's default). */
export const MAX_UNACKED = Number(process.env.BENCH_MAX_UNACKED ?? 2_000);
export const DEVICES = 1000;

/**
 * weir's files for a message-sink benchmark: `connections` connections in one share group, the
 * sink `events` (its type-specific YAML in `sinkYaml`, indented by 4), batches of up to 2,000 or
 * 20 ms, 4 in flight, and one rule that sends every sample to it keyed by device (`actionYaml`
 * adds the action's own keys, indented by 4).
 */
export function messageSinkFiles(o: { mqttUrl: string; clientId: string; connections: number; dir: string; sinkYaml: string; actionYaml?: string }): WeirFiles {
  return {
    config: `
broker:
  url: ${o.mqttUrl}
  client_id: ${o.clientId}
  connections: ${o.connections}
  share_group: bench
  max_unacked: ${MAX_UNACKED}
  publisher_clientid: { topic_level: 2 }
sinks:
  events:
${o.sinkYaml}
    batch: { max_items: 2000, max_delay_ms: 20 }
    max_in_flight: 4
dead_letter: { file: ${join(o.dir, 'dead-letters.jsonl')} }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
    rules: {
      'bench.yaml': `
id: telemetry_bench
sql: |
  SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq, payload.temp AS temp,
         payload.hum AS humidity, payload.location AS location
  FROM "device/+/telemetry"
actions:
  - sink: events
    key: \${device_id}
${o.actionYaml ?? ''}`,
    },
  };
}

/** Core lists for `taskset -c`, or undefined when placement is off. */
export const PLACEMENT: { load: string; measured: string } | undefined = process.env.BENCH_PIN !== '0' && cpus().length >= 2 ? { load: '0', measured: cpus().length === 2 ? '1' : `1-${cpus().length - 1}` } : undefined;

/** Sets the CPU affinity of every thread of `pid`. */
function pin(pid: number, cpuList: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
}

/**
 * Puts this process on the measured side, so everything it starts from now on (sink servers,
 * weir, the counting subscriber) inherits that placement. Call first.
 */
export function placeSelf(): void {
  if (PLACEMENT) pin(process.pid, PLACEMENT.measured);
}

/** The process listening on a loopback TCP port. */
export function listenerPid(port: number): number {
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`no process found listening on port ${port}:\n${out}`);
  return Number(pid);
}

/** Moves the process listening on a loopback TCP port (Mosquitto) to the load side. */
export function placeLoadListener(port: number): void {
  if (PLACEMENT) pin(listenerPid(port), PLACEMENT.load);
}

/** Messages sent through weir before the timed run (BENCH_WARMUP), so neither weir's nor the sink server's JIT warm-up is measured. */
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 50_000);

export interface Published {
  published: number;
  acked: number;
  msgs_per_s: number;
}

/** Runs the publisher as its own process on the load side (never in a measured event loop). */
export function publish(url: string, limit: number, size: number): Promise<Published> {
  const args = ['--import', 'tsx', join(ROOT, 'bench/load/publisher.ts'), '-h', url, '-c', String(PUB_CLIENTS), '--devices', String(DEVICES), '-s', String(size), '-q', '1', '-L', String(limit), '-t', 'device/%i/telemetry'];
  const [cmd, argv] = PLACEMENT ? ['taskset', ['-c', PLACEMENT.load, process.execPath, ...args]] : [process.execPath, args];
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`publisher exited ${code}`))));
  });
}

/**
 * The MQTT delivery ceiling: the same broker and load delivered to a subscriber that only counts
 * (weir's own MQTT reader, acking on receipt, `connections` connections in one share group), msg/s
 * from its first to its last message, measured twice after the same warm-up weir gets. The
 * benchmarks measure it before and after weir's runs and divide by the best of all four: noise
 * only ever lowers a ceiling, and a low one would flatter the ratio.
 */
export async function ceiling(url: string, n: number, size: number, connections: number): Promise<number[]> {
  const cfg: BrokerConfig = Value.Default(BrokerSpec, { url, client_id: 'bench-ceiling', connections, max_unacked: 10_000 }) as BrokerConfig;
  let count = 0;
  let first = 0;
  let last = 0;
  const sessions = Array.from({ length: connections }, (_, i) =>
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
  const once = async (messages: number): Promise<number> => {
    count = 0;
    await new Promise((r) => setTimeout(r, 300));
    await publish(url, messages, size);
    await waitFor(() => count >= messages, 120_000, 'the counting subscriber to see every message');
    return Math.round(messages / ((last - first) / 1000));
  };
  if (WARMUP > 0) await once(WARMUP);
  const runs = [await once(n), await once(n)];
  for (const s of sessions) await s.close(true);
  return runs;
}

/** Fields of /proc/<pid>/stat after the command name: [ppid at 1, utime 11, stime 12, cutime 13, cstime 14]. */
function statFields(pid: string | number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}

/** CPU time (user + system) and peak RSS of a process, from /proc. */
export function procStats(pid: number): { cpuMs: number; rssPeakMb: number } {
  const fields = statFields(pid);
  if (!fields) throw new Error(`process ${pid} is gone`);
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime, in clock ticks (100/s)
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuMs: ticks * 10, rssPeakMb: Math.round(Number(hwm?.[1] ?? 0) / 1024) };
}

/**
 * CPU time of a server and every process under it (PostgreSQL's backends; a JVM is one process):
 * the live ones' own time plus what the root collected from children that ended.
 */
export function treeCpuMs(root: number): number {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const f = statFields(d);
    if (!f) continue;
    const ppid = Number(f[1]);
    let l = children.get(ppid);
    if (!l) children.set(ppid, (l = []));
    l.push(Number(d));
  }
  let ticks = 0;
  const rootFields = statFields(root);
  if (rootFields) ticks += Number(rootFields[13]) + Number(rootFields[14]);
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    const f = statFields(pid);
    if (f) ticks += Number(f[11]) + Number(f[12]);
    stack.push(...(children.get(pid) ?? []));
  }
  return ticks * 10;
}

export interface TimedRun {
  published: Published;
  /** Start of the timed run (epoch ms): messages published before it (ts < since) were warm-up. */
  since: number;
  /** Wall time from starting the publisher to weir's success counter reaching n. */
  wallMs: number;
  weir_cpu_pct: number;
  weir_cpu_us_per_msg: number;
  weir_rss_mb_peak: number;
  /** CPU of the sink's server (and its child processes) per message, over the timed run. */
  server_cpu_us_per_msg: number;
  /** CPU time the hypervisor gave to others during the timed run, % of the machine: noise to read the figures by. */
  steal_pct: number;
}

/** Total and steal jiffies of the whole machine, from /proc/stat. */
function machineTicks(): { total: number; steal: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return { total: f.reduce((a, b) => a + b, 0), steal: f[7] ?? 0 };
}

/**
 * Warms weir and the sink up with WARMUP messages, then publishes n into it and waits until its
 * sink reports all of them stored; CPU is weir's over the timed part only.
 */
export async function timedRun(weir: WeirProcess, mqttUrl: string, n: number, size: number, serverPid: number): Promise<TimedRun> {
  const stored = async (count: number) => (await weir.metric('weir_ingest_received_total')) >= count && (await weir.metric('weir_sink_success_total')) >= count;
  if (WARMUP > 0) {
    await publish(mqttUrl, WARMUP, size);
    await waitFor(() => stored(WARMUP), 300_000, 'every warm-up message stored');
    await new Promise((r) => setTimeout(r, 1000));
  }
  const pid = weir.svc.proc.pid!;
  const before = procStats(pid);
  const serverBefore = treeCpuMs(serverPid);
  const ticks = machineTicks();
  const since = Date.now();
  const published = await publish(mqttUrl, n, size);
  await waitFor(() => stored(WARMUP + n), 300_000, 'every message stored');
  const after = procStats(pid);
  const serverCpuMs = treeCpuMs(serverPid) - serverBefore;
  const ticksAfter = machineTicks();
  const wallMs = Date.now() - since;
  const cpuMs = after.cpuMs - before.cpuMs;
  return {
    published,
    since,
    wallMs,
    weir_cpu_pct: Math.round((cpuMs / wallMs) * 100),
    weir_cpu_us_per_msg: Math.round(((cpuMs * 1000) / n) * 10) / 10,
    weir_rss_mb_peak: after.rssPeakMb,
    server_cpu_us_per_msg: Math.round(((serverCpuMs * 1000) / n) * 10) / 10,
    steal_pct: Math.round(((ticksAfter.steal - ticks.steal) / Math.max(1, ticksAfter.total - ticks.total)) * 1000) / 10,
  };
}

/**
 * Node options for the weir under measurement: BENCH_CPU_PROF=<dir> writes a V8 CPU profile of
 * weir there when it exits (open it in Chrome DevTools, or summarise it with bench/profile.ts);
 * BENCH_NODE_ARGS adds any other (space-separated), to try V8 flags.
 */
export function weirNodeArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return [...(dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : []), ...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)];
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const ratio = (weir: number, ceil: number): number => Math.round((weir / ceil) * 100) / 100;

/** What a benchmark read back from a message sink (Kafka, Pulsar) about the timed run. */
export interface ReadBack {
  /** Messages of the timed run read, duplicates included. */
  records: number;
  /** Distinct device/seq among them. */
  distinct: number;
  /** Publish → stored latency of each, ascending. */
  latenciesMs: Float64Array;
  /** Earliest publish and latest stored time (epoch ms). */
  firstPublish: number;
  lastStored: number;
}

/** Counts what a reader reads: every message, and the timed run's (published from `since` on) in detail. */
export class ReadTally {
  /** Every message read, warm-up included. */
  read = 0;
  private readonly seen = new Set<string>();
  private readonly latencies: number[] = [];
  private firstPublish = Infinity;
  private lastStored = 0;

  constructor(private readonly since: number) {}

  /** One message: its device and seq, when it was published (payload ts) and when stored. */
  add(device: string, seq: number, publishedAt: number, storedAt: number): void {
    this.read++;
    if (publishedAt < this.since) return;
    this.seen.add(`${device}/${seq}`);
    this.latencies.push(storedAt - publishedAt);
    if (publishedAt < this.firstPublish) this.firstPublish = publishedAt;
    if (storedAt > this.lastStored) this.lastStored = storedAt;
  }

  result(): ReadBack {
    return { records: this.latencies.length, distinct: this.seen.size, latenciesMs: Float64Array.from(this.latencies).sort(), firstPublish: this.firstPublish, lastStored: this.lastStored };
  }
}

/**
 * The result every message-sink benchmark writes (the fields of pg.json), with `extra` after
 * them; prints its one-row table. msg/s runs from the first publish to the last stored message.
 */
export function sinkResult(bench: string, size: number, ceilings: number[], run: TimedRun, back: ReadBack, extra: Record<string, unknown>): Record<string, unknown> {
  const ceiling_msgs_per_s = Math.max(...ceilings);
  const weir_msgs_per_s = Math.round(back.records / ((back.lastStored - back.firstPublish) / 1000));
  const r = {
    bench,
    command: `npm run bench -- ${bench}`,
    at: new Date().toISOString(),
    machine: machine(),
    placement: placement(),
    messages: run.published.published,
    warmup_messages: WARMUP,
    payload_bytes: size,
    published: run.published.acked,
    stored: back.distinct,
    lost: run.published.acked - back.distinct,
    duplicates: back.records - back.distinct,
    ceiling_msgs_per_s,
    ceiling_runs_msgs_per_s: ceilings,
    weir_msgs_per_s,
    ratio: ratio(weir_msgs_per_s, ceiling_msgs_per_s),
    p50_ms: Math.round(percentile(back.latenciesMs, 50)),
    p99_ms: Math.round(percentile(back.latenciesMs, 99)),
    weir_cpu_pct: run.weir_cpu_pct,
    weir_cpu_us_per_msg: run.weir_cpu_us_per_msg,
    weir_rss_mb_peak: run.weir_rss_mb_peak,
    weir_msgs_per_cpu_s: Math.round(1e6 / run.weir_cpu_us_per_msg),
    server_cpu_us_per_msg: run.server_cpu_us_per_msg,
    steal_pct: run.steal_pct,
    ...extra,
  };
  printTable([{ 'ceiling msg/s': r.ceiling_msgs_per_s, 'msg/s': r.weir_msgs_per_s, ratio: r.ratio, p50: r.p50_ms, p99: r.p99_ms, 'cpu%': r.weir_cpu_pct, 'µs/msg': r.weir_cpu_us_per_msg, 'rss MB': r.weir_rss_mb_peak, 'server µs/msg': r.server_cpu_us_per_msg, 'steal%': r.steal_pct, lost: r.lost, dup: r.duplicates }]);
  return r;
}

/** The placement recorded in every result. */
export function placement(): string {
  return PLACEMENT ? `publisher and Mosquitto on cpu ${PLACEMENT.load}; weir, the sink's server and the counting subscriber on cpu ${PLACEMENT.measured}` : 'none (BENCH_PIN=0 or one core)';
}
