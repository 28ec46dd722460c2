// What the broker delivered to weir, beside what was published to weir's topics (warm-up
// included). More is the broker dealing messages again, which at-least-once allows: a sink with
// a key and ON CONFLICT DO NOTHING (the pg benchmark's table) stores each once, while weir still
// spends its CPU on every copy; Kafka and Pulsar store every copy. Mosquitto 2.0.11 did this
// after weir's quiet watch reconnected its sessions (docs/benchmarks.md, kafka section).
import type { WeirProcess } from '../../test/harness/weir.js';
import type { TimedRun } from './interleave.js';
import { WARMUP } from './settings.js';

/** Reads weir's received counter, prints it beside what was published, and returns both. */
export async function receivedByWeir(weir: WeirProcess, runs: TimedRun[]): Promise<{ weir_received: number; published_total: number }> {
  const received = await weir.metric('weir_ingest_received_total');
  const published = WARMUP + runs.reduce((n, r) => n + r.published.published, 0);
  process.stdout.write(`  weir received ${received} messages from the broker of ${published} published (${received - published} more)\n`);
  return { weir_received: received, published_total: published };
}
