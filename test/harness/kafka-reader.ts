// Reading a Kafka topic back from the beginning with an independent kafkajs consumer (its own
// random group), as the end-to-end tests and the Kafka benchmark check what weir wrote.
import { randomUUID } from 'node:crypto';
import kafkajs, { type KafkaMessage } from 'kafkajs';
import { registerCodec } from '../../src/sinks/kafka/codecs.js';

const { Kafka, logLevel } = kafkajs;

/**
 * Hands every record of `topic` to `onRecord` until it answers true (enough), then reads 1 s more
 * so that anything beyond (duplicates, which at-least-once allows) arrives too. Fails when nothing
 * arrives for `stallMs`: a fixed deadline would fail long reads that are still going.
 */
export async function readTopic(brokers: string[], topic: string, onRecord: (partition: number, m: KafkaMessage) => boolean, stallMs = 60_000): Promise<void> {
  const consumer = new Kafka({ clientId: 'weir-test-reader', brokers, logLevel: logLevel.NOTHING }).consumer({
    groupId: `reader-${randomUUID()}`,
    maxWaitTimeInMs: 200,
  });
  // weir may write lz4: this process's kafkajs needs the codec to read it.
  await registerCodec('lz4');
  let timer: NodeJS.Timeout | undefined;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      let read = 0;
      let lastRead = -1;
      let done = false;
      timer = setInterval(() => {
        if (read === lastRead) reject(new Error(`read ${read} records of ${topic}, then nothing for ${stallMs} ms`));
        lastRead = read;
      }, stallMs);
      consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
      void consumer
        .run({
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) {
              read++;
              if (onRecord(batch.partition, m) && !done) {
                done = true;
                setTimeout(resolve, 1_000);
              }
            }
          },
        })
        .catch(reject);
    });
  } finally {
    clearInterval(timer);
    await consumer.disconnect();
  }
}
