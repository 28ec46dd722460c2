// The Kafka sink against a REAL broker (test/harness/kafka.ts: kafka_2.13 from Maven Central,
// KRaft). Everything written is read back by an independent kafkajs consumer; partition choices
// are checked against the Java client's own code (test/brokers/kafka/PartitionForKey.java).
//   node --import tsx --test test/sinks/kafka.int.test.ts
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import kafkajs, { type Admin, type IHeaders } from 'kafkajs';
import { silentLogger } from '../../src/log.js';
import type { KafkaItem } from '../../src/sinks/kafka/action.js';
import { countSince, countTopic, snapshotOffsets } from '../../src/sinks/kafka/count.js';
import { kafkaSinkType } from '../../src/sinks/kafka/index.js';
import { murmur2 } from '../../src/sinks/kafka/partitioner.js';
import { KafkaActionSpec, KafkaConfigSpec, type Compression, type KafkaAction, type KafkaConfig } from '../../src/sinks/kafka/spec.js';
import type { Sink, SinkInput } from '../../src/sinks/types.js';
import { ensureKafkaJars, sharedKafka } from '../harness/kafka.js';

const { Kafka, logLevel } = kafkajs;
const execFileP = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const never = new AbortController().signal;

function config(brokers: string[], extra: Record<string, unknown> = {}): KafkaConfig {
  const v = Value.Default(KafkaConfigSpec, { brokers, ...extra });
  assert.ok(Value.Check(KafkaConfigSpec, v));
  return v as KafkaConfig;
}

function action(a: Record<string, unknown>): KafkaAction {
  const v = Value.Default(KafkaActionSpec, a);
  assert.ok(Value.Check(KafkaActionSpec, v));
  return v as KafkaAction;
}

function input(record: Record<string, unknown>, clientid = 'dev-1'): SinkInput {
  return { record, event: { topic: `device/${clientid}/telemetry`, payload: Buffer.from(JSON.stringify(record)), clientid }, ruleId: 'r1' };
}

function newSink(brokers: string[], extra: Record<string, unknown> = {}): Sink<KafkaAction, KafkaItem> {
  return kafkaSinkType.create(config(brokers, extra), { name: 'kafka-test', log: silentLogger });
}

interface Read {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
}

/** Reads `n` records of `topic` from the beginning with a consumer of its own group. */
async function consume(brokers: string[], topic: string, n: number, timeoutMs = 60_000): Promise<Read[]> {
  const kafka = new Kafka({ clientId: 'weir-test-reader', brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}`, sessionTimeout: 10_000, rebalanceTimeout: 10_000, maxWaitTimeInMs: 200 });
  const out: Read[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${out.length} of ${n} records of ${topic} in ${timeoutMs} ms`)), timeoutMs);
      void consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            out.push({ partition, offset: Number(message.offset), key: message.key, value: message.value, headers: message.headers ?? {} });
            if (out.length >= n) {
              clearTimeout(timer);
              resolvePromise();
            }
          },
        })
        .catch(reject);
    });
    // Anything beyond n would be a duplicate or a stray record: give it a moment to show up.
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    await consumer.disconnect();
  }
  return out;
}

async function createTopic(admin: Admin, topic: string, partitions: number, configEntries: Array<{ name: string; value: string }> = []): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, configEntries }], waitForLeaders: true });
}

/** The Java client's murmur2 and partition for each key (hex in, "<hash> <partition>" out). */
async function javaPartitions(keys: Buffer[], partitions: number): Promise<Array<{ hash: number; partition: number }>> {
  const lib = await ensureKafkaJars();
  const child = execFileP('java', ['-Xmx64m', '-cp', `${lib}/*`, join(ROOT, 'test/brokers/kafka/PartitionForKey.java'), String(partitions)], {
    timeout: 60_000,
  });
  child.child.stdin!.end(`${keys.map((k) => k.toString('hex')).join('\n')}\n`);
  const { stdout } = await child;
  return stdout
    .trim()
    .split('\n')
    .map((l) => {
      const [h, p] = l.split(' ');
      return { hash: Number(h), partition: Number(p) };
    });
}

describe('kafka sink against a real broker', { timeout: 600_000 }, () => {
  let brokers: string[];
  let admin: Admin;

  before(async () => {
    ({ brokers } = await sharedKafka());
    admin = new Kafka({ clientId: 'weir-test-admin', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
  });
  after(async () => {
    await admin?.disconnect();
  });

  it('connects, writes a batch that an independent consumer reads back byte-identical, closes', async () => {
    const topic = `rb-${randomUUID()}`;
    const sink = newSink(brokers, { create_topics: { partitions: 6, replication_factor: 1 } });
    await sink.connect(never);
    await sink.probe(never);
    const bound = sink.bind(action({ topic, key: '${device}', headers: { rule: 'r1', seq: '${seq}' } }), 'r1');
    const devices = ['d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7'];
    const records = Array.from({ length: 700 }, (_, i) => ({
      device: devices[i % devices.length],
      seq: i,
      temp: Math.round(Math.random() * 1e4) / 100,
      note: 'é✓\u0000"\\',
    }));
    const items = records.map((r) => bound.encode(input(r)));
    for (let i = 0; i < items.length; i += 100) {
      const result = await sink.write(items.slice(i, i + 100), never);
      assert.deepEqual(result, { rejected: [], retry: [] });
    }
    await sink.close();

    const read = await consume(brokers, topic, records.length);
    assert.equal(read.length, records.length, 'exactly the records written');
    const expected = new Map(items.map((it) => [it.message.value!.toString('base64'), it]));
    for (const r of read) {
      const it = expected.get(r.value!.toString('base64'));
      assert.ok(it, 'a record that was written, byte for byte');
      assert.deepEqual(r.key, it.message.key);
      assert.equal(String(r.headers.rule), 'r1');
      assert.equal(String(r.headers.seq), String(JSON.parse(r.value!.toString()).seq));
      expected.delete(r.value!.toString('base64'));
    }
    assert.equal(expected.size, 0);
    // The value is the output record as JSON, unchanged.
    assert.deepEqual(
      read.map((r) => JSON.parse(r.value!.toString())).sort((a, b) => a.seq - b.seq),
      records,
    );

    // One key, one partition, in the order written.
    const byKey = new Map<string, Read[]>();
    for (const r of read) byKey.set(r.key!.toString(), [...(byKey.get(r.key!.toString()) ?? []), r]);
    assert.equal(byKey.size, devices.length);
    for (const [key, rs] of byKey) {
      assert.equal(new Set(rs.map((r) => r.partition)).size, 1, `${key} in one partition`);
      const seqs = rs.sort((a, b) => a.offset - b.offset).map((r) => JSON.parse(r.value!.toString()).seq as number);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
        `${key} in order`,
      );
    }
    assert.equal((await countTopic(admin, topic)).partitions.length, 6, 'create_topics made 6 partitions');
  });

  it('puts each key in the partition the Java client would choose (murmur2)', async () => {
    for (const partitions of [6, 7]) {
      const topic = `mm-${partitions}-${randomUUID()}`;
      await createTopic(admin, topic, partitions);
      const keys = Array.from({ length: 150 }, (_, i) =>
        i % 3 === 0 ? `device-${i}` : i % 3 === 1 ? randomBytes(1 + (i % 37)).toString('hex') : `дат-${i}-✓-${randomBytes(2).toString('base64')}`,
      );
      const keyBytes = keys.map((k) => Buffer.from(k, 'utf8'));
      const java = await javaPartitions(keyBytes, partitions);
      for (const [i, k] of keyBytes.entries()) assert.equal(murmur2(k), java[i]!.hash, `murmur2 of ${keys[i]}`);

      const sink = newSink(brokers);
      await sink.connect(never);
      const bound = sink.bind(action({ topic, key: '${k}', value: '${i}' }), 'r1');
      await sink.write(
        keys.map((k, i) => bound.encode(input({ k, i }))),
        never,
      );
      await sink.close();
      const read = await consume(brokers, topic, keys.length);
      assert.equal(read.length, keys.length);
      for (const r of read) {
        const i = Number(r.value!.toString());
        assert.equal(r.partition, java[i]!.partition, `key ${keys[i]} with ${partitions} partitions`);
      }
    }
  });

  it('rotates over the partitions with round_robin, whatever the key', async () => {
    const topic = `rr-${randomUUID()}`;
    await createTopic(admin, topic, 4);
    const sink = newSink(brokers);
    await sink.connect(never);
    const bound = sink.bind(action({ topic, key: 'same', partitioner: 'round_robin' }), 'r1');
    await sink.write(
      Array.from({ length: 12 }, (_, i) => bound.encode(input({ i }))),
      never,
    );
    await sink.close();
    const read = await consume(brokers, topic, 12);
    const perPartition = [0, 1, 2, 3].map((p) => read.filter((r) => r.partition === p).length);
    assert.deepEqual(perPartition, [3, 3, 3, 3]);
  });

  for (const compression of ['gzip', 'snappy', 'lz4', 'zstd'] as const satisfies readonly Compression[]) {
    it(`round-trips ${compression} through the broker, both ways`, async () => {
      const records = Array.from({ length: 300 }, (_, i) => ({ i, text: `reading ${i} `.repeat(1 + (i % 20)), blob: randomBytes(8).toString('hex') }));
      // weir compresses; the broker decompresses to validate the batch and stores it as it came.
      const written = `cz-${compression}-${randomUUID()}`;
      await createTopic(admin, written, 3);
      // weir writes uncompressed; the broker recompresses with its own (Java) codec, weir reads it.
      const recompressed = `cj-${compression}-${randomUUID()}`;
      await createTopic(admin, recompressed, 3, [{ name: 'compression.type', value: compression }]);

      const sink = newSink(brokers, { compression });
      await sink.connect(never);
      const bound = sink.bind(action({ topic: written, key: '${i}' }), 'r1');
      const items = records.map((r) => bound.encode(input(r)));
      await sink.write(items.slice(0, 150), never);
      await sink.write(items.slice(150), never);
      await sink.close();

      const plain = newSink(brokers, { compression: 'none' });
      await plain.connect(never);
      const bound2 = plain.bind(action({ topic: recompressed, key: '${i}' }), 'r1');
      await plain.write(
        records.map((r) => bound2.encode(input(r))),
        never,
      );
      await plain.close();

      const want = items.map((it) => it.message.value!.toString('base64')).sort();
      for (const topic of [written, recompressed]) {
        const read = await consume(brokers, topic, records.length);
        assert.deepEqual(read.map((r) => r.value!.toString('base64')).sort(), want, `${topic} byte-identical`);
      }
    });
  }

  it('counts records from offsets, in total and since a snapshot', async () => {
    const topic = `cnt-${randomUUID()}`;
    await createTopic(admin, topic, 3);
    assert.equal((await countTopic(admin, topic)).records, 0);
    const sink = newSink(brokers);
    await sink.connect(never);
    const bound = sink.bind(action({ topic, key: '${i}' }), 'r1');
    await sink.write(
      Array.from({ length: 50 }, (_, i) => bound.encode(input({ i }))),
      never,
    );
    const first = await countTopic(admin, topic);
    assert.equal(first.records, 50);
    assert.equal(first.partitions.length, 3);
    const snap = await snapshotOffsets(admin, topic);
    await sink.write(
      Array.from({ length: 25 }, (_, i) => bound.encode(input({ i: 100 + i }))),
      never,
    );
    await sink.close();
    assert.equal(await countSince(admin, snap), 25);
    assert.equal((await countTopic(admin, topic)).records, 75);
  });

  it('classes a missing topic as fatal and an oversized record as reject, from the real broker', async () => {
    const sink = newSink(brokers);
    await sink.connect(never);
    const missing = sink.bind(action({ topic: `missing-${randomUUID()}` }), 'r1');
    const err1 = await sink.write([missing.encode(input({ a: 1 }))], never).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err1, 'writing to a topic that does not exist fails');
    assert.equal(sink.classify(err1), 'fatal', String(err1));

    const small = `small-${randomUUID()}`;
    await createTopic(admin, small, 1, [{ name: 'max.message.bytes', value: '2000' }]);
    const bound = sink.bind(action({ topic: small, value: '${v}' }), 'r1');
    const err2 = await sink.write([bound.encode(input({ v: 'x'.repeat(10_000) }))], never).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err2, 'a record over max.message.bytes fails');
    assert.equal(sink.classify(err2), 'reject', String(err2));
    // The sink still works after both.
    await sink.write([bound.encode(input({ v: 'ok' }))], never);
    await sink.close();
  });
});
