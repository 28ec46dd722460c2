// The console's cost (npm run bench -- console; issue 32, "Cost, measured"): weir at the pg
// benchmark's load (bench/pg.ts: QoS 1, 200 B JSON payloads from the benchmarks' publisher through
// the benchmarks' Mosquitto, into a real PostgreSQL with fsync on, ack after commit, the same
// weir settings), three ways at once:
//   closed  no console client;
//   open    the console open: a client asking what the Overview page asks (GET /api/overview
//           every 3 s) and what the Rules page asks (GET /api/rules every 3 s) — both pages at
//           once, as two tabs would, each next request when the last one has answered (console/src/poll.ts);
//   trace   a trace running on the rule: what the Trace page asks (GET /api/rules every 30 s,
//           GET /api/trace every 250 ms while a trace runs), with a new trace of 100 messages
//           (the most a trace takes) started as soon as the last one has ended, so one is always
//           running — someone pressing Start again and again.
// Each way is its own weir process (so each has its own peak RSS), started before the first run
// and kept to the end, with its own rule topic (`<way>/+/telemetry`) and database; their timed
// runs of BENCH_MESSAGES alternate in one hold (round r starts with way r mod 3), so the machine's
// drift hits all three alike. Each run: CPU per message (utime + stime of weir's process over the
// run, from /proc) and weir's peak RSS (VmHWM) so far; the result is the median µs/msg of each way,
// its highest peak RSS, and the ratios open/closed and trace/closed of the medians.
//
// The clients ask over plain HTTP from this process, not through the page in Chromium: on this
// 2-core machine the browser's own CPU (rendering the charts every 3 s) would land on one of the
// two cores under measurement. The requests are the page's (same paths, intervals and headers); what
// the page then does with the answers costs weir nothing. This process (the clients) sits on the load
// side's core once weir and PostgreSQL are started, where a browser on another machine would be.
//
// With the console closed weir still keeps its history (one sample of a few dozen counters every 5 s
// into fixed rings) and a tracer that the message path tests for `undefined`; their memory is
// measured here too (a History filled to its 180 points, with 1 and with 100 rules; a finished trace
// of 100 messages of 200 B) and printed beside the runs.
//
// Knobs: BENCH_MESSAGES (per run; default 1,000,000; the recorded run: 500,000), CONSOLE_ROUNDS
// (runs of each way, default 5), BENCH_WARMUP and the other BENCH_* of bench/e2e/settings.ts, BENCH_NO_BUILD=1.
// Writes bench/results/console.json.
import { execFileSync } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { History, POINTS } from '../src/core/app/console/history.js';
import { MAX_MESSAGES, Tracer } from '../src/core/path/trace.js';
import type { RuleEvent } from '../src/rules/types.js';
import { telemetrySample } from '../src/embedded/devices.js';
import { freshDatabase, startPostgres } from '../test/harness/postgres.js';
import { waitFor } from '../test/harness/process.js';
import { ROOT, startWeir, type WeirProcess } from '../test/harness/weir.js';
import { endSessions, query, telemetryFiles } from '../test/e2e/fixtures.js';
import { benchBrokerVersion, startBenchMosquitto } from './e2e/broker.js';
import { PLACEMENT, placeLoadListener, placement, placeSelf } from './e2e/placement.js';
import { procStats, rssMb } from './e2e/proc-stats.js';
import { publish } from './e2e/publisher.js';
import { BATCH_YAML, MAX_UNACKED, MESSAGES, QUIET_MS, WARMUP, WEIR_LOG_LEVEL, weirSettings } from './e2e/settings.js';
import { median } from './e2e/stats.js';
import { replaceOnce, weirNodeArgs } from './e2e/weir-config.js';
import { machine, printTable, writeResult } from './report.js';

const ROUNDS = Number(process.env.CONSOLE_ROUNDS ?? 5);
const CONNECTIONS = 4;
const SIZE = 200;
const RULE = 'telemetry_to_tsdb';
const WAYS = ['closed', 'open', 'trace'] as const;
type Way = (typeof WAYS)[number];

/** Requests a client made, and the bytes of their answers. */
interface Asked {
  requests: number;
  bytes: number;
  traces_started: number;
}

/**
 * One page's polling as console/src/poll.ts does it: GET api/<path>, then the next one `everyMs`
 * after the answer. `after` sees each answer (the Trace page starts a trace when none runs).
 */
function poll(base: string, path: string, everyMs: number, asked: Asked, stop: AbortSignal, after?: (body: unknown) => Promise<void>): Promise<void> {
  return (async () => {
    while (!stop.aborted) {
      try {
        const res = await fetch(`${base}/api/${path}`, { headers: { accept: 'application/json' }, cache: 'no-store', signal: stop });
        const text = await res.text();
        asked.requests++;
        asked.bytes += Buffer.byteLength(text);
        if (!res.ok) throw new Error(`GET /api/${path}: HTTP ${res.status} ${text}`);
        await after?.(JSON.parse(text));
      } catch (err) {
        if (stop.aborted) return;
        throw err;
      }
      await new Promise((r) => {
        const t = setTimeout(r, everyMs);
        stop.addEventListener('abort', () => (clearTimeout(t), r(null)), { once: true });
      });
    }
  })();
}

/** The client of one way, asking weir at `base` until `stop`; undefined for `closed`. */
function consoleClient(way: Way, base: string, stop: AbortSignal): { asked: Asked; done: Promise<void> } | undefined {
  const asked: Asked = { requests: 0, bytes: 0, traces_started: 0 };
  if (way === 'closed') return undefined;
  if (way === 'open') {
    const done = Promise.all([poll(base, 'overview', 3000, asked, stop), poll(base, 'rules', 3000, asked, stop)]).then(() => undefined);
    return { asked, done };
  }
  const startTrace = async () => {
    const res = await fetch(`${base}/api/trace`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-weir-console': '1', accept: 'application/json' },
      body: JSON.stringify({ rule: RULE, count: MAX_MESSAGES }),
      signal: stop,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`POST /api/trace: HTTP ${res.status} ${text}`);
    asked.requests++;
    asked.bytes += Buffer.byteLength(text);
    asked.traces_started++;
  };
  const active = (body: unknown) => (body as { active?: boolean }).active === true;
  const done = Promise.all([
    poll(base, 'rules', 30_000, asked, stop),
    // The page asks every 250 ms while a trace runs (and at once after starting one), every 5 s
    // otherwise; here one is started whenever the last has ended, so the page would ask every 250 ms.
    poll(base, 'trace', 250, asked, stop, async (b) => {
      if (!active(b)) await startTrace();
    }),
  ]).then(() => undefined);
  return { asked, done };
}

interface Started {
  way: Way;
  weir: WeirProcess;
  mqttUrl: string;
  pgUrl: string;
  clientId: string;
  client: ReturnType<typeof consoleClient>;
  idleRss: number;
}

async function startWay(way: Way, mqttUrl: string, adminUrl: string, stop: AbortSignal): Promise<Started> {
  const pgUrl = await freshDatabase(adminUrl, `console_${way}`);
  const clientId = `bench-console-${way}`;
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: CONNECTIONS });
  // bench/pg.ts's settings (its after_commit mode), and the rule reading this way's topics.
  const config = [
    ['max_unacked: 5000', `max_unacked: ${MAX_UNACKED}`],
    ['reconnect: { min_ms: 100, max_ms: 1000 }', `reconnect: { min_ms: 100, max_ms: 1000, quiet_ms: ${QUIET_MS} }`],
    ['batch: { max_items: 1000, max_delay_ms: 10 }', BATCH_YAML],
    ['    connect_timeout_ms: 2000', '    connect_timeout_ms: 2000\n    insert_mode: unnest'],
    ['  max_payload_bytes', '  ack: after_commit\n  max_payload_bytes'],
  ].reduce((text, [from, to]) => replaceOnce(text, from!, to!), files.config);
  const rule = replaceOnce(files.rules['telemetry.yaml']!, 'FROM "device/+/telemetry"', `FROM "${way}/+/telemetry"`);
  const weir = await startWeir({ config, rules: { 'telemetry.yaml': rule } }, { env: { WEIR_LOG_LEVEL }, compiled: true, nodeArgs: weirNodeArgs() });
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  const idleRss = rssMb(weir.svc.proc.pid!);
  // The console is open (or a trace running) from the start, as a page left open would be.
  const client = consoleClient(way, `http://127.0.0.1:${weir.httpPort}`, stop);
  return { way, weir, mqttUrl, pgUrl, clientId, client, idleRss };
}

interface Run {
  round: number;
  way: Way;
  msgs_per_s: number;
  weir_cpu_us_per_msg: number;
  weir_cpu_pct: number;
  weir_rss_mb_peak: number;
  console_requests: number;
  console_kb: number;
  traces_started: number;
  loadavg_1m: number;
}

/** One way's runs summed up, and what its database holds at the end. */
interface WayResult {
  way: Way;
  weir_cpu_us_per_msg: number;
  weir_msgs_per_s: number;
  weir_rss_mb_peak: number;
  weir_rss_mb_idle: number;
  console_requests_per_run: number;
  console_kb_per_run: number;
  traces_started_per_run: number;
  published: number;
  stored: number;
  lost: number;
  duplicates: number;
}

/** Publishes `n` messages on the way's topics and waits until weir has stored them all (`target` in total). */
async function load(s: Started, n: number, target: number): Promise<{ wallMs: number }> {
  const since = Date.now();
  await publish(s.mqttUrl, n, SIZE, `${s.way}/%i/telemetry`);
  const ended = await waitFor(
    async () => {
      // waitFor retries a check that throws: a weir that exited is a value here, thrown below.
      if (s.weir.svc.proc.exitCode !== null || s.weir.svc.proc.signalCode !== null) return 'exited';
      return (await s.weir.metric('weir_ingest_received_total')) >= target && (await s.weir.metric('weir_sink_success_total')) >= target;
    },
    300_000,
    `${s.way}: every message stored`,
  );
  if (ended === 'exited') throw new Error(`weir (${s.way}) exited:\n${s.weir.log().slice(-3000)}`);
  return { wallMs: Date.now() - since };
}

async function timedRun(s: Started, round: number): Promise<Run> {
  const pid = s.weir.svc.proc.pid!;
  const asked0 = { ...(s.client?.asked ?? { requests: 0, bytes: 0, traces_started: 0 }) };
  const before = procStats(pid);
  const { wallMs } = await load(s, MESSAGES, WARMUP + MESSAGES * (round + 1));
  const after = procStats(pid);
  const asked = s.client?.asked ?? asked0;
  const cpuMs = after.cpuMs - before.cpuMs;
  return {
    round: round + 1,
    way: s.way,
    msgs_per_s: Math.round(MESSAGES / (wallMs / 1000)),
    // To 0.01 µs (bench/e2e's usPerMsg gives 0.1, 1.5 % of these runs' figure: too coarse for a 2 % target).
    weir_cpu_us_per_msg: Math.round((cpuMs * 100_000) / MESSAGES) / 100,
    weir_cpu_pct: Math.round((cpuMs / wallMs) * 100),
    weir_rss_mb_peak: after.rssPeakMb,
    console_requests: asked.requests - asked0.requests,
    console_kb: Math.round((asked.bytes - asked0.bytes) / 1024),
    traces_started: asked.traces_started - asked0.traces_started,
    loadavg_1m: machine().loadavg_1m as number,
  };
}

/** Memory held after a full GC, in bytes: V8's heap and what lives outside it (typed arrays' and Buffers' stores). */
function heapAfterGc(gc: () => void): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/**
 * What the console keeps while closed, measured in this process: the History filled to its POINTS
 * points (with 1 rule, and with 100), and the last trace of MAX_MESSAGES messages of SIZE bytes
 * kept after it ended (the tracer holds only that one when no one traces).
 */
function buffers(): Record<string, number> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const kb = (bytes: number) => Math.round(bytes / 102.4) / 10;
  const history = (rules: number) => {
    const ids = Array.from({ length: rules }, (_, k) => `rule_${k}`);
    let total = 0;
    const base = heapAfterGc(gc);
    const h = new History({
      messagesIn: () => total,
      rowsOut: () => total,
      deadLetters: () => 0,
      ruleMatched: () => ids.map((id) => [id, total] as const),
    });
    for (let i = 0; i <= POINTS + 10; i++) {
      total += 150_000;
      h.sample(i * 5000);
    }
    const size = heapAfterGc(gc) - base;
    if (h.points().length !== POINTS) throw new Error('history not full');
    return size;
  };
  const trace = () => {
    const base = heapAfterGc(gc);
    const tracer = new Tracer();
    tracer.start(RULE, MAX_MESSAGES);
    for (let i = 0; i < MAX_MESSAGES; i++) {
      const payload = telemetrySample(String(i), i + 1, SIZE, Date.now());
      const event = { topic: `device/${i}/telemetry`, payload } as unknown as RuleEvent;
      const row = { ts: Date.now(), device_id: String(i), seq: i + 1, temp: 21.5, humidity: 40, location: 'hall' };
      tracer.active!.received(RULE, event);
      tracer.active!.output(RULE, event, { matched: true, outputs: [row] }, 1);
      tracer.active!.rendered(RULE, event, 'tsdb', () => ({ ...row }));
      tracer.active?.finished(RULE, event, 'stored', 'tsdb');
    }
    const size = heapAfterGc(gc) - base;
    if (tracer.active || tracer.last?.messages.length !== MAX_MESSAGES) throw new Error('trace did not end full');
    return size;
  };
  return { history_1_rule_kb: kb(history(1)), history_100_rules_kb: kb(history(100)), last_trace_100_messages_kb: kb(trace()) };
}

export async function benchConsole(): Promise<object> {
  // weir runs compiled, as in production (and serves the page from dist/).
  if (process.env.BENCH_NO_BUILD !== '1') execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const memory = buffers();
  process.stdout.write(
    `console buffers, measured (heap and external memory after GC): history full (${POINTS} points) ${memory.history_1_rule_kb} KB with 1 rule, ${memory.history_100_rules_kb} KB with 100 rules; a finished trace of ${MAX_MESSAGES} messages of ${SIZE} B ${memory.last_trace_100_messages_kb} KB\n`,
  );
  placeSelf();
  const mq = await startBenchMosquitto();
  placeLoadListener(mq.port);
  const server = await startPostgres({ fsync: true });
  const stop = new AbortController();
  const started: Started[] = [];
  try {
    process.stdout.write(
      `console bench: ${ROUNDS} × ${MESSAGES} messages of ${SIZE} B per way (closed, open, trace), QoS 1, weir with ${CONNECTIONS} connections into PostgreSQL, runs alternating\n`,
    );
    process.stdout.write(`  placement: ${placement()}; the console clients with the load\n  broker: ${benchBrokerVersion()}\n`);
    for (const way of WAYS) {
      started.push(await startWay(way, mq.url, server.url, stop.signal));
      process.stdout.write(`  weir ${way} ready\n`);
    }
    // From here on this process only asks over HTTP (the console clients) and waits: the load side.
    if (PLACEMENT) execFileSync('taskset', ['-a', '-p', '-c', PLACEMENT.load, String(process.pid)], { stdio: 'ignore' });
    const failed = started.map((s) => s.client?.done.catch((err: unknown) => err));
    if (WARMUP > 0) for (const s of started) await load(s, WARMUP, WARMUP);
    process.stdout.write('  warmed up\n');
    const runs: Run[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < WAYS.length; k++) {
        const run = await timedRun(started[(r + k) % WAYS.length]!, r);
        runs.push(run);
        printTable([run as unknown as Record<string, unknown>]);
      }
    }
    stop.abort();
    for (const f of failed) {
      const err = await f;
      if (err) throw err;
    }
    const total = WARMUP + ROUNDS * MESSAGES;
    const ways: WayResult[] = [];
    for (const s of started) {
      const mine = runs.filter((r) => r.way === s.way);
      const [row] = await query<{ rows: string; distinct: string }>(
        s.pgUrl,
        'SELECT count(*) AS rows, count(DISTINCT (device_id, ts, seq)) AS distinct FROM telemetry',
      );
      const stored = Number(row!.distinct);
      ways.push({
        way: s.way,
        weir_cpu_us_per_msg: median(mine.map((r) => r.weir_cpu_us_per_msg)),
        weir_msgs_per_s: median(mine.map((r) => r.msgs_per_s)),
        weir_rss_mb_peak: Math.max(...mine.map((r) => r.weir_rss_mb_peak)),
        weir_rss_mb_idle: s.idleRss,
        console_requests_per_run: median(mine.map((r) => r.console_requests)),
        console_kb_per_run: median(mine.map((r) => r.console_kb)),
        traces_started_per_run: median(mine.map((r) => r.traces_started)),
        published: total,
        stored,
        lost: total - stored,
        duplicates: Number(row!.rows) - stored,
      });
    }
    const [closed, open, trace] = ways;
    const versus = (w: WayResult) => ({
      cpu_ratio: Math.round((w.weir_cpu_us_per_msg / closed!.weir_cpu_us_per_msg) * 1000) / 1000,
      // Each round's run over the closed run of the same round, the median of those: the drift between rounds cancels.
      cpu_ratio_paired_median:
        Math.round(
          median(
            Array.from({ length: ROUNDS }, (_, r) => {
              const of = (way: Way) => runs.find((x) => x.round === r + 1 && x.way === way)!.weir_cpu_us_per_msg;
              return of(w.way) / of('closed');
            }),
          ) * 1000,
        ) / 1000,
      cpu_pct: Math.round((w.weir_cpu_us_per_msg / closed!.weir_cpu_us_per_msg - 1) * 1000) / 10,
      rss_peak_mb: w.weir_rss_mb_peak - closed!.weir_rss_mb_peak,
    });
    const comparison = { open_vs_closed: versus(open!), trace_vs_closed: versus(trace!) };
    printTable(
      ways.map((w) => ({
        way: w.way,
        'µs/msg (median)': w.weir_cpu_us_per_msg,
        'msg/s': w.weir_msgs_per_s,
        'rss MB peak': w.weir_rss_mb_peak,
        'idle MB': w.weir_rss_mb_idle,
        'requests/run': w.console_requests_per_run,
        'KB/run': w.console_kb_per_run,
        'traces/run': w.traces_started_per_run,
        lost: w.lost,
        dup: w.duplicates,
      })),
    );
    process.stdout.write(
      `  open/closed: CPU per message ×${comparison.open_vs_closed.cpu_ratio} of the medians (${comparison.open_vs_closed.cpu_pct} %; target ≤ +2 %), ×${comparison.open_vs_closed.cpu_ratio_paired_median} the median of the rounds' ratios; peak RSS ${comparison.open_vs_closed.rss_peak_mb} MB (target ≤ +10 MB)\n` +
        `  trace/closed: CPU per message ×${comparison.trace_vs_closed.cpu_ratio} of the medians (${comparison.trace_vs_closed.cpu_pct} %), ×${comparison.trace_vs_closed.cpu_ratio_paired_median} the median of the rounds' ratios; peak RSS ${comparison.trace_vs_closed.rss_peak_mb} MB\n`,
    );
    const result = {
      bench: 'console',
      command: 'npm run bench -- console',
      at: new Date().toISOString(),
      machine: machine(),
      placement: `${placement()}; the console clients with the load once weir and PostgreSQL are started`,
      broker: benchBrokerVersion(),
      weir_settings: weirSettings(),
      messages_per_run: MESSAGES,
      rounds: ROUNDS,
      warmup_messages: WARMUP,
      payload_bytes: SIZE,
      clients: {
        closed: 'none',
        open: 'GET /api/overview every 3 s and GET /api/rules every 3 s (the Overview and Rules pages), plain HTTP',
        trace: `GET /api/rules every 30 s, GET /api/trace every 250 ms while a trace runs, a new trace of ${MAX_MESSAGES} messages as soon as the last has ended (the Trace page), plain HTTP`,
      },
      buffers_measured: memory,
      ways,
      ...comparison,
      runs,
    };
    writeResult('console', result);
    return result;
  } finally {
    stop.abort();
    for (const s of started) {
      await s.weir.stop();
      await endSessions(mq.url, s.clientId, CONNECTIONS);
    }
    await server.dispose();
    await mq.stop();
  }
}
