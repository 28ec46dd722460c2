// Produces batches of rule outputs to Kafka with kafkajs. One write() is one sendBatch(): it
// resolves only when the broker acknowledged every record of the batch (acks -1 by default), so
// the core may ack the MQTT messages behind them. Errors are thrown whole and classified in
// classify.ts; a batch that spans several brokers and fails on one is retried whole (at least
// once: the records that did land are written again). README.md explains the ordering and why a
// failed send replaces the idempotent producer.
import kafkajs, { type Admin, type Message, type Producer, type TopicMessages } from 'kafkajs';
import { WeirError } from '../../errors.js';
import { KafkaError } from './errors.js';
import { letterRecords } from '../../dead-letters/topic-store.js';
import type { DeadLetter } from '../../dead-letters/letter.js';
import { ALL_WRITTEN, type BoundAction, type ErrorClass, type Sink, type SinkDeps, type WriteResult } from '../types.js';
import { bindKafkaAction, type KafkaItem } from './action.js';
import { classifyKafkaError, kafkaErrorCode } from './classify.js';
import { connectBoth, kafkaClientOptions } from './client.js';
import { compressionType, registerCodec } from './codecs.js';
import { KeptAttempt } from '../kept-attempt.js';
import { KafkaLetterTopic } from './letter-topic.js';
import { WeirPartitioner } from './partitioner.js';
import { lintKafkaConfig, type KafkaAction, type KafkaConfig } from './spec.js';

const { Kafka } = kafkajs;

interface Clients {
  readonly producer: Producer;
  readonly admin: Admin;
}

export class KafkaSink implements Sink<KafkaAction, KafkaItem> {
  /** Connected clients, or the connection in progress; forgotten when a connect fails. */
  private readonly clients = new KeptAttempt(() => this.open());
  /** Topics known to exist (create_topics), or being created. */
  private readonly topics = new Map<string, Promise<void>>();
  private closed = false;
  /** The tail of the idempotent producer's sends, which run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The dead_letter_topic's writer, when the sink keeps dead letters (else no deadLetter: the core looks elsewhere). */
  private readonly letters: KafkaLetterTopic | undefined;
  readonly deadLetter?: (letters: DeadLetter[], signal: AbortSignal) => Promise<void>;

  constructor(
    private readonly cfg: KafkaConfig,
    private readonly deps: SinkDeps,
  ) {
    const problems = lintKafkaConfig(cfg);
    // The loader reports these at their lines first; this guards a sink created from settings it never saw.
    if (problems.length > 0)
      throw new WeirError('config.sink.kafka', `sinks.${deps.name}: ${problems.map((p) => `${p.path.join('.')}: ${p.message}`).join('; ')}`);
    if (cfg.dead_letter_topic) {
      const topic = new KafkaLetterTopic(cfg, cfg.dead_letter_topic, deps.name, deps.log.child({ sink: deps.name }));
      this.letters = topic;
      this.deadLetter = (letters) => topic.append(letterRecords(letters));
    }
  }

  bind(action: KafkaAction, ruleId: string): BoundAction<KafkaItem> {
    return bindKafkaAction(action, ruleId);
  }

  async connect(_signal: AbortSignal): Promise<void> {
    await this.connected();
  }

  async write(items: KafkaItem[], signal: AbortSignal): Promise<WriteResult> {
    if (items.length === 0) return ALL_WRITTEN;
    if (signal.aborted) throw new KafkaError('sink.kafka.aborted', 'write aborted: shutting down');

    const byTopic = new Map<string, Message[]>();
    for (const it of items) {
      let list = byTopic.get(it.topic);
      if (!list) byTopic.set(it.topic, (list = []));
      list.push(it.message);
    }
    const topicMessages: TopicMessages[] = [...byTopic].map(([topic, messages]) => ({ topic, messages }));

    const send = async (): Promise<void> => {
      const clients = await this.connected();
      if (this.cfg.create_topics) await Promise.all([...byTopic.keys()].map((t) => this.ensureTopic(clients.admin, t)));
      try {
        await clients.producer.sendBatch({
          topicMessages,
          acks: this.cfg.acks,
          timeout: this.cfg.timeout_ms,
          compression: compressionType(this.cfg.compression),
        });
      } catch (err) {
        if (this.cfg.idempotent) {
          // After a failed send the broker may hold some of these batches (written, response
          // lost) while kafkajs did not advance its sequence numbers: the next, different batch
          // of the same size would get the same sequence range, and the broker would drop it as a
          // "duplicate" and answer success — a silent loss, seen in the broker-outage test. A new
          // producer id starts fresh sequences; the core's retry may then duplicate, never lose.
          const code = kafkaErrorCode(err);
          this.deps.log.debug({ sink: this.deps.name, code }, 'kafka send failed; the next write uses a new idempotent producer');
          await this.reset(clients);
        }
        throw err;
      }
    };
    // The idempotent producer: one send at a time. kafkajs sends an idempotent producer's requests
    // one at a time per broker anyway; doing it here keeps batches in the order the core handed
    // them over, so one key's records stay in order while no write fails.
    if (this.cfg.idempotent) await this.serially(send);
    else await send();
    return ALL_WRITTEN;
  }

  async probe(_signal: AbortSignal): Promise<void> {
    const { admin } = await this.connected();
    const cluster = await admin.describeCluster();
    if (cluster.brokers.length === 0) throw new KafkaError('sink.kafka.no_brokers', 'the cluster lists no brokers');
  }

  classify(err: unknown): ErrorClass {
    return classifyKafkaError(err);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([this.reset(), this.letters?.close()]);
  }

  /** The connected clients; connects (again) when there are none. */
  private connected(): Promise<Clients> {
    if (this.closed) return Promise.reject(new KafkaError('sink.kafka.closed', `sink ${this.deps.name} is closed`));
    return this.clients.get();
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
    await connectBoth(producer, admin);
    log.info({ brokers: this.cfg.brokers, compression: this.cfg.compression, idempotent: this.cfg.idempotent, acks: this.cfg.acks }, 'kafka sink connected');
    return { producer, admin };
  }

  /** Runs `fn` after every earlier call has settled. */
  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Drops the clients (all, or only `only` if they are still the current ones) and disconnects them. */
  private async reset(only?: Clients): Promise<void> {
    const current = this.clients.peek();
    if (!current) return;
    if (only) {
      const c = await current.catch(() => undefined);
      if (c !== only) return;
    }
    if (!this.clients.forget(current)) return;
    this.topics.clear();
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
