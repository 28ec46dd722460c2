// The Pulsar sink type.
import { TopicLetterStore } from '../../dead-letters/topic-store.js';
import type { SinkType } from '../types.js';
import { PULSAR_CODES } from './errors.js';
import { countForReconcile } from './count.js';
import { PulsarLetterTopic } from './letter-topic.js';
import { PulsarSink } from './sink.js';
import { lintPulsarConfig, PulsarActionSpec, PulsarConfigSpec, type PulsarAction, type PulsarConfig } from './spec.js';

export const pulsarSinkType: SinkType<PulsarConfig, PulsarAction> = {
  type: 'pulsar',
  configSchema: PulsarConfigSpec,
  actionSchema: PulsarActionSpec,
  errorCodes: PULSAR_CODES,
  lint: lintPulsarConfig,
  create: (cfg, deps) => new PulsarSink(cfg, deps),
  keepsLetters: (cfg) => cfg.dead_letter_topic !== undefined,
  letterStore: (cfg, deps) => new TopicLetterStore(new PulsarLetterTopic(cfg, cfg.dead_letter_topic!, deps.name, deps.log)),
  count: (cfg, actions) => countForReconcile(cfg, actions),
};
