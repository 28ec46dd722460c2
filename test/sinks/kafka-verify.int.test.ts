// weir check --connect's Kafka part (verifyKafka) against a real broker: a topic an action names
// that does not exist is a problem at its rule file and line unless create_topics is set; an
// existing topic with fewer partitions than create_topics.partitions says is named; a templated
// topic is not checked.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import kafkajs from 'kafkajs';
import { KafkaConfigSpec, type KafkaConfig } from '../../src/sinks/kafka/spec.js';
import { verifyKafka } from '../../src/sinks/kafka/verify.js';
import type { ActionToVerify } from '../../src/sinks/types.js';
import { sharedKafka } from '../harness/kafka.js';

function config(brokers: string[], extra: Record<string, unknown> = {}): KafkaConfig {
  return Value.Default(KafkaConfigSpec, { brokers, ...extra }) as KafkaConfig;
}

function action(topic: string, line: number): ActionToVerify {
  return {
    ruleId: `r${line}`,
    at: `rules/k.yaml:${line}`,
    atKey: (p) => `rules/k.yaml:${line + (p[0] === 'topic' ? 1 : 0)}`,
    settings: { topic },
    samples: [],
  };
}

test('verifyKafka names a missing topic at its line, a topic with other partitions than create_topics says, and skips templated topics', {
  timeout: 120_000,
}, async () => {
  const { brokers } = await sharedKafka();
  const existing = `verify-${randomUUID()}`;
  const missing = `verify-missing-${randomUUID()}`;
  const admin = new kafkajs.Kafka({ clientId: 'weir-verify-test', brokers, logLevel: kafkajs.logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: existing, numPartitions: 2 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const actions = [action(existing, 10), action(missing, 20), action('per-device-${clientid}', 30)];

  const plain = await verifyKafka(config(brokers), actions);
  assert.deepEqual(
    plain.map((p) => p.message),
    [`rules/k.yaml:21: rule r20: topic ${missing} does not exist (and create_topics is not set)`],
  );
  assert.match(plain[0]!.suggestion ?? '', /kafka-topics\.sh --create --topic verify-missing-/);

  const creating = await verifyKafka(config(brokers, { create_topics: { partitions: 3 } }), actions);
  assert.deepEqual(
    creating.map((p) => p.message),
    [`rules/k.yaml:11: rule r10: topic ${existing} has 2 partition(s), create_topics.partitions says 3`],
  );
});
