// A benchmark's result: the fields every end-to-end result has (pg.json's), the header saying how
// and where it ran, and the table printed beside it.
import { machine, printTable } from '../report.js';
import { benchBrokerVersion } from './broker.js';
import type { CeilingRun } from './ceiling.js';
import { bracketedRatios, runRate, type TimedRun } from './interleave.js';
import { placement } from './placement.js';
import type { ReadBack } from './read-back.js';
import { MESSAGES, WARMUP, weirSettings } from './settings.js';
import { median, medianRatio, percentile, ratio } from './stats.js';

/**
 * The fields every benchmark's result has for one weir configuration measured by interleave():
 * per-run figures under `runs`, and the medians (the ratio: of the bracketed ratios) on top.
 */
export function measuredFields(ceilings: CeilingRun[], runs: TimedRun[], backs: ReadBack[]): Record<string, unknown> & { ratio: number } {
  const rates = runs.map((r, k) => runRate(r, backs[k]!.records, backs[k]!.lastStored));
  const ratios = bracketedRatios(ceilings, rates, 'neighbours');
  const best = Math.max(...ceilings.map((c) => c.msgs_per_s));
  const latencies = Float64Array.from(backs.flatMap((b) => Array.from(b.latenciesMs))).sort();
  const med = (f: (r: TimedRun) => number) => median(runs.map(f));
  const published = runs.reduce((a, r) => a + r.published.acked, 0);
  const stored = backs.reduce((a, b) => a + b.distinct, 0);
  return {
    published,
    stored,
    lost: published - stored,
    duplicates: backs.reduce((a, b) => a + b.records - b.distinct, 0),
    weir_msgs_per_s: median(rates),
    ratio: medianRatio(ratios),
    ratio_to_higher_neighbour: medianRatio(bracketedRatios(ceilings, rates, 'higher')),
    ceiling_msgs_per_s: best,
    ratio_to_best_ceiling: ratio(median(rates), best),
    p50_ms: Math.round(percentile(latencies, 50)),
    p99_ms: Math.round(percentile(latencies, 99)),
    weir_cpu_pct: med((r) => r.weir_cpu_pct),
    weir_cpu_us_per_msg: med((r) => r.weir_cpu_us_per_msg),
    weir_rss_mb_peak: Math.max(...runs.map((r) => r.weir_rss_mb_peak)),
    weir_rss_mb_idle: runs[0]?.weir_rss_mb_idle,
    weir_msgs_per_cpu_s: Math.round(1e6 / med((r) => r.weir_cpu_us_per_msg)),
    server_cpu_us_per_msg: med((r) => r.server_cpu_us_per_msg),
    broker_cpu_us_per_msg: med((r) => r.broker_cpu_us_per_msg),
    publisher_cpu_us_per_msg: med((r) => r.publisher_cpu_us_per_msg),
    ceiling_runs: ceilings,
    runs: runs.map((r, k) => ({
      msgs_per_s: rates[k],
      ratio: ratios[k],
      published: r.published.acked,
      stored: backs[k]!.distinct,
      p50_ms: Math.round(percentile(backs[k]!.latenciesMs, 50)),
      p99_ms: Math.round(percentile(backs[k]!.latenciesMs, 99)),
      weir_cpu_pct: r.weir_cpu_pct,
      weir_cpu_us_per_msg: r.weir_cpu_us_per_msg,
      weir_rss_mb_peak: r.weir_rss_mb_peak,
      server_cpu_us_per_msg: r.server_cpu_us_per_msg,
      broker_cpu_us_per_msg: r.broker_cpu_us_per_msg,
      publisher_cpu_us_per_msg: r.publisher_cpu_us_per_msg,
      core_busy_pct: r.core_busy_pct,
      steal_pct: r.steal_pct,
      publish_msgs_per_s: r.published.msgs_per_s,
      tail_ms: backs[k]!.lastStored - r.published.endedAt,
    })),
  };
}

/** Prints one row per ceiling and weir run, in the order they ran. */
export function printInterleaved(label: string, fields: ReturnType<typeof measuredFields>): void {
  const ceilings = fields.ceiling_runs as CeilingRun[];
  const runs = fields.runs as Array<Record<string, unknown>>;
  const rows: Array<Record<string, unknown>> = [];
  const row = (what: string, r: Record<string, unknown>) =>
    rows.push({
      run: what,
      'msg/s': r.msgs_per_s,
      ratio: r.ratio ?? '',
      p50: r.p50_ms ?? '',
      p99: r.p99_ms ?? '',
      'weir µs/msg': r.weir_cpu_us_per_msg ?? '',
      'server µs/msg': r.server_cpu_us_per_msg ?? '',
      'mosq µs/msg': r.broker_cpu_us_per_msg,
      'pub µs/msg': r.publisher_cpu_us_per_msg,
      'cores busy%': (r.core_busy_pct as number[]).join('/'),
      'steal%': r.steal_pct,
      'pub msg/s': r.publish_msgs_per_s,
      'tail ms': r.tail_ms,
      lost: r.published === undefined ? '' : (r.published as number) - (r.stored as number),
    });
  ceilings.forEach((c, k) => {
    row('ceiling', c as unknown as Record<string, unknown>);
    if (runs[k]) row(label, runs[k]!);
  });
  printTable(rows);
  process.stdout.write(
    `  ${label}: ratio ${fields.ratio} (median of ${(fields.runs as Array<{ ratio: number | null }>).filter((r) => r.ratio !== null).length}; ${fields.ratio_to_higher_neighbour} to the higher neighbour, ${fields.ratio_to_best_ceiling} to the best ceiling); ${fields.weir_cpu_us_per_msg} µs/msg of weir CPU, ${fields.weir_rss_mb_peak} MB peak RSS (${fields.weir_rss_mb_idle} MB idle), lost ${fields.lost}, duplicates ${fields.duplicates}\n`,
  );
}

/**
 * The result a message-sink benchmark writes (the fields of pg.json), with `extra` after them;
 * prints the interleaved runs.
 */
export function sinkResult(
  bench: string,
  size: number,
  ceilings: CeilingRun[],
  runs: TimedRun[],
  backs: ReadBack[],
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const fields = measuredFields(ceilings, runs, backs);
  printInterleaved(bench, fields);
  return { ...resultHeader(bench, size, runs.length), ...fields, ...extra };
}

/** What every benchmark result starts with: which bench, how it was run, on what, with which knobs. */
export function resultHeader(bench: string, size: number, rounds: number): Record<string, unknown> {
  return {
    bench,
    command: `npm run bench -- ${bench}`,
    at: new Date().toISOString(),
    machine: machine(),
    placement: placement(),
    broker: benchBrokerVersion(),
    weir_settings: weirSettings(),
    messages_per_run: MESSAGES,
    rounds,
    warmup_messages: WARMUP,
    payload_bytes: size,
  };
}
