// Kafka end-to-end benchmark (npm run bench -- kafka): QoS 1, 200 B JSON payloads published
// through a real Mosquitto into a real Kafka broker (KRaft, the test harness's), measured in one run:
//   1. the MQTT delivery ceiling (bench/e2e/ceiling.ts);
//   2. weir end to end, acks -1, idempotent producer, ack upstream after the broker's acknowledgement,
//      into a 6-partition topic keyed by device: msg/s from the first publish to the last append,
//      p50/p99 publish→append latency, weir's CPU and peak RSS, lost and duplicate records.
// Latency and rate come from the records themselves: the topic is created with
// message.timestamp.type=LogAppendTime, so each record's timestamp is the broker's append time,
// and the value carries the publish time (`ts`) the rule selected from the payload.
// Prints a table and writes bench/results/kafka.json.
import { startKafka } from '../test/harness/kafka.js';
import { topicRecords } from '../test/harness/kafka-reader.js';
import type { TimedRun } from './e2e/interleave.js';
import { runMessageSinkBench } from './e2e/message-sink-bench.js';
import { type ReadBack, ReadTally } from './e2e/read-back.js';
import { createTopic, PARTITIONS, readTopic, TOPIC } from './kafka-topic.js';

/**
 * Reads the whole topic (`total` records at least) with an independent kafkajs consumer; details
 * the records of each timed run.
 */
async function readBack(brokers: string[], total: number, runs: TimedRun[]): Promise<ReadBack[]> {
  const tally = new ReadTally(runs);
  // LogAppendTime: each record's timestamp is the broker's.
  await readTopic(brokers, total, (v, appendedAt) => tally.add(v.device_id, v.seq, v.ts, appendedAt));
  return tally.result();
}

export function benchKafka(): Promise<object> {
  return runMessageSinkBench({
    name: 'kafka',
    size: 200,
    connections: 4,
    describe: `${PARTITIONS} partitions`,
    async start() {
      const kafka = await startKafka();
      await createTopic(kafka.brokers);
      return {
        port: Number(kafka.brokers[0]!.split(':')[1]),
        sink: ['type: kafka', `brokers: ${JSON.stringify(kafka.brokers)}`],
        action: [`topic: ${TOPIC}`],
        async readBack(total, runs) {
          const backs = await readBack(kafka.brokers, total, runs);
          // The broker's own count, beside what the reader saw: records beyond weir's success
          // counter are duplicates in the topic, whatever the reader did.
          const inTopic = await topicRecords(kafka.brokers, TOPIC);
          return {
            backs,
            extra: { partitions: PARTITIONS, compression: 'none', records_in_topic: inTopic, weir_sink_success: total },
            note: `${inTopic} records in the topic (its offsets), ${total} written by weir's count: ${inTopic - total} beyond it`,
          };
        },
        dispose: () => kafka.dispose(),
      };
    },
  });
}
