// The kafka sink in the conformance suite: a 2-partition topic of its own, created with a 64 KiB
// max.message.bytes so a record can be refused, read back by a kafkajs consumer of the test's own.
import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';
import { countTopic } from '../../../src/sinks/kafka/count.js';
import { sharedKafka, startKafka } from '../../harness/kafka.js';
import { goodRecord, type SinkAdapter, type Target } from './adapter.js';

const { Kafka, logLevel } = kafkajs;
const LIMIT = 64 * 1024;

async function target(brokers: string[]): Promise<Target> {
  const topic = `conformance-${randomUUID()}`;
  const admin = new Kafka({ clientId: 'conformance-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: String(LIMIT) }] }],
  });
  await admin.disconnect();
  return {
    settings: { brokers, timeout_ms: 5_000, connection_timeout_ms: 1_000 },
    action: { topic, key: '${dev}' },
    async stored(expected) {
      // The offsets say how many records the topic holds, duplicates included: read that many.
      const kafka = new Kafka({ clientId: 'conformance-reader', brokers, logLevel: logLevel.NOTHING });
      const a = kafka.admin();
      await a.connect();
      const held = (await countTopic(a, topic)).records;
      await a.disconnect();
      const seqs: number[] = [];
      if (held === 0) return seqs;
      const consumer = kafka.consumer({ groupId: `conformance-${randomUUID()}`, maxWaitTimeInMs: 200 });
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`read ${seqs.length} of the ${held} records in ${topic} (expected ${expected} distinct)`)), 60_000);
          void consumer
            .run({
              eachMessage: async ({ message }) => {
                seqs.push((JSON.parse(message.value!.toString()) as { seq: number }).seq);
                if (seqs.length >= held) {
                  clearTimeout(timer);
                  resolve();
                }
              },
            })
            .catch(reject);
        });
      } finally {
        await consumer.disconnect();
      }
      return seqs;
    },
  };
}

export const kafkaAdapter: SinkAdapter = {
  target: async () => target((await sharedKafka()).brokers),
  async ownService() {
    // A broker of its own: stopping the shared one would break every other test of the run.
    const broker = await startKafka({ partitionsDefault: 2 });
    return { service: broker, target: await target(broker.brokers) };
  },
  // Over the topic's max.message.bytes: the broker refuses the record batch that holds it.
  rejectable: (seq) => ({ ...goodRecord(seq), pad: 'x'.repeat(LIMIT * 2) }),
  rejection: /larger than|too large|MESSAGE_TOO_LARGE/i,
};
