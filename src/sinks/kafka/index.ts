// The Kafka sink type: rule outputs produced to Kafka topics with kafkajs.
import { silentLogger } from '../../log.js';
import { TopicLetterStore } from '../../dead-letters/topic-store.js';
import type { SinkType } from '../types.js';
import { KAFKA_CODES } from './errors.js';
import { countForReconcile } from './count.js';
import type { KafkaItem } from './action.js';
import { KafkaLetterTopic } from './letter-topic.js';
import { KafkaSink } from './sink.js';
import { KafkaActionSpec, KafkaConfigSpec, lintKafkaConfig, type KafkaAction, type KafkaConfig } from './spec.js';
import { verifyKafka } from './verify.js';

export const kafkaSinkType: SinkType<KafkaConfig, KafkaAction, KafkaItem> = {
  type: 'kafka',
  configSchema: KafkaConfigSpec,
  actionSchema: KafkaActionSpec,
  errorCodes: KAFKA_CODES,
  lint: lintKafkaConfig,
  create: (cfg, deps) => new KafkaSink(cfg, deps),
  keepsLetters: (cfg) => cfg.dead_letter_topic !== undefined,
  letterStore: (cfg, deps) => new TopicLetterStore(new KafkaLetterTopic(cfg, cfg.dead_letter_topic!, deps.name, deps.log)),
  count: (cfg, actions) => countForReconcile(cfg, actions, silentLogger),
  verify: verifyKafka,
};

export { countTopic, countSince, snapshotOffsets, withKafkaAdmin, type OffsetSnapshot, type TopicCount } from './count.js';
