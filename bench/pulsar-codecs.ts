// Pulsar batch codecs benchmark (npm run bench -- pulsar-codecs): the protocol transport's five
// codecs (src/sinks/pulsar/protocol/compression.ts) on JSON telemetry batches of 1 KB and 64 KB,
// as the producer calls them: one batch at a time, awaited. Per batch: wall time, the event
// loop's busy time (eventLoopUtilization over the window: what a codec on the thread pool spares
// the loop), and the compressed size. Best of three windows. Writes bench/results/pulsar-codecs.json.
import { performance } from 'node:perf_hooks';
import { compressBatch, loadCompressor, type ProtocolCompression } from '../src/sinks/pulsar/protocol/compression.js';
import { machine, printTable, writeResult } from './report.js';

const CODECS: ProtocolCompression[] = ['none', 'zlib', 'lz4', 'zstd', 'snappy'];
const SIZES = [1024, 64 * 1024];

/** Concatenated telemetry records, as a Pulsar batch holds them, cut to `bytes`. */
function jsonBatch(bytes: number): Buffer {
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const s = JSON.stringify({
      seq: i,
      device: `dev-${i % 40}`,
      temp: 20 + (i % 50) / 10,
      ts: 1_700_000_000_000 + i,
      nonce: ((i * 2654435761) % 1e9).toString(36),
    });
    parts.push(s);
    n += s.length;
  }
  return Buffer.from(parts.join('').slice(0, bytes));
}

async function measure(codec: ProtocolCompression, batch: Buffer): Promise<{ wallUs: number; loopUs: number; bytes: number }> {
  const reps = Math.max(200, Math.round(20_000_000 / batch.length / 4));
  let bytes = 0;
  for (let i = 0; i < reps / 10; i++) bytes = (await compressBatch(codec, batch)).length;
  let best = { wallUs: Number.POSITIVE_INFINITY, loopUs: 0 };
  for (let w = 0; w < 3; w++) {
    const elu0 = performance.eventLoopUtilization();
    const t = performance.now();
    for (let i = 0; i < reps; i++) await compressBatch(codec, batch);
    const wallUs = ((performance.now() - t) * 1000) / reps;
    const elu = performance.eventLoopUtilization(elu0);
    if (wallUs < best.wallUs) best = { wallUs, loopUs: (elu.active * 1000) / reps };
  }
  return { ...best, bytes };
}

export async function benchPulsarCodecs(): Promise<object> {
  for (const c of CODECS) await loadCompressor(c);
  const rows: Array<Record<string, string | number>> = [];
  const results: object[] = [];
  for (const size of SIZES) {
    const batch = jsonBatch(size);
    for (const codec of CODECS) {
      const m = await measure(codec, batch);
      rows.push({ batch: `${size / 1024} KB`, codec, 'µs/batch': m.wallUs.toFixed(1), 'loop µs/batch': m.loopUs.toFixed(1), bytes: m.bytes });
      results.push({ size, codec, ...m });
    }
  }
  printTable(rows);
  const result = { machine: machine(), results };
  writeResult('pulsar-codecs', result);
  return result;
}
