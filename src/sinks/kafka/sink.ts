// Produces batches of rule outputs to Kafka with kafkajs. One write() is one sendBatch(): it
// resolves only when the broker acknowledged every record of the batch (acks -1 by default), so
// the core may ack the MQTT messages behind them. Errors are thrown whole and classified in
// classify.ts; a batch that spans several brokers and fails on one is retried whole (at least
// once: the records that did land are written again).
import kafkajs, { type Admin, type Message, type Producer, type TopicMessages } from 'kafkajs';
import { WeirError } from '../../errors.js';
import { ALL_WRITTEN, type BoundAction, type ErrorClass, type Sink, type SinkDeps, type WriteResult } from '../types.js';
import { bindKafkaAction, type KafkaItem } from './action.js';
import { classifyKafkaError, kafkaErrorCode, PRODUCER_STATE_CODES } from './classify.js';
import { kafkaClientOptions } from './client.js';
import { compressionType, registerCodec } from './codecs.js';
import { WeirPartitioner } from './partitioner.js';
import { lintKafkaConfig, type KafkaAction, type KafkaConfig } from './spec.js';

const { Kafka } = kafkajs;

interface Clients {
  readonly producer: Producer;
  readonly admin: Admin;
}

export class KafkaSink implements Sink<KafkaAction, KafkaItem> {
  /** Connected clients, or the connection in progress; cleared when a connect fails. */
  private clients: Promise<Clients> | undefined;
  /** Topics known to exist (create_topics), or being created. */
  private readonly topics = new Map<string, Promise<void>>();
  private closed = false;

  constructor(
    private readonly cfg: KafkaConfig,
    private readonly deps: SinkDeps,
  ) {
    const problems = lintKafkaConfig(cfg);
    if (problems.length > 0) throw new WeirError('config.sink.kafka', `sinks.${deps.name}: ${problems.join('; ')}`);
  }

  bind(action: KafkaAction, ruleId: string): BoundAction<KafkaItem> {
    return bindKafkaAction(action, ruleId);
  }

  async connect(_signal: AbortSignal): Promise<void> {
    await this.connected();
  }

  async write(items: KafkaItem[], signal: AbortSignal): Promise<WriteResult> {
    if (items.length === 0) return ALL_WRITTEN;
    if (signal.aborted) throw new WeirError('sink.kafka.aborted', 'write aborted: shutting down', { retriable: true });
    const clients = await this.connected();

    const byTopic = new Map<string, Message[]>();
    for (const it of items) {
      let list = byTopic.get(it.topic);
      if (!list) byTopic.set(it.topic, (list = []));
      list.push(it.message);
    }
    if (this.cfg.create_topics) await Promise.all([...byTopic.keys()].map((t) => this.ensureTopic(clients.admin, t)));

    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    try {
      await clients.producer.sendBatch({
        topicMessages,
        acks: this.cfg.acks,
        timeout: this.cfg.timeout_ms,
        compression: compressionType(this.cfg.compression),
      });
    } catch (err) {
      const code = kafkaErrorCode(err);
      if (code !== undefined && PRODUCER_STATE_CODES.has(code)) {
        // The broker no longer agrees with this producer's id/sequence numbers: start over with a
        // new producer id on the next attempt (the core retries this batch).
        this.deps.log.warn({ sink: this.deps.name, code }, 'kafka producer state out of step with the broker; recreating the producer');
        await this.reset();
      }
      throw err;
    }
    return ALL_WRITTEN;
  }

  async probe(_signal: AbortSignal): Promise<void> {
    const { admin } = await this.connected();
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length === 0) throw new WeirError('sink.kafka.no_brokers', 'the cluster lists no brokers', { retriable: true });
  }

  classify(err: unknown): ErrorClass {
    return classifyKafkaError(err);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reset();
  }

  /** The connected clients; connects (again) when there are none. */
  private connected(): Promise<Clients> {
    if (this.closed) return Promise.reject(new WeirError('sink.kafka.closed', `sink ${this.deps.name} is closed`));
    if (!this.clients) {
      const attempt = this.open();
      this.clients = attempt;
      // A failed connect is forgotten, so the next write (retried by the core) connects again.
      attempt.catch(() => {
        if (this.clients === attempt) this.clients = undefined;
      });
    }
    return this.clients;
  }

  private async open(): Promise<Clients> {
    await registerCodec(this.cfg.compression);
    const log = this.deps.log.child({ sink: this.deps.name });
    const kafka = new Kafka(kafkaClientOptions(this.cfg, log));
    const producer = kafka.producer({
      createPartitioner: WeirPartitioner,
      idempotent: this.cfg.idempotent,
      maxInFlightRequests: this.cfg.max_in_flight_requests,
      // Topics are created by create_topics (explicit partitions), never implicitly.
      allowAutoTopicCreation: false,
      // kafkajs defaults the idempotent producer to unlimited retries: a broker that is away would
      // hang write() forever instead of surfacing to the core's counted, visible retries.
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    const admin = kafka.admin({ retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 1_000 } });
    try {
      await producer.connect();
      await admin.connect();
    } catch (err) {
      await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
      throw err;
    }
    log.info({ brokers: this.cfg.brokers, compression: this.cfg.compression, idempotent: this.cfg.idempotent, acks: this.cfg.acks }, 'kafka sink connected');
    return { producer, admin };
  }

  private async reset(): Promise<void> {
    const current = this.clients;
    this.clients = undefined;
    this.topics.clear();
    if (!current) return;
    const c = await current.catch(() => undefined);
    if (c) await Promise.allSettled([c.producer.disconnect(), c.admin.disconnect()]);
  }

  /** Creates `topic` once if it does not exist (create_topics); later calls reuse the answer. */
  private ensureTopic(admin: Admin, topic: string): Promise<void> {
    let done = this.topics.get(topic);
    if (done) return done;
    const spec = this.cfg.create_topics!;
    done = admin
      .createTopics({
        topics: [{ topic, numPartitions: spec.partitions, replicationFactor: spec.replication_factor }],
        waitForLeaders: true,
        timeout: this.cfg.timeout_ms,
      })
      .then((created) => {
        if (created) this.deps.log.info({ sink: this.deps.name, topic, partitions: spec.partitions }, 'kafka topic created');
      });
    this.topics.set(topic, done);
    done.catch(() => {
      if (this.topics.get(topic) === done) this.topics.delete(topic);
    });
    return done;
  }
}
