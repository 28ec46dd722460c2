// The acceptance, end to end against real parts: Mosquitto → weir (its own process) →
// a 6-partition Kafka topic, read back by an independent kafkajs consumer. 100,000 QoS 1
// messages: exactly 100,000 records, values byte-identical to what the rule produced, one
// device's records in one partition in order. (An outage of the broker is a case of the sink
// conformance suite, test/sinks/conformance.int.test.ts, and of pg-faults for the whole path.)
//   node --import tsx --test test/sinks/kafka-e2e.int.test.ts
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import kafkajs from 'kafkajs';
import { countTopic } from '../../src/sinks/kafka/count.js';
import { endSessions, messageSinkFiles } from '../e2e/fixtures.js';
import { sharedKafka } from '../harness/kafka.js';
import { readTopic } from '../harness/kafka-reader.js';
import { fileMosquitto } from '../harness/mosquitto.js';
import { tempDir, waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { assertAsPublished, assertCleanRun, publishExpected, type ReadRecord } from './message-sink-e2e.js';

const { Kafka, logLevel } = kafkajs;
const PARTITIONS = 6;
const RULE = 'telemetry_to_kafka';

const running: WeirProcess[] = [];
const sessions: Array<[string, string, number]> = [];
const dirs: string[] = [];
const mosquitto = fileMosquitto();
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id, n] of sessions) await endSessions(url, id, n);
  await mosquitto.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workDir(): string {
  const d = tempDir('weir-kafka-e2e');
  dirs.push(d);
  return d;
}

/** weir.yaml and a rule that sends every telemetry sample to `topic`, keyed by device. */
function kafkaFiles(o: { mqttUrl: string; brokers: string[]; topic: string; clientId: string; connections: number; maxInFlight: number; dir: string }) {
  return messageSinkFiles({
    ...o,
    maxUnacked: 5000,
    broker: ['reconnect: { min_ms: 100, max_ms: 1000 }'],
    sink: [
      'type: kafka',
      `brokers: ${JSON.stringify(o.brokers)}`,
      'compression: lz4',
      `create_topics: { partitions: ${PARTITIONS}, replication_factor: 1 }`,
      'timeout_ms: 5000',
      'batch: { max_items: 1000, max_delay_ms: 10 }',
      'retry: { initial_ms: 100, max_ms: 1000 }',
      `max_in_flight: ${o.maxInFlight}`,
    ],
    action: [`topic: ${o.topic}`],
    ruleId: RULE,
  });
}

/** Every record of the topic, `n` at least, in offset order within each partition. */
async function readAll(brokers: string[], topic: string, n: number): Promise<ReadRecord[]> {
  const out: Array<ReadRecord & { offset: number }> = [];
  await readTopic(brokers, topic, (partition, m) => {
    out.push({ partition, offset: Number(m.offset), key: m.key?.toString(), value: m.value! });
    return out.length >= n;
  });
  return out.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

async function recordsIn(brokerList: string[], topic: string): Promise<number> {
  const admin = new Kafka({ clientId: 'weir-e2e-admin', brokers: brokerList, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
  try {
    await admin.connect();
    return (await countTopic(admin, topic)).records;
  } catch {
    return 0;
  } finally {
    await admin.disconnect();
  }
}

test('100,000 QoS 1 messages through Mosquitto → weir → a 6-partition topic: exactly 100,000 records, byte-identical, one device in one partition in order', {
  timeout: 300_000,
}, async (t) => {
  const mqttUrl = await mosquitto.url();
  const kafka = await sharedKafka();
  const topic = `e2e-${randomUUID()}`;
  const clientId = `weir-k100k-${process.pid}`;
  // One MQTT connection: a share group deals one device's messages over all its members, so with
  // several connections their order across members is not defined before weir even sees them.
  sessions.push([mqttUrl, clientId, 1]);
  const dir = workDir();
  const weir = await startWeir(kafkaFiles({ mqttUrl, brokers: kafka.brokers, topic, clientId, connections: 1, maxInFlight: 4, dir }), { dir });
  running.push(weir);
  await waitFor(() => weir.ready(), 30_000, 'weir ready');

  const N = 100_000;
  const started = Date.now();
  const { pub, expected } = await publishExpected(mqttUrl, N, 200, `k100k-pub-${process.pid}`);
  assert.equal(pub.acked, N, 'the broker acked every publish');
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 180_000, `${N} messages acked by weir`);
  const elapsed = Date.now() - started;
  assert.equal(await recordsIn(kafka.brokers, topic), N, 'exactly N records in the topic');

  const read = await readAll(kafka.brokers, topic, N);
  assert.equal(read.length, N, 'the consumer read exactly N records');
  assertAsPublished(read, expected, PARTITIONS);
  t.diagnostic(`${N} messages published and stored in Kafka in ${elapsed} ms (${Math.round(N / (elapsed / 1000))} msg/s, QoS 1, 1 connection)`);
  await assertCleanRun(weir, N, RULE);
  running.splice(running.indexOf(weir), 1);
});
