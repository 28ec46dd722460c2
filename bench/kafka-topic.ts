// The Kafka topic of the benchmarks that write into one (bench/kafka.ts, bench/standalone-kafka.ts):
// `telemetry`, 6 partitions, LogAppendTime (each record's timestamp is the broker's append time),
// created before weir starts; read back afterwards by an independent kafkajs consumer in a fresh group, from the beginning,
// until at least `total` records are in, then one second more so that anything beyond `total`
// (duplicates) arrives too. A topic that holds fewer (lost records) ends the read after 15 s
// without a new record, so the caller can report the shortfall instead of waiting forever.
import { randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';

const { Kafka, logLevel } = kafkajs;

/** A record's value as JSON and its timestamp (the broker's append time on a LogAppendTime topic). */
export type EachRecord = (value: { device_id: string; seq: number; ts: number }, timestamp: number) => void;

const IDLE_MS = 15_000;

export const TOPIC = 'telemetry';
export const PARTITIONS = 6;

/** Creates the topic (replication 1: the harness runs one broker). */
export async function createTopic(brokers: string[]): Promise<void> {
  const admin = new Kafka({ clientId: 'bench-admin', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] }],
    });
  } finally {
    await admin.disconnect();
  }
}

/** Calls `each` for every record of the topic; resolves with the number read (< total only when the topic holds fewer). */
export async function readTopic(brokers: string[], total: number, each: EachRecord): Promise<number> {
  const consumer = new Kafka({ clientId: 'bench-reader', brokers, logLevel: logLevel.NOTHING }).consumer({
    groupId: `bench-${randomUUID()}`,
    maxWaitTimeInMs: 200,
  });
  let read = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      let idle = setTimeout(resolve, IDLE_MS);
      consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
      void consumer
        .run({
          eachBatch: async ({ batch }) => {
            clearTimeout(idle);
            for (const m of batch.messages) {
              each(JSON.parse(m.value!.toString()), Number(m.timestamp));
              read++;
            }
            if (read >= total) resolve();
            else idle = setTimeout(resolve, IDLE_MS);
          },
        })
        .catch(reject);
    });
    await new Promise((r) => setTimeout(r, 1000));
  } finally {
    await consumer.disconnect();
  }
  return read;
}
