// The last writes of one sink, for the console's sink view: write latency p50/p99 and the mean
// batch size. A fixed ring of WINDOW entries (two Float64Arrays and one of times: 3 × 8 × 256 bytes
// = 6 KB per sink), written once per batch, so it costs nothing per message; the figures are
// computed only when someone asks. Prometheus has the same as histograms (weir_sink_batch_*),
// with buckets: this gives exact recent quantiles for a page that shows numbers, not a graph.

/** Writes kept. */
export const WINDOW = 256;

/** How far back the mean batch size reaches, within the ring. */
const BATCH_MEAN_MS = 5 * 60_000;

export class WriteWindow {
  private readonly ms = new Float64Array(WINDOW);
  private readonly items = new Float64Array(WINDOW);
  private readonly at = new Float64Array(WINDOW);
  private n = 0;

  /** One batch written: how long it took and how many items it held. */
  add(durationMs: number, items: number, now = Date.now()): void {
    const i = this.n++ % WINDOW;
    this.ms[i] = durationMs;
    this.items[i] = items;
    this.at[i] = now;
  }

  /** Latency quantiles (ms) over the ring; 0 before the first write. */
  latency(): { p50: number; p99: number } {
    const kept = Math.min(this.n, WINDOW);
    if (kept === 0) return { p50: 0, p99: 0 };
    const sorted = this.ms.slice(0, kept).sort();
    return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
  }

  /** The mean items per write over the last 5 minutes (of the writes still in the ring); 0 when none. */
  meanBatch(now = Date.now()): number {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < Math.min(this.n, WINDOW); i++) {
      if (now - this.at[i]! > BATCH_MEAN_MS) continue;
      sum += this.items[i]!;
      count++;
    }
    return count ? sum / count : 0;
  }
}

/** The nearest-rank quantile of sorted values. */
function quantile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
