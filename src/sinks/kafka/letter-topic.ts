// A Kafka sink's dead_letter_topic as src/dead-letters/topic-store.ts needs it: records appended
// with acks -1, and read from the earliest offset to the end offsets taken when the read starts.
//
// kafkajs consumes only as a group member, so a read joins a group of its own (a fresh name),
// subscribed from the beginning, stops once every partition reached its end offset, and deletes
// the group afterwards. A broker's group.initial.rebalance.delay.ms (3 s by default) is the floor
// of every read's time.
//
// When the sink has create_topics, weir creates the topic compacted (cleanup.policy=compact) with
// one partition: compaction keeps the newest record per key, which is the letter with its replay
// mark, and drops purged letters (their tombstones too, after delete.retention.ms), so the topic
// stays as large as the letters kept. An existing topic is used as it is (docs/operations.md).
import { randomUUID } from 'node:crypto';
import kafkajs, { type Admin, type Producer } from 'kafkajs';
import type { LetterTopic, TopicRecord } from '../../dead-letters/topic-store.js';
import { WeirError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { ErrorClass } from '../types.js';
import { classifyKafkaError } from './classify.js';
import { connectBoth, kafkaClientOptions } from './client.js';
import { KeptAttempt } from '../kept-attempt.js';
import type { KafkaConfig } from './spec.js';

const { Kafka, Partitioners } = kafkajs;

/** How long a read may take to reach the end offsets before it gives up (retriable). */
const READ_TIMEOUT_MS = 60_000;

interface Clients {
  readonly kafka: InstanceType<typeof Kafka>;
  readonly producer: Producer;
  readonly admin: Admin;
}

export class KafkaLetterTopic implements LetterTopic {
  readonly where: string;
  private readonly clients = new KeptAttempt(() => this.open());
  /** The topic created (create_topics) or found; asked once per connection. */
  private readonly created = new KeptAttempt(() => this.createTopic());

  constructor(
    private readonly cfg: KafkaConfig,
    private readonly topic: string,
    sinkName: string,
    private readonly log: Logger,
  ) {
    this.where = `topic ${topic} of sink ${sinkName}`;
  }

  async append(records: readonly TopicRecord[]): Promise<void> {
    const { producer } = await this.connected();
    await this.created.get();
    try {
      await producer.send({ topic: this.topic, acks: -1, timeout: this.cfg.timeout_ms, messages: records.map((r) => ({ key: r.key, value: r.value })) });
    } catch (err) {
      await this.reset();
      throw err;
    }
  }

  async readAll(): Promise<TopicRecord[]> {
    const { kafka, admin } = await this.connected();
    let offsets: Array<{ partition: number; high: string; low: string }>;
    try {
      offsets = await admin.fetchTopicOffsets(this.topic);
    } catch (err) {
      // Nothing dead-lettered yet, and nobody created the topic: no letters.
      if ((err as { type?: string }).type === 'UNKNOWN_TOPIC_OR_PARTITION') return [];
      throw err;
    }
    const ends = new Map(offsets.filter((o) => Number(o.high) > Number(o.low)).map((o) => [o.partition, Number(o.high)]));
    if (ends.size === 0) return [];
    const groupId = `weir-dlq-read-${randomUUID()}`;
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
    const records: TopicRecord[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: this.topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new WeirError('dlq.read_timeout', `reading ${this.where} did not reach its end in ${READ_TIMEOUT_MS / 1000} s`)),
          READ_TIMEOUT_MS,
        );
        const left = new Set(ends.keys());
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              const end = ends.get(batch.partition);
              if (end === undefined) return;
              for (const m of batch.messages) {
                if (Number(m.offset) < end) records.push({ key: m.key?.toString('utf8') ?? '', value: m.value });
              }
              if (Number(batch.lastOffset()) >= end - 1) left.delete(batch.partition);
              if (left.size === 0) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect().catch(() => undefined);
      await admin.deleteGroups([groupId]).catch(() => undefined);
    }
    return records;
  }

  classify(err: unknown): ErrorClass {
    return classifyKafkaError(err);
  }

  async close(): Promise<void> {
    await this.reset();
  }

  private connected(): Promise<Clients> {
    return this.clients.get();
  }

  private async open(): Promise<Clients> {
    const kafka = new Kafka(kafkaClientOptions(this.cfg, this.log));
    // Not idempotent: a resent letter is the same key and value, which the fold reads once.
    const producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    const admin = kafka.admin({ retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 1_000 } });
    await connectBoth(producer, admin);
    return { kafka, producer, admin };
  }

  private async reset(): Promise<void> {
    this.created.forget();
    const c = await this.clients.forget()?.catch(() => undefined);
    if (c) await Promise.allSettled([c.producer.disconnect(), c.admin.disconnect()]);
  }

  /** With create_topics: the topic, compacted and of one partition, if it does not exist yet. */
  private async createTopic(): Promise<void> {
    const spec = this.cfg.create_topics;
    if (!spec) return;
    const { admin } = await this.connected();
    const made = await admin.createTopics({
      topics: [
        { topic: this.topic, numPartitions: 1, replicationFactor: spec.replication_factor, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
      ],
      waitForLeaders: true,
      timeout: this.cfg.timeout_ms,
    });
    if (made) this.log.info({ topic: this.topic }, 'kafka dead-letter topic created (compacted)');
  }
}
