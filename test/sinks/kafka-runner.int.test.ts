// The Kafka driver under the core's real SinkRunner (batching, max in flight, backoff, readiness,
// counters) against a REAL broker that is stopped mid-stream and started again: nothing is lost,
// the retries are counted, and readiness goes down and up. No MQTT here: the end-to-end path with
// Mosquitto is the integrator's test; this one pins the driver's half of it.
//   node --import tsx --test test/sinks/kafka-runner.int.test.ts
// WEIR_KAFKA_OUTAGE_MS sets how long the broker stays down (default 15 s; the acceptance
// run uses 30 s).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import kafkajs from 'kafkajs';
import type { SinkConfig } from '../../src/config/load.js';
import { DeadLetterQueue, fileDeadLetterWriter } from '../../src/core/dead-letter.js';
import type { Outcome } from '../../src/core/ack-path.js';
import { SinkRunner } from '../../src/core/sink-runner.js';
import { silentLogger } from '../../src/log.js';
import { createMetrics, ruleCounters } from '../../src/metrics/names.js';
import { countTopic } from '../../src/sinks/kafka/count.js';
import { kafkaSink } from '../../src/sinks/kafka/index.js';
import { KafkaActionSpec, KafkaConfigSpec, type KafkaConfig } from '../../src/sinks/kafka/spec.js';
import { startKafka, type KafkaBroker } from '../harness/kafka.js';
import { tempDir } from '../harness/process.js';

const { Kafka, logLevel } = kafkajs;
const OUTAGE_MS = Number(process.env.WEIR_KAFKA_OUTAGE_MS ?? 15_000);

/** The sum of a metric's samples, read from the registry's Prometheus text (as a scraper sees it). */
async function metricSum(registry: { metrics(): Promise<string> }, name: string): Promise<number> {
  const text = await registry.metrics();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

describe('kafka sink under the core sink runner', { timeout: 300_000 }, () => {
  let broker: KafkaBroker | undefined;
  after(async () => {
    await broker?.dispose();
  });

  it(`loses nothing when the broker is down for ${OUTAGE_MS / 1000} s mid-stream`, async (t) => {
    broker = await startKafka({ partitionsDefault: 6 });
    const topic = `outage-${randomUUID()}`;
    const metrics = createMetrics();
    const stop = new AbortController();
    const dir = tempDir('kafka-runner');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const settings = Value.Default(KafkaConfigSpec, { brokers: broker.brokers, create_topics: { partitions: 6, replication_factor: 1 }, timeout_ms: 5_000, compression: 'lz4' }) as Record<string, unknown>;
    const cfg: SinkConfig = {
      name: 'kafka',
      type: kafkaSink,
      batch: { max_items: 500, max_bytes: 4 * 1024 * 1024, max_delay_ms: 20 },
      retry: { initial_ms: 100, max_ms: 1_000, multiplier: 2, max_attempts: 0 },
      max_in_flight: 4,
      settings,
    };
    const sink = kafkaSink.create(settings as KafkaConfig, { name: 'kafka', log: silentLogger });
    const dlq = new DeadLetterQueue(fileDeadLetterWriter(join(dir, 'dead.jsonl')), cfg.retry, metrics, silentLogger, stop.signal, join(dir, 'fallback.jsonl'));
    const runner = new SinkRunner(cfg, sink, dlq, metrics, silentLogger, stop.signal);
    await runner.connect();
    assert.equal(runner.ready, true);
    const handle = runner.bind('r1', Value.Default(KafkaActionSpec, { topic, key: '${dev}' }) as Record<string, unknown>, ruleCounters(metrics, 'r1'));

    const N = 30_000;
    const outcomes: Outcome[] = [];
    let allDone!: () => void;
    const finished = new Promise<void>((r) => (allDone = r));
    const enqueue = (i: number) => {
      const record = { seq: i, dev: `dev-${i % 200}`, v: Math.sin(i) };
      runner.enqueue(handle, record, { topic: `device/dev-${i % 200}/telemetry`, payload: JSON.stringify(record) }, 64, {
        itemDone: (o) => {
          outcomes.push(o);
          if (outcomes.length === N) allDone();
        },
      });
    };

    // A stream of N records over ~ (N / 500) × 50 ms; the broker stops a third of the way in.
    let sent = 0;
    let downSeen = false;
    const stream = (async () => {
      while (sent < N) {
        for (let j = 0; j < 500 && sent < N; j++) enqueue(sent++);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_000));
    await broker.stop();
    const downAt = Date.now();
    while (Date.now() - downAt < OUTAGE_MS) {
      await runner.probe();
      if (!runner.ready) downSeen = true;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(downSeen, 'readiness went down while the broker was stopped');
    const storedDuringOutage = outcomes.length;
    await broker.start();
    await stream;
    await finished;
    await runner.flush();
    await runner.probe();
    assert.equal(runner.ready, true, 'readiness is back');

    assert.equal(outcomes.filter((o) => o === 'stored').length, N, 'every record stored, none dead-lettered');
    const retried = await metricSum(metrics.registry, 'weir_sink_retried_total');
    const success = await metricSum(metrics.registry, 'weir_sink_success_total');
    assert.ok(retried > 0, 'retries were counted');
    assert.equal(success, N);

    // An independent reader: every seq is in the topic (duplicates are allowed by at-least-once).
    const admin = new Kafka({ clientId: 'weir-test-admin', brokers: broker.brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const count = await countTopic(admin, topic);
    await admin.disconnect();
    const consumer = new Kafka({ clientId: 'weir-test-reader', brokers: broker.brokers, logLevel: logLevel.NOTHING }).consumer({ groupId: `reader-${randomUUID()}`, maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen = new Set<number>();
    let read = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${read} of ${count.records}`)), 60_000);
      void consumer
        .run({
          eachMessage: async ({ message }) => {
            read++;
            seen.add((JSON.parse(message.value!.toString()) as { seq: number }).seq);
            if (read >= count.records) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    await consumer.disconnect();
    assert.equal(seen.size, N, 'every record is in the topic');
    const duplicates = count.records - N;
    // Report what the outage cost, for docs/kafka.md.
    t.diagnostic(`outage ${OUTAGE_MS} ms: ${N} records, ${storedDuringOutage} stored before/while down, retried ${retried} item attempts, ${duplicates} duplicates in the topic`);
    stop.abort();
    await runner.close();
  });
});
