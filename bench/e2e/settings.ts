// The end-to-end benchmarks' knobs (BENCH_* in the environment), and what each result records of them.

/** Publisher connections, emqtt-bench's -c. */
export const PUB_CLIENTS = 20;
/** weir's broker.max_unacked per connection in the benchmarks (BENCH_MAX_UNACKED; weir's default). */
export const MAX_UNACKED = Number(process.env.BENCH_MAX_UNACKED ?? 2_000);
export const DEVICES = 1000;
/** The sink's batch in the benchmarks: BENCH_BATCH_ITEMS items or BENCH_BATCH_DELAY_MS, whichever first (the shipped weir.yaml's). */
export const BATCH = { maxItems: Number(process.env.BENCH_BATCH_ITEMS ?? 2_000), maxDelayMs: Number(process.env.BENCH_BATCH_DELAY_MS ?? 20) };
export const BATCH_YAML = `batch: { max_items: ${BATCH.maxItems}, max_delay_ms: ${BATCH.maxDelayMs} }`;

/** Messages sent through weir before the timed run (BENCH_WARMUP), so neither weir's nor the sink server's JIT warm-up is measured. */
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 50_000);

/**
 * Messages in each timed run, of weir and of the ceiling (BENCH_MESSAGES). A million: about 35 s
 * of sustained load, so the rate is what the measured core sustains and the drain after the last
 * publish (0.2–2.6 s) is a few per cent of the run rather than up to a tenth of it.
 */
export const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000_000);

/** weir's timed runs, each between two ceiling runs (BENCH_ROUNDS). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** A ceiling run with more steal than this (% of the machine) is measured again (BENCH_MAX_STEAL). */
export const MAX_STEAL_PCT = Number(process.env.BENCH_MAX_STEAL ?? 5);

/** weir's rules read these topics; the ceiling's, the same with `sample` for `device`. */
export const WEIR_TOPICS = 'device/%i/telemetry';
export const CEILING_TOPICS = 'sample/%i/telemetry';

/** The weir settings a benchmark's knobs change, recorded in every result. */
export function weirSettings(): Record<string, number> {
  return { max_unacked: MAX_UNACKED, batch_max_items: BATCH.maxItems, batch_max_delay_ms: BATCH.maxDelayMs, reconnect_quiet_ms: QUIET_MS };
}

/**
 * weir's log level in the benchmarks (BENCH_WEIR_LOG_LEVEL, default warn: a log line per retry
 * would be measured too); debug shows each failed write and reconnect when a run looks wrong.
 */
export const WEIR_LOG_LEVEL = process.env.BENCH_WEIR_LOG_LEVEL ?? 'warn';

/**
 * weir's broker.reconnect.quiet_ms in the end-to-end benchmarks (BENCH_QUIET_MS): weir's default,
 * 10 s, on the benchmarks' Mosquitto 2.0.21 (bench/e2e/broker.ts); 0, the quiet watch off, with
 * BENCH_MOSQUITTO=debian. Debian 12's 2.0.11 does not hand a `$share` subscription over to a durable
 * client that reconnects to it (fixed in 2.0.12, its ChangeLog: "Fix $share subscriptions not being
 * recovered for durable clients that reconnect"); each ceiling run leaves weir's topics silent for
 * longer than 10 s, the watch reconnects weir's connections, and 2.0.11 then dealt 60 % of the next
 * run's messages twice (docs/benchmarks.md, kafka): a broker's bug measured as weir's work.
 */
export const QUIET_MS = Number(process.env.BENCH_QUIET_MS ?? (process.env.BENCH_MOSQUITTO === 'debian' ? 0 : 10_000));
