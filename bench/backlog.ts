// A backlog drained (npm run bench -- backlog): BENCH_BACKLOG QoS 1 messages (default 1,000,000,
// 200 B telemetry from 1,000 devices) queued at a real Mosquitto while their subscriber was away,
// then drained by it, in turn:
//   ceiling  a plain counting client (weir's own MQTT reader, acking each message on receipt):
//            4 connections in one share group, persistent sessions, max_unacked 2,000, so the
//            broker delivers under the same flow control as to weir;
//   discard  weir on the shipped weir.yaml and rules/ (4 connections in share group `weir`, clean
//            start off, ack after commit) into the bench-only sink that encodes each row and drops
//            the batch (bench/discard-weir.mjs);
//   pg       the same into the real PostgreSQL of the test harness (fsync on), through bin/weir.js.
// Each drain is: the subscriber's sessions exist and it is stopped; the publisher queues the
// backlog (every PUBACK in: Mosquitto holds it all); the subscriber starts; the rate runs from
// the first message received to the last stored (weir: its /metrics read every POLL_MS, so each
// end is known to ±POLL_MS) or counted (ceiling). weir's CPU per message is counted from its first
// message received, so its start-up is not in it; its peak RSS is VmHWM of the process, start-up
// and drain. Every message must be stored: weir's stored counter and, for pg, the rows added equal
// the backlog, with nothing dead-lettered.
//
// Mosquitto (test/harness/mosquitto.ts) runs with max_queued_messages 0 and max_queued_bytes 0 (no
// limit: its defaults, 1,000 queued per client, would drop the backlog) and without persistence:
// it keeps running while the subscriber is away, so its sessions and queues stay in memory. It
// queues a shared subscription's messages for members whose sessions are offline, dealt in turn
// as for online ones, which is what weir's persistent sessions rely on (docs/operations.md).
//
// Order: ceiling, then each sink, then the ceiling again, BACKLOG_ROUNDS times; a weir drain's
// ratio is its rate over the mean of the ceilings before and after it. Placement as in
// bench/e2e/placement.ts: Mosquitto and the publisher on cpu 0, weir, PostgreSQL and the counting client on
// cpu 1 (BENCH_PIN=0: none). Knobs: BENCH_BACKLOG, BACKLOG_SINKS (default "discard,pg"),
// BACKLOG_ROUNDS (default 1), BENCH_NO_BUILD=1, BENCH_NODE_ARGS. Writes bench/results/backlog.json.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { BrokerSpec, type BrokerConfig } from '../src/config/schema.js';
import { MqttSession } from '../src/core/ingest/mqtt-session.js';
import { silentLogger } from '../src/log.js';
import { countRows } from '../test/e2e/fixtures.js';
import { benchBrokerVersion, startBenchMosquitto } from './e2e/broker.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { freePort, startService, tempDir, waitFor, type Service } from '../test/harness/process.js';
import { parseMetrics, ROOT } from '../test/harness/weir.js';
import { PLACEMENT, placeLoadListener, placeSelf } from './e2e/placement.js';
import { procStats, usPerMsg } from './e2e/proc-stats.js';
import { publish, type Published } from './e2e/publisher.js';
import { MAX_UNACKED, WEIR_LOG_LEVEL } from './e2e/settings.js';
import { median, ratio } from './e2e/stats.js';
import { weirNodeArgs } from './e2e/weir-config.js';
import { machine, printTable, writeResult } from './report.js';

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 1_000_000);
const SINKS = (process.env.BACKLOG_SINKS ?? 'discard,pg').split(',').filter(Boolean);
const ROUNDS = Number(process.env.BACKLOG_ROUNDS ?? 1);
const SIZE = 200;
/** The shipped weir.yaml's broker.connections; the counting client uses as many. */
const CONNECTIONS = 4;
/** How often weir's /metrics is read during a drain. */
const POLL_MS = 50;
/** Generous: a drain slower than 1,000 msg/s has failed. */
const DRAIN_TIMEOUT_MS = 60_000 + BACKLOG;

interface Drain {
  target: string;
  messages: number;
  msgs_per_s: number;
  drain_s: number;
  publish_msgs_per_s: number;
  loadavg_1m: number;
  weir_cpu_us_per_msg?: number;
  weir_rss_mb_peak?: number;
  stored?: number;
  rows_added?: number;
  dead_lettered?: number;
  ratio?: number;
}

/** The ceiling's subscriber: counts and acks on receipt; between drains its sessions stay at the broker. */
class CountingClient {
  private sessions: MqttSession[] = [];
  private count = 0;
  private first = 0;
  private last = 0;
  private readonly cfg: BrokerConfig;

  constructor(private readonly url: string) {
    this.cfg = Value.Default(BrokerSpec, { url, client_id: 'bench-backlog-ceiling', connections: CONNECTIONS, max_unacked: MAX_UNACKED }) as BrokerConfig;
  }

  async connect(): Promise<void> {
    for (let i = 0; i < CONNECTIONS; i++) {
      const s = new MqttSession(
        this.cfg,
        i,
        (_m, settle) => {
          const now = Date.now();
          if (this.count++ === 0) this.first = now;
          this.last = now;
          settle.release();
        },
        silentLogger,
      );
      this.sessions.push(s);
      s.start();
      await s.whenConnected();
      await s.setFilters(['$share/ceiling/sample/+/telemetry']);
    }
  }

  /** Disconnects; the broker keeps the sessions (and queues for them) unless `endSession`. */
  async disconnect(endSession = false): Promise<void> {
    for (const s of this.sessions) await s.close(endSession);
    this.sessions = [];
  }

  async drain(): Promise<Drain> {
    const published = await publish(this.url, BACKLOG, SIZE, 'sample/%i/telemetry');
    this.count = 0;
    await this.connect();
    await waitFor(() => this.count >= BACKLOG, DRAIN_TIMEOUT_MS, 'the counting client to receive the backlog');
    // A redelivered message would show here as one too many.
    await new Promise((r) => setTimeout(r, 500));
    await this.disconnect();
    if (this.count !== BACKLOG) throw new Error(`ceiling: ${BACKLOG} queued, ${this.count} received`);
    const ms = this.last - this.first;
    return { target: 'ceiling', messages: BACKLOG, msgs_per_s: Math.round(BACKLOG / (ms / 1000)), drain_s: ms / 1000, ...publishedFields(published) };
  }
}

function publishedFields(p: Published): Pick<Drain, 'publish_msgs_per_s' | 'loadavg_1m'> {
  return { publish_msgs_per_s: p.msgs_per_s, loadavg_1m: machine().loadavg_1m as number };
}

async function metrics(httpPort: number): Promise<Map<string, number> | undefined> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`).catch(() => undefined);
  return res?.ok ? parseMetrics(await res.text()) : undefined;
}

function sum(m: Map<string, number>, name: string): number {
  let n = 0;
  for (const [k, v] of m) if (k === name || k.startsWith(`${name}{`)) n += v;
  return n;
}

/** weir on the shipped weir.yaml into `sink`, as one client id for both sinks: the session (drained after each run) carries over. */
function startWeir(sink: string, mqttUrl: string, pgUrl: string | undefined, httpPort: number, dir: string): Service {
  const env = {
    ...process.env,
    WEIR_MQTT_URL: mqttUrl,
    WEIR_PG_URL: pgUrl ?? 'postgres://weir@127.0.0.1:1/unused',
    WEIR_HTTP_PORT: String(httpPort),
    WEIR_CLIENT_ID: 'bench-backlog',
    WEIR_DATA_DIR: dir,
    WEIR_LOG_LEVEL,
  };
  const entry = sink === 'discard' ? [join(ROOT, 'bench/discard-weir.mjs')] : [join(ROOT, 'bin/weir.js'), 'run', '-c'];
  return startService(process.execPath, [...weirNodeArgs(), ...entry, join(ROOT, 'weir.yaml')], join(dir, `weir-${sink}.log`), { cwd: ROOT, env });
}

/** Starts weir until its 4 connections are up, then stops it: its sessions, subscribed, stay at the broker. */
async function createWeirSessions(mqttUrl: string): Promise<void> {
  const dir = tempDir('backlog');
  const httpPort = await freePort();
  const svc = startWeir('discard', mqttUrl, undefined, httpPort, dir);
  try {
    await waitFor(
      async () => {
        if (svc.proc.exitCode !== null) throw new Error(`weir exited with ${svc.proc.exitCode}:\n${svc.tail()}`);
        const m = await metrics(httpPort);
        return m && sum(m, 'weir_ingest_connected') === CONNECTIONS;
      },
      60_000,
      'weir connected',
    );
    // The SUBSCRIBEs go out at CONNACK; give their SUBACKs a moment.
    await new Promise((r) => setTimeout(r, 1_000));
  } finally {
    await svc.stop(30_000);
  }
}

async function weirDrain(sink: string, mqttUrl: string, pgUrl: string | undefined): Promise<Drain> {
  const published = await publish(mqttUrl, BACKLOG, SIZE);
  const rowsBefore = pgUrl ? await countRows(pgUrl) : 0;
  const dir = tempDir('backlog');
  const httpPort = await freePort();
  const svc = startWeir(sink, mqttUrl, pgUrl, httpPort, dir);
  const pid = svc.proc.pid!;
  try {
    let first = 0;
    let cpuAtFirst = 0;
    let last = 0;
    let m: Map<string, number> | undefined;
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    for (;;) {
      if (svc.proc.exitCode !== null) throw new Error(`weir exited with ${svc.proc.exitCode}:\n${svc.tail()}`);
      if (Date.now() > deadline)
        throw new Error(`${sink}: backlog not stored within ${DRAIN_TIMEOUT_MS} ms: ${m ? sum(m, 'weir_sink_success_total') : 0} of ${BACKLOG}`);
      m = await metrics(httpPort);
      const now = Date.now();
      if (m && first === 0 && sum(m, 'weir_ingest_received_total') > 0) {
        first = now;
        cpuAtFirst = procStats(pid).cpuMs;
      }
      if (m && sum(m, 'weir_sink_success_total') >= BACKLOG) {
        last = now;
        break;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const after = procStats(pid);
    // Every PUBACK out before weir stops, so nothing of this backlog is redelivered to the next run.
    await waitFor(async () => sum((await metrics(httpPort)) ?? new Map(), 'weir_ingest_acked_total') >= BACKLOG, 30_000, 'weir to ack the backlog');
    const end = (await metrics(httpPort))!;
    const stored = sum(end, 'weir_sink_success_total');
    const deadLettered = sum(end, 'weir_dead_letter_total');
    const rowsAdded = pgUrl ? (await countRows(pgUrl)) - rowsBefore : undefined;
    if (stored !== BACKLOG || deadLettered !== 0 || (rowsAdded !== undefined && rowsAdded !== BACKLOG))
      throw new Error(`${sink}: ${BACKLOG} queued, ${stored} stored, ${rowsAdded ?? '-'} rows added, ${deadLettered} dead-lettered`);
    const ms = last - first;
    return {
      target: sink,
      messages: BACKLOG,
      msgs_per_s: Math.round(BACKLOG / (ms / 1000)),
      drain_s: ms / 1000,
      ...publishedFields(published),
      weir_cpu_us_per_msg: usPerMsg(after.cpuMs - cpuAtFirst, BACKLOG),
      weir_rss_mb_peak: after.rssPeakMb,
      stored,
      ...(rowsAdded === undefined ? {} : { rows_added: rowsAdded }),
      dead_lettered: deadLettered,
    };
  } finally {
    await svc.stop(30_000);
  }
}

export async function benchBacklog(): Promise<object> {
  // weir runs compiled, as in production; BENCH_NO_BUILD=1 skips the build.
  if (process.env.BENCH_NO_BUILD !== '1') execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
  placeSelf();
  const mosquitto = await startBenchMosquitto();
  placeLoadListener(mosquitto.port);
  const pg = SINKS.includes('pg') ? await startPostgres({ fsync: true }) : undefined;
  const ceiling = new CountingClient(mosquitto.url);
  try {
    const pgUrl = pg ? await freshDatabase(pg.url, 'backlog_pg') : undefined;
    process.stdout.write(
      `backlog bench: ${BACKLOG} QoS 1 messages of ${SIZE} B queued at Mosquitto, drained by the counting client and by weir into ${SINKS.join(', ')}; ${ROUNDS} round(s)\n`,
    );
    await ceiling.connect();
    await ceiling.disconnect();
    await createWeirSessions(mosquitto.url);
    const drains: Drain[] = [];
    const say = (d: Drain) => {
      drains.push(d);
      process.stdout.write(
        `  ${d.target}: ${d.msgs_per_s} msg/s (${d.drain_s} s)${d.weir_cpu_us_per_msg === undefined ? '' : `, weir ${d.weir_cpu_us_per_msg} µs/msg, ${d.weir_rss_mb_peak} MB peak RSS`}; load ${d.loadavg_1m}\n`,
      );
    };
    say(await ceiling.drain());
    for (let r = 0; r < ROUNDS; r++) {
      for (const sink of SINKS) say(await weirDrain(sink, mosquitto.url, sink === 'pg' ? pgUrl : undefined));
      say(await ceiling.drain());
    }
    // Each weir drain over the mean of the ceilings measured just before and after its round.
    const ceilings = drains.filter((d) => d.target === 'ceiling');
    for (const [i, d] of drains.entries()) {
      if (d.target === 'ceiling') continue;
      const before = ceilings.filter((c) => drains.indexOf(c) < i).pop()!;
      const after = ceilings.find((c) => drains.indexOf(c) > i)!;
      d.ratio = ratio(d.msgs_per_s, (before.msgs_per_s + after.msgs_per_s) / 2);
    }
    printTable(
      drains.map((d) => ({
        drained: d.target,
        'msg/s': d.msgs_per_s,
        s: d.drain_s,
        ratio: d.ratio ?? '',
        'weir µs/msg': d.weir_cpu_us_per_msg ?? '',
        'weir RSS MB peak': d.weir_rss_mb_peak ?? '',
        stored: d.stored ?? '',
        'publish msg/s': d.publish_msgs_per_s,
        load: d.loadavg_1m,
      })),
    );
    const bySink = Object.fromEntries(
      SINKS.map((s) => {
        const ds = drains.filter((d) => d.target === s);
        return [
          s,
          {
            median_ratio: median(ds.map((d) => d.ratio!)),
            median_msgs_per_s: median(ds.map((d) => d.msgs_per_s)),
            rss_mb_peak: Math.max(...ds.map((d) => d.weir_rss_mb_peak!)),
          },
        ];
      }),
    );
    const result = {
      bench: 'backlog',
      command: 'npm run bench -- backlog',
      at: new Date().toISOString(),
      machine: machine(),
      placement: PLACEMENT
        ? `Mosquitto and the publisher on cpu ${PLACEMENT.load}; weir, PostgreSQL and the counting client on cpu ${PLACEMENT.measured}`
        : 'none',
      broker: benchBrokerVersion(),
      backlog: BACKLOG,
      rounds: ROUNDS,
      payload_bytes: SIZE,
      poll_ms: POLL_MS,
      node_args: weirNodeArgs(),
      by_sink: bySink,
      drains,
    };
    writeResult('backlog', result);
    return result;
  } finally {
    await ceiling.disconnect();
    await mosquitto.dispose();
    await pg?.dispose();
  }
}
