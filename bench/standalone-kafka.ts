// The kafka sink of the standalone benchmark (bench/standalone.ts, STANDALONE_SINKS=kafka): weir
// alone behind the stand-in broker, writing into the real Kafka broker of the test harness
// (test/harness/kafka.ts: one KRaft node; it runs on the stand-in's core, as PostgreSQL does).
// weir runs the shipped weir.yaml and the shipped rule's SQL with the shipped sink's batching
// (2,000 items or 20 ms, 4 batches in flight), its one action a Kafka action instead of the table:
// topic `telemetry` of 6 partitions, keyed by device, the whole output record as the JSON value,
// acks -1 and the idempotent producer (the sink's defaults), no compression — as
// `npm run bench -- kafka` configures it. Dead letters go to a file (the shipped store is the
// PostgreSQL sink, absent here); the benchmark checks there are none.
// After the runs the topic is read back: every message must be there once.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { startKafka } from '../test/harness/kafka.js';
import { ROOT } from '../test/harness/weir.js';
import { createTopic, readTopic, TOPIC } from './kafka-topic.js';
import type { ServiceSink } from './standalone.js';

interface ShippedConfig {
  sinks: Record<string, { batch?: unknown; max_in_flight?: unknown }>;
  dead_letter?: unknown;
}

export async function standaloneKafka(): Promise<ServiceSink> {
  const kafka = await startKafka();
  await createTopic(kafka.brokers);
  return {
    config(dir: string): string {
      const shipped = parseYaml(readFileSync(join(ROOT, 'weir.yaml'), 'utf8')) as ShippedConfig;
      const { batch, max_in_flight } = shipped.sinks.tsdb!;
      const config = {
        ...shipped,
        sinks: { kafka: { type: 'kafka', brokers: kafka.brokers, batch, max_in_flight } },
        dead_letter: { file: join(dir, 'dead-letters.jsonl') },
      };
      const rule = parseYaml(readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8')) as { actions: unknown[] };
      rule.actions = [{ sink: 'kafka', topic: TOPIC, key: '${device_id}' }];
      mkdirSync(join(dir, 'rules'), { recursive: true });
      writeFileSync(join(dir, 'rules', 'telemetry.yaml'), stringifyYaml(rule));
      writeFileSync(join(dir, 'weir.yaml'), stringifyYaml(config));
      return join(dir, 'weir.yaml');
    },
    async stored(total: number): Promise<number> {
      const seen = new Set<string>();
      const read = await readTopic(kafka.brokers, total, (v) => seen.add(`${v.device_id}/${v.seq}`));
      if (read !== seen.size) throw new Error(`kafka: ${read} records in the topic, ${seen.size} distinct: ${read - seen.size} duplicated`);
      return read;
    },
    dispose: () => kafka.dispose(),
  };
}
