// What a benchmark reads back from the sink's own system, per timed run: which messages arrived,
// how many times, and how long after they were published.
import type { TimedRun } from './interleave.js';

/** What a benchmark read back from a sink about one timed run. */
export interface ReadBack {
  /** Messages of the run read, duplicates included. */
  records: number;
  /** Distinct device/seq among them. */
  distinct: number;
  /** Publish → stored latency of each, ascending. */
  latenciesMs: Float64Array;
  /** Latest stored time (epoch ms). */
  lastStored: number;
}

/**
 * Counts what a reader reads: every message, and in detail those of each timed run — a message
 * belongs to the run whose publisher was running when it was published (payload `ts`).
 */
export class ReadTally {
  /** Every message read, warm-up and ceiling-free stretches included. */
  read = 0;
  private readonly runs: Array<{ from: number; to: number; seen: Set<string>; latencies: number[]; lastStored: number }>;

  constructor(runs: TimedRun[]) {
    this.runs = runs.map((r) => ({ from: r.published.startedAt, to: r.published.endedAt, seen: new Set(), latencies: [], lastStored: 0 }));
  }

  /** One message: its device and seq, when it was published (payload ts) and when stored. */
  add(device: string, seq: number, publishedAt: number, storedAt: number): void {
    this.read++;
    const run = this.runs.find((r) => publishedAt >= r.from && publishedAt <= r.to);
    if (!run) return;
    run.seen.add(`${device}/${seq}`);
    run.latencies.push(storedAt - publishedAt);
    if (storedAt > run.lastStored) run.lastStored = storedAt;
  }

  result(): ReadBack[] {
    return this.runs.map((r) => ({
      records: r.latencies.length,
      distinct: r.seen.size,
      latenciesMs: Float64Array.from(r.latencies).sort(),
      lastStored: r.lastStored,
    }));
  }
}
