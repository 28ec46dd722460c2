// The Kafka sink type: rule outputs produced to Kafka topics with kafkajs.
import type { SinkType } from '../types.js';
import type { KafkaItem } from './action.js';
import { KafkaSink } from './sink.js';
import { KafkaActionSpec, KafkaConfigSpec, lintKafkaConfig, type KafkaAction, type KafkaConfig } from './spec.js';
import { verifyKafka } from './verify.js';

export const kafkaSink: SinkType<KafkaConfig, KafkaAction, KafkaItem> = {
  type: 'kafka',
  configSchema: KafkaConfigSpec,
  actionSchema: KafkaActionSpec,
  lint: lintKafkaConfig,
  create: (cfg, deps) => new KafkaSink(cfg, deps),
  verify: verifyKafka,
};

export { countTopic, countSince, snapshotOffsets, withKafkaAdmin, type OffsetSnapshot, type TopicCount } from './count.js';
