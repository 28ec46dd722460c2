// Bytes of V8 heap one message holds while it waits for its batch's commit:
//
//   npm run build && node --expose-gc bench/held-per-message.mjs [messages, default 20000]
//
// What young-generation collections copy, and promote, is what messages in flight hold
// (docs/benchmarks.md, memory). This feeds messages into weir's own pieces from dist/ (the
// connection's AckWindow, the Pipeline with the shipped weir.yaml and rules/, the SinkRunner with
// the PostgreSQL sink's bound action, so each output is encoded into its row) through a sink whose
// writes never finish, so every message stays in flight: its event, its settlement and slot, its
// entry and row, the batches. The heap after a full collection, less the heap before, divided by
// the messages, is what each holds. Payloads are views into 64 KB chunks as a socket delivers
// them (outside the heap); topics are decoded from bytes as the packet reader does. No broker, no
// database: the MQTT session's parsing is left out, since nothing of it outlives the PUBLISH.
// Plain JS over dist/, as bench/discard-weir.mjs, so it measures the compiled code.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../dist/config/load.js';
import { AckWindow } from '../dist/core/ingest/ack-path.js';
import { DeadLetterQueue } from '../dist/core/path/dead-letter-queue.js';
import { fileDeadLetterWriter } from '../dist/dead-letters/letter.js';
import { Pipeline } from '../dist/core/path/pipeline.js';
import { SinkRunner } from '../dist/core/path/sink-runner.js';
import { telemetrySample } from '../dist/embedded/devices.js';
import { silentLogger } from '../dist/log.js';
import { createMetrics } from '../dist/metrics/names.js';

const gc = globalThis.gc;
if (!gc) {
  process.stderr.write('usage: node --expose-gc bench/held-per-message.mjs [messages]\n');
  process.exit(2);
}
const N = Number(process.argv[2] ?? 20_000);
const ROOT = join(fileURLToPath(import.meta.url), '../..');
const cfg = loadConfig(join(ROOT, 'weir.yaml'), {});
const metrics = createMetrics();
const stop = new AbortController();
const dlq = new DeadLetterQueue(fileDeadLetterWriter('/dev/null'), cfg.sinks.values().next().value.retry, metrics, silentLogger, stop.signal, '/dev/null');
const runners = new Map();
/** The writes waiting, kept as a driver keeps its pending queries (a promise nothing refers to would be collected, and its batch with it). */
const writes = [];
for (const sc of cfg.sinks.values()) {
  const real = sc.sinkType.create(sc.settings, { name: sc.name, log: silentLogger });
  // Binds and encodes as the real sink does; a write never finishes, so nothing leaves.
  const held = {
    ...real,
    bind: (a, r) => real.bind(a, r),
    connect: async () => {},
    probe: async () => {},
    write: (rows) => new Promise((resolve) => writes.push({ rows, resolve })),
  };
  runners.set(sc.name, new SinkRunner(sc, held, dlq, metrics, silentLogger, stop.signal));
}
const pipeline = new Pipeline(cfg.broker, cfg.node, runners, dlq, metrics, silentLogger);
pipeline.setRules(cfg.rules);
const window = new AckWindow(N + 1, { write: () => true }, () => {});

/** 64 KB chunks of topic and payload bytes, as a socket's reads bring them. */
function* messages(n) {
  const per = 300;
  for (let k = 0; k < n; k += per) {
    const parts = [];
    for (let i = k; i < Math.min(n, k + per); i++) {
      const topic = Buffer.from(`device/${i % 1000}/telemetry`);
      parts.push([topic, telemetrySample(String(i % 1000), i, 200)]);
    }
    const chunk = Buffer.concat(parts.flat());
    let off = 0;
    for (const [t, p] of parts) {
      const topic = chunk.toString('utf8', off, off + t.length);
      off += t.length;
      yield { topic, payload: chunk.subarray(off, off + p.length), qos: 1, retain: false, dup: false, properties: undefined, receivedAt: Date.now() };
      off += p.length;
    }
  }
}

const heap = async () => {
  await new Promise((r) => setTimeout(r, 100)); // the batcher's timer hands on the last partial batch
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const before = await heap();
let id = 0;
for (const msg of messages(N)) pipeline.handle(msg, window.admit(1, (id++ % 65535) + 1, false));
const after = await heap();
process.stdout.write(
  `${JSON.stringify({ messages: N, in_flight: window.size, held_bytes_per_msg: Math.round((after - before) / N), heap_mb_before: +(before / 2 ** 20).toFixed(1), heap_mb_after: +(after / 2 ** 20).toFixed(1) })}\n`,
);
// Every message is in flight, or the figure means nothing.
const inSink = (await metrics.registry.getSingleMetric('weir_sink_inflight').get()).values.reduce((a, v) => a + v.value, 0);
if (inSink !== N) throw new Error(`${inSink} of ${N} messages in the sink's batches`);
stop.abort();
process.exit(0);
