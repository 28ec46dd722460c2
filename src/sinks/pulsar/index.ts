// The Pulsar sink type.
import type { SinkType } from '../types.js';
import { countForReconcile } from './count.js';
import { PulsarSink } from './sink.js';
import { lintPulsarConfig, PulsarActionSpec, PulsarConfigSpec, type PulsarAction, type PulsarConfig } from './spec.js';

export const pulsarSink: SinkType<PulsarConfig, PulsarAction> = {
  type: 'pulsar',
  configSchema: PulsarConfigSpec,
  actionSchema: PulsarActionSpec,
  lint: lintPulsarConfig,
  create: (cfg, deps) => new PulsarSink(cfg, deps),
  count: (cfg, actions) => countForReconcile(cfg, actions),
};
