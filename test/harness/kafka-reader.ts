// Reading a Kafka topic back from the beginning with an independent kafkajs consumer (its own
// random group), as the end-to-end tests and the Kafka benchmark check what weir wrote.
import { randomUUID } from 'node:crypto';
import kafkajs, { type KafkaMessage } from 'kafkajs';
import { registerCodec } from '../../src/sinks/kafka/codecs.js';
import { readUntil } from './read-until.js';

const { Kafka, logLevel } = kafkajs;

/** Hands every record of `topic` to `onRecord` until it answers true (enough), as readUntil ends a read. */
export async function readTopic(brokers: string[], topic: string, onRecord: (partition: number, m: KafkaMessage) => boolean, stallMs = 60_000): Promise<void> {
  const consumer = new Kafka({ clientId: 'weir-test-reader', brokers, logLevel: logLevel.NOTHING }).consumer({
    groupId: `reader-${randomUUID()}`,
    maxWaitTimeInMs: 200,
  });
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
            for (const m of batch.messages) feed.item(onRecord(batch.partition, m));
          },
        })
        .catch(feed.fail);
    });
  } finally {
    await consumer.disconnect();
  }
}
