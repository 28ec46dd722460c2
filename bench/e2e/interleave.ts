// The method of the end-to-end benchmarks (pg, kafka, pulsar): weir's timed runs interleaved
// with the MQTT delivery ceiling's, and each run's ratio to the ceilings beside it. The parts it
// uses are in this folder: settings.ts (the knobs), placement.ts (which core runs what),
// publisher.ts, ceiling.ts, proc-stats.ts; read-back.ts and results.ts turn the runs into a result.
//
// Method, in each benchmark's one run. weir is started and warmed up (BENCH_WARMUP, 50,000
// messages: weir's and the sink server's JIT would otherwise be measured), and so is the
// ceiling's counting subscriber. Then ceiling and weir take turns: ceiling, weir, ceiling, weir,
// …, ceiling (BENCH_ROUNDS weir runs of BENCH_MESSAGES each). Each weir run's ratio divides its
// rate by the mean of the two ceilings measured just before and just after it (an A-B-A design:
// the ceiling at the weir run's time, if it drifted evenly between them); the result's ratio is
// the median of those. Why: this VM's speed drifts by a third within seconds (adjacent ceilings
// of one run measured 26,878 and 39,920 msg/s, with no steal showing), so a weir run is only
// comparable with ceilings measured beside it in time. Two stricter readings are recorded too:
// each run over the higher of its two neighbours, and the median run over the best ceiling of
// the whole benchmark.
//
// Both rates run from the publisher's first publish to the last message delivered (ceiling) or
// stored (weir), and both use the same publisher and broker: the ceiling on `sample/%i/telemetry`
// topics, which weir does not subscribe to, weir on `device/%i/telemetry` — same lengths, same
// payloads — so the two never see each other's messages.
import type { WeirProcess } from '../../test/harness/weir.js';
import { waitFor } from '../../test/harness/process.js';
import type { CeilingRun, CeilingSubscriber } from './ceiling.js';
import { Meter, procStats, rssMb, treeCpuMs, usPerMsg } from './proc-stats.js';
import { type Published, publish } from './publisher.js';
import { MAX_STEAL_PCT, MESSAGES, ROUNDS, WARMUP } from './settings.js';
import { ratio } from './stats.js';

export interface TimedRun {
  published: Published;
  /** Wall time from starting the publisher to weir's counters showing every message stored. */
  wallMs: number;
  weir_cpu_pct: number;
  weir_cpu_us_per_msg: number;
  weir_rss_mb_peak: number;
  /** weir's RSS when it was ready and before the warm-up: what it holds idle (the same in every run of one weir). */
  weir_rss_mb_idle: number;
  /** CPU of the sink's server (and its child processes) per message, over the timed run. */
  server_cpu_us_per_msg: number;
  /** CPU time the hypervisor gave to others during the timed run, % of the machine: noise to read the figures by. */
  steal_pct: number;
  /** Busy share of each core over the timed run (load side first when placed). */
  core_busy_pct: number[];
  /** Mosquitto's CPU per message over the timed run. */
  broker_cpu_us_per_msg: number;
  /** The publisher's CPU per message (its start-up included). */
  publisher_cpu_us_per_msg: number;
}

/** weir under measurement, and the processes measured beside it. */
export interface Measured {
  weir: WeirProcess;
  mqttUrl: string;
  size: number;
  /** Mosquitto's pid. */
  brokerPid: number;
  /** The sink server's pid (PostgreSQL's postmaster, the Kafka or Pulsar JVM). */
  serverPid: number;
}

/**
 * Warms weir and its sink up with WARMUP messages, then takes turns with the ceiling: ceiling,
 * weir, ceiling, … (`rounds` weir runs of MESSAGES each, module comment). Each weir run waits
 * until weir's counters show every message stored.
 */
export async function interleave(m: Measured, ceiling: CeilingSubscriber, rounds = ROUNDS): Promise<{ ceilings: CeilingRun[]; runs: TimedRun[] }> {
  const stored = async (count: number) =>
    (await m.weir.metric('weir_ingest_received_total')) >= count && (await m.weir.metric('weir_sink_success_total')) >= count;
  const base = await m.weir.metric('weir_sink_success_total');
  const idleRss = rssMb(m.weir.svc.proc.pid!);
  if (WARMUP > 0) {
    await publish(m.mqttUrl, WARMUP, m.size);
    await waitFor(() => stored(base + WARMUP), 300_000, 'every warm-up message stored');
  }
  const ceilings = [await ceiling.run()];
  const runs: TimedRun[] = [];
  for (let r = 0; r < rounds; r++) {
    const target = base + WARMUP + MESSAGES * (r + 1);
    runs.push({ ...(await timedRun(m, () => stored(target))), weir_rss_mb_idle: idleRss });
    ceilings.push(await ceiling.run());
  }
  return { ceilings, runs };
}

/** Publishes MESSAGES into weir and waits until `done`; CPU and memory over that stretch. */
async function timedRun(m: Measured, done: () => Promise<boolean>): Promise<Omit<TimedRun, 'weir_rss_mb_idle'>> {
  const pid = m.weir.svc.proc.pid!;
  const before = procStats(pid);
  const serverBefore = treeCpuMs(m.serverPid);
  const meter = new Meter(m.brokerPid);
  const since = Date.now();
  const published = await publish(m.mqttUrl, MESSAGES, m.size);
  await waitFor(done, 300_000, 'every message stored');
  const after = procStats(pid);
  const serverCpuMs = treeCpuMs(m.serverPid) - serverBefore;
  const load = meter.read(MESSAGES);
  const wallMs = Date.now() - since;
  const cpuMs = after.cpuMs - before.cpuMs;
  return {
    published,
    wallMs,
    weir_cpu_pct: Math.round((cpuMs / wallMs) * 100),
    weir_cpu_us_per_msg: usPerMsg(cpuMs, MESSAGES),
    weir_rss_mb_peak: after.rssPeakMb,
    server_cpu_us_per_msg: usPerMsg(serverCpuMs, MESSAGES),
    publisher_cpu_us_per_msg: usPerMsg(published.cpu_ms, MESSAGES),
    ...load,
  };
}

/** weir's rate in one timed run: its messages from the first publish to the last one stored. */
export const runRate = (run: TimedRun, messages: number, lastStored: number): number => Math.round(messages / ((lastStored - run.published.startedAt) / 1000));

/**
 * Each weir run's rate over the ceilings measured just before and after it: over their mean
 * (`neighbours`, the ceiling at the weir run's time if it drifted evenly between them) or over
 * the higher of the two (`higher`, as if every dip were noise that spared weir's run).
 */
export function bracketedRatios(ceilings: CeilingRun[], rates: number[], pick: 'neighbours' | 'higher'): Array<number | null> {
  return rates.map((w, k) => {
    // A ceiling still over the steal limit after its re-measurements is left out: the weir run
    // is compared with its other neighbour alone, or with none (null, out of the median).
    const near = [ceilings[k]!, ceilings[k + 1]!].filter((c) => c.steal_pct <= MAX_STEAL_PCT).map((c) => c.msgs_per_s);
    if (near.length === 0) return null;
    return ratio(w, pick === 'higher' ? Math.max(...near) : near.reduce((a, b) => a + b, 0) / near.length);
  });
}
