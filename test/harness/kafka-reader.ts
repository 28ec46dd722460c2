// Reading a Kafka topic back from the beginning with an independent kafkajs consumer (its own
// random group), as the end-to-end tests and the Kafka benchmark check what weir wrote.
import { randomUUID } from 'node:crypto';
import kafkajs, { type KafkaMessage } from 'kafkajs';
import { registerCodec } from '../../src/sinks/kafka/codecs.js';
import { readUntil } from './read-until.js';

const { Kafka, logLevel } = kafkajs;

/**
 * Hands every record of `topic` to `onRecord` once until it answers true (enough), as readUntil
 * ends a read. A record is handed over once per offset: when the group rebalances during a long
 * read (a batch handler slower than the session timeout), kafkajs hands a partition back from its
 * last committed offset, and records read before would otherwise be counted again as duplicates.
 * A duplicate that weir wrote has an offset of its own and is handed over; topicRecords gives the
 * broker's own count to check a read against.
 */
export async function readTopic(brokers: string[], topic: string, onRecord: (partition: number, m: KafkaMessage) => boolean, stallMs = 60_000): Promise<void> {
  const consumer = new Kafka({ clientId: 'weir-test-reader', brokers, logLevel: logLevel.NOTHING }).consumer({
    groupId: `reader-${randomUUID()}`,
    maxWaitTimeInMs: 200,
  });
  /** Per partition, the next offset not yet handed over. */
  const next = new Map<number, bigint>();
  // weir may write lz4: this process's kafkajs needs the codec to read it.
  await registerCodec('lz4');
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await readUntil(`the records of ${topic}`, stallMs, (feed) => {
      consumer.on(consumer.events.CRASH, (e) => feed.fail(e.payload.error));
      void consumer
        .run({
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) {
              const offset = BigInt(m.offset);
              if (offset < (next.get(batch.partition) ?? 0n)) continue;
              next.set(batch.partition, offset + 1n);
              feed.item(onRecord(batch.partition, m));
            }
          },
        })
        .catch(feed.fail);
    });
  } finally {
    await consumer.disconnect();
  }
}

/** How many records `topic` holds: the sum over its partitions of high watermark minus low (the broker's own count). */
export async function topicRecords(brokers: string[], topic: string): Promise<number> {
  const admin = new Kafka({ clientId: 'weir-test-offsets', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((n, p) => n + Number(BigInt(p.high) - BigInt(p.low)), 0);
  } finally {
    await admin.disconnect();
  }
}
