// Pulsar end-to-end benchmark (npm run bench -- pulsar), the seeds' 003 scenario: QoS 1, 1 KB JSON
// payloads published through a real Mosquitto into a 10-partition zlib topic on a real Pulsar
// standalone broker (the test harness's), measured in one run:
//   1. the MQTT delivery ceiling (bench/e2e/ceiling.ts);
//   2. weir end to end with ack after the broker's send receipt, keyed by device: msg/s from the
//      first publish to the last publish_time, p50/p99 latency, weir's CPU and peak RSS, lost and
//      duplicate messages, and the topic's stored size against the raw payload total.
// Latency is MQTT publish (`ts` in the payload, selected by the rule) → publish_time, which weir's
// producer stamps when it seals a batch for sending; the broker's receipt for that batch follows
// within one round trip, which this figure leaves out. Every message is read back through the
// broker's WebSocket reader API (the Java client inside the broker decompresses the batches).
// Prints a table and writes bench/results/pulsar.json.
import { startPulsar } from '../test/harness/pulsar.js';
import { storedBytes } from '../test/harness/pulsar-reader.js';
import type { TimedRun } from './e2e/interleave.js';
import { runMessageSinkBench } from './e2e/message-sink-bench.js';
import { type ReadBack, ReadTally } from './e2e/read-back.js';
import { PARTITIONS, pulsarSinkLines, readTopic, SIZE } from './pulsar-scenario.js';

const TOPIC = 'persistent://public/default/telemetry';

/**
 * Reads every partition from the earliest message until `total` arrived (then 1 s more, for
 * duplicates); details the messages of each timed run. Also sums every payload read, to set
 * against the topic's storage size.
 */
async function readBack(httpUrl: string, total: number, runs: TimedRun[]): Promise<{ backs: ReadBack[]; rawBytes: number }> {
  const tally = new ReadTally(runs);
  let rawBytes = 0;
  await readTopic(httpUrl, TOPIC, total, (payload, publishTime) => {
    const v = JSON.parse(payload.toString()) as { device_id: string; seq: number; ts: number };
    rawBytes += payload.length;
    tally.add(v.device_id, v.seq, v.ts, publishTime);
  });
  return { backs: tally.result(), rawBytes };
}

export function benchPulsar(): Promise<object> {
  return runMessageSinkBench({
    name: 'pulsar',
    size: SIZE,
    connections: 4,
    describe: `${PARTITIONS} partitions, zlib`,
    async start() {
      const pulsar = await startPulsar();
      return {
        port: Number(new URL(pulsar.serviceUrl).port),
        sink: pulsarSinkLines(pulsar, TOPIC),
        async readBack(total, runs) {
          const back = await readBack(pulsar.httpUrl, total, runs);
          const stored = await storedBytes(pulsar.httpUrl, TOPIC);
          return {
            backs: back.backs,
            extra: { partitions: PARTITIONS, compression: 'zlib', raw_bytes: back.rawBytes, stored_bytes: stored },
            note: `${(back.rawBytes / 1e6).toFixed(1)} MB of payloads stored as ${(stored / 1e6).toFixed(1)} MB`,
          };
        },
        dispose: () => pulsar.dispose(),
      };
    },
  });
}
