// The acceptance, end to end against real parts: Mosquitto → weir (its own process) →
// a 6-partition Kafka topic, read back by an independent kafkajs consumer. 100,000 QoS 1
// messages: exactly 100,000 records, values byte-identical to what the rule produced, one
// device's records in one partition in order. (An outage of the broker is a case of the sink
// conformance suite, test/sinks/conformance.int.test.ts, and of pg-faults for the whole path.)
//   node --import tsx --test test/sinks/kafka-e2e.int.test.ts
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import kafkajs from 'kafkajs';
import { publishLoad } from '../harness/load/publisher.js';
import { telemetrySample } from '../../src/embedded/devices.js';
import { registerCodec } from '../../src/sinks/kafka/codecs.js';
import { countTopic } from '../../src/sinks/kafka/count.js';
import { endSessions } from '../e2e/fixtures.js';
import { sharedKafka } from '../harness/kafka.js';
import { sharedMosquitto, startMosquitto, type MosquittoBroker } from '../harness/mosquitto.js';
import { tempDir, waitFor } from '../harness/process.js';
import { startWeir, type WeirFiles, type WeirProcess } from '../harness/weir.js';

const { Kafka, logLevel } = kafkajs;

const running: WeirProcess[] = [];
const sessions: Array<[string, string, number]> = [];
const dirs: string[] = [];
let ownMosquitto: MosquittoBroker | undefined;
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id, n] of sessions) await endSessions(url, id, n);
  await ownMosquitto?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * The run's Mosquitto (WEIR_TEST_MOSQUITTO), or one of this file's own, stopped in after():
 * sharedMosquitto()'s in-process broker keeps a test process alive after its tests end.
 */
async function mosquittoUrl(): Promise<string> {
  if (process.env.WEIR_TEST_MOSQUITTO) return (await sharedMosquitto()).url;
  ownMosquitto ??= await startMosquitto();
  return ownMosquitto.url;
}

function workDir(): string {
  const d = tempDir('weir-kafka-e2e');
  dirs.push(d);
  return d;
}

/** weir.yaml and a rule that sends every telemetry sample to `topic`, keyed by device. */
function kafkaFiles(o: {
  mqttUrl: string;
  brokers: string[];
  topic: string;
  clientId: string;
  connections: number;
  maxInFlight: number;
  dir: string;
}): WeirFiles {
  return {
    config: `
broker:
  url: ${o.mqttUrl}
  client_id: ${o.clientId}
  connections: ${o.connections}
  share_group: ${o.clientId}
  max_unacked: 5000
  reconnect: { min_ms: 100, max_ms: 1000 }
  publisher_clientid: { topic_level: 2 }
sinks:
  events:
    type: kafka
    brokers: ${JSON.stringify(o.brokers)}
    compression: lz4
    create_topics: { partitions: 6, replication_factor: 1 }
    timeout_ms: 5000
    batch: { max_items: 1000, max_delay_ms: 10 }
    retry: { initial_ms: 100, max_ms: 1000 }
    max_in_flight: ${o.maxInFlight}
dead_letter: { file: ${join(o.dir, 'dead-letters.jsonl')} }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
    rules: {
      'to-kafka.yaml': `
id: telemetry_to_kafka
sql: |
  SELECT
    payload.ts AS ts,
    clientid AS device_id,
    payload.seq AS seq,
    payload.temp AS temp,
    payload.hum AS humidity,
    payload.location AS location
  FROM "device/+/telemetry"
actions:
  - sink: events
    topic: ${o.topic}
    key: \${device_id}
`,
    },
  };
}

interface Read {
  partition: number;
  offset: number;
  key: string;
  value: Buffer;
}

async function readAll(brokerList: string[], topic: string, n: number, timeoutMs = 120_000): Promise<Read[]> {
  const consumer = new Kafka({ clientId: 'weir-e2e-reader', brokers: brokerList, logLevel: logLevel.NOTHING }).consumer({
    groupId: `reader-${randomUUID()}`,
    maxWaitTimeInMs: 200,
  });
  const out: Read[] = [];
  // weir writes lz4: this process's kafkajs needs the codec to read it.
  await registerCodec('lz4');
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
      const timer = setTimeout(() => reject(new Error(`read ${out.length} of ${n} records in ${timeoutMs} ms`)), timeoutMs);
      void consumer
        .run({
          eachBatch: async ({ batch }) => {
            for (const m of batch.messages) out.push({ partition: batch.partition, offset: Number(m.offset), key: m.key!.toString(), value: m.value! });
            if (out.length >= n) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    await consumer.disconnect();
  }
  return out;
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
  const mqttUrl = await mosquittoUrl();
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
  const expected = new Map<string, string>();
  const started = Date.now();
  const pub = await publishLoad({
    url: mqttUrl,
    clients: 10,
    devices: 1000,
    size: 200,
    qos: 1,
    limit: N,
    clientIdPrefix: `k100k-pub-${process.pid}`,
    payloadFor: (device, seq) => {
      const p = telemetrySample(String(device), seq, 200);
      const s = JSON.parse(p.toString()) as { ts: number; seq: number; temp: number; hum: number; location: string };
      // What the rule produces: its SELECT's fields in order, the device from the topic's clientid.
      expected.set(
        `${device}/${seq}`,
        JSON.stringify({ ts: s.ts, device_id: String(device), seq: s.seq, temp: s.temp, humidity: s.hum, location: s.location }),
      );
      return p;
    },
  });
  assert.equal(pub.acked, N, 'the broker acked every publish');
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 180_000, `${N} messages acked by weir`);
  const elapsed = Date.now() - started;
  assert.equal(await recordsIn(kafka.brokers, topic), N, 'exactly N records in the topic');

  const read = await readAll(kafka.brokers, topic, N);
  assert.equal(read.length, N, 'the consumer read exactly N records');
  for (const r of read) {
    const v = JSON.parse(r.value.toString()) as { device_id: string; seq: number };
    const want = expected.get(`${v.device_id}/${v.seq}`);
    assert.ok(want !== undefined, `record ${v.device_id}/${v.seq} was published`);
    assert.ok(r.value.equals(Buffer.from(want)), `record ${v.device_id}/${v.seq} is byte-identical to the rule's output`);
    assert.equal(r.key, v.device_id);
    expected.delete(`${v.device_id}/${v.seq}`);
  }
  assert.equal(expected.size, 0, 'every published message is a record');

  const byDevice = new Map<string, Read[]>();
  for (const r of read) {
    let l = byDevice.get(r.key);
    if (!l) byDevice.set(r.key, (l = []));
    l.push(r);
  }
  assert.equal(byDevice.size, 1000);
  const partitionsUsed = new Set<number>();
  for (const [device, rs] of byDevice) {
    assert.equal(new Set(rs.map((r) => r.partition)).size, 1, `device ${device} in one partition`);
    partitionsUsed.add(rs[0]!.partition);
    const seqs = rs.sort((a, b) => a.offset - b.offset).map((r) => (JSON.parse(r.value.toString()) as { seq: number }).seq);
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, `device ${device} in order`);
  }
  assert.equal(partitionsUsed.size, 6, 'every partition used');

  assert.equal(await weir.metric('weir_sink_success_total', 'sink="events"'), N);
  assert.equal(await weir.metric('weir_rule_passed_total', 'rule="telemetry_to_kafka"'), N);
  assert.equal(await weir.metric('weir_ingest_unacked'), 0);
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0);
  t.diagnostic(`${N} messages published and stored in Kafka in ${elapsed} ms (${Math.round(N / (elapsed / 1000))} msg/s, QoS 1, 1 connection)`);
  assert.equal(await weir.stop(), 0, 'clean exit on SIGTERM');
  running.splice(running.indexOf(weir), 1);
});
