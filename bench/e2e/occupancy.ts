// Where a message waits inside weir during the timed runs: weir's /metrics read four times a
// second, keeping the samples in which weir received messages (the ceiling runs between are left
// out). A full receive window (unacked near connections × max_unacked) with items in flight says
// weir is waiting on its sink; a window mostly empty says it is waiting on the broker.
// Reading /metrics costs weir about 1 ms of CPU per scrape (0.1 % at this rate).
import { sumMetric, type WeirProcess } from '../../test/harness/weir.js';

export interface Occupancy {
  /** Samples in which weir received messages. */
  samples: number;
  /** Means over those samples: messages received and not acked, items waiting in a batch, items in batches being written. */
  unacked_mean: number;
  queuing_mean: number;
  inflight_mean: number;
  /** Over the same intervals: written batches' mean size and mean write time. */
  batch_items_mean: number;
  batch_write_ms_mean: number;
}

const EVERY_MS = 250;

/** Samples weir until the returned function is called; it returns the means. */
export function sampleOccupancy(weir: WeirProcess): () => Promise<Occupancy> {
  let stopped = false;
  const acc = { samples: 0, unacked: 0, queuing: 0, inflight: 0, batches: 0, items: 0, seconds: 0 };
  const loop = (async () => {
    let prev: Map<string, number> | undefined;
    while (!stopped) {
      await new Promise((r) => setTimeout(r, EVERY_MS));
      const m = await weir.metrics().catch(() => undefined);
      if (!m) continue;
      if (prev && sumMetric(m, 'weir_ingest_received_total') > sumMetric(prev, 'weir_ingest_received_total')) {
        acc.samples++;
        acc.unacked += sumMetric(m, 'weir_ingest_unacked');
        acc.queuing += sumMetric(m, 'weir_sink_queuing');
        acc.inflight += sumMetric(m, 'weir_sink_inflight');
        acc.batches += sumMetric(m, 'weir_sink_batch_size_count') - sumMetric(prev, 'weir_sink_batch_size_count');
        acc.items += sumMetric(m, 'weir_sink_batch_size_sum') - sumMetric(prev, 'weir_sink_batch_size_sum');
        acc.seconds += sumMetric(m, 'weir_sink_batch_latency_seconds_sum') - sumMetric(prev, 'weir_sink_batch_latency_seconds_sum');
      }
      prev = m;
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    const n = Math.max(acc.samples, 1);
    const b = Math.max(acc.batches, 1);
    const round = (x: number) => Math.round(x * 10) / 10;
    return {
      samples: acc.samples,
      unacked_mean: round(acc.unacked / n),
      queuing_mean: round(acc.queuing / n),
      inflight_mean: round(acc.inflight / n),
      batch_items_mean: round(acc.items / b),
      batch_write_ms_mean: round((acc.seconds / b) * 1000),
    };
  };
}

/** Stops the sampler, prints its means on one line and returns them. */
export async function printOccupancy(stop: () => Promise<Occupancy>): Promise<Occupancy> {
  const o = await stop();
  process.stdout.write(
    `  weir while receiving (${o.samples} samples): unacked ${o.unacked_mean}, in batches ${o.queuing_mean}, being written ${o.inflight_mean}; batches of ${o.batch_items_mean} items written in ${o.batch_write_ms_mean} ms\n`,
  );
  return o;
}
