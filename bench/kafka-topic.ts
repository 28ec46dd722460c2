// The Kafka topic of the benchmarks that write into one (bench/kafka.ts, bench/standalone-kafka.ts):
// `telemetry`, 6 partitions, LogAppendTime (each record's timestamp is the broker's append time),
// created before weir starts; read back afterwards through the test harness's reader
// (test/harness/kafka-reader.ts: a fresh group from the beginning, one second past `total` so
// that duplicates arrive too, a failure after 15 s without a new record so a short topic is
// reported instead of waited on forever).
import kafkajs from 'kafkajs';
import { readTopic as readRecords } from '../test/harness/kafka-reader.js';

const { Kafka, logLevel } = kafkajs;

/** A record's value as JSON and its timestamp (the broker's append time on a LogAppendTime topic). */
export type EachRecord = (value: { device_id: string; seq: number; ts: number }, timestamp: number) => void;

const STALL_MS = 15_000;

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

/** Calls `each` for every record of the topic until `total` are read; resolves with the number read. */
export async function readTopic(brokers: string[], total: number, each: EachRecord): Promise<number> {
  let read = 0;
  await readRecords(
    brokers,
    TOPIC,
    (_partition, m) => {
      each(JSON.parse(m.value!.toString()), Number(m.timestamp));
      return ++read >= total;
    },
    STALL_MS,
  );
  return read;
}
