// The acceptance, end to end against real parts: Mosquitto → weir (its own process) → a
// 10-partition zlib Pulsar topic, read back by an independent reader (the broker's WebSocket reader
// API: the Java client inside the broker splits and decompresses the batches).
// 100,000 QoS 1 messages of 1 KB: exactly 100,000 messages, byte-identical to what the rule
// produced, one device in one partition in order, every partition used, stored < raw. (An outage
// of the broker is a case of the sink conformance suite, test/sinks/conformance.int.test.ts.)
//   node --import tsx --test test/sinks/pulsar-e2e.int.test.ts
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { countPulsarMessages } from '../../src/sinks/pulsar/count.js';
import { endSessions, messageSinkFiles } from '../e2e/fixtures.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { tempDir, waitFor } from '../harness/process.js';
import { sharedPulsar } from '../harness/pulsar.js';
import { readPartitions, storedBytes } from '../harness/pulsar-reader.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { assertAsPublished, assertCleanRun, publishExpected, type ReadRecord } from './message-sink-e2e.js';

const PARTITIONS = 10;
const RULE = 'telemetry_to_pulsar';
const running: WeirProcess[] = [];
const sessions: Array<[string, string, number]> = [];
const dirs: string[] = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id, n] of sessions) await endSessions(url, id, n);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function pulsarFiles(o: { mqttUrl: string; serviceUrl: string; httpUrl: string; topic: string; clientId: string; connections: number; dir: string }) {
  return messageSinkFiles({
    ...o,
    maxUnacked: 5000,
    broker: ['reconnect: { min_ms: 100, max_ms: 1000 }'],
    sink: [
      'type: pulsar',
      `service_url: ${o.serviceUrl}`,
      `admin_url: ${o.httpUrl}`,
      `topic: ${o.topic}`,
      'create_topic: if_missing',
      `partitions: ${PARTITIONS}`,
      'compression: zlib',
      'connect_timeout_ms: 2000',
      'batch: { max_items: 1000, max_delay_ms: 10 }',
      'retry: { initial_ms: 100, max_ms: 1000 }',
      'max_in_flight: 4',
    ],
    ruleId: RULE,
  });
}

/** Every message of the topic, `n` at least, in log order within each partition. */
async function readAll(httpUrl: string, topic: string, n: number): Promise<ReadRecord[]> {
  const out: ReadRecord[] = [];
  await readPartitions(httpUrl, topic, PARTITIONS, (partition, m) => {
    out.push({ partition, key: m.key, value: m.payload });
    return out.length >= n;
  });
  return out;
}

test('100,000 QoS 1 messages of 1 KB through Mosquitto → weir → a 10-partition zlib topic: exactly 100,000, byte-identical, one device in one partition in order', {
  timeout: 400_000,
}, async (t) => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pulsar = await sharedPulsar();
  const topic = `persistent://public/default/e2e-${Date.now()}`;
  const clientId = `weir-p100k-${process.pid}`;
  // One MQTT connection: a share group deals one device's messages over its members, so with
  // several connections their order is not defined before weir sees them.
  sessions.push([mqttUrl, clientId, 1]);
  const dir = tempDir('pulsar-e2e');
  dirs.push(dir);
  const weir = await startWeir(pulsarFiles({ mqttUrl, ...pulsar, topic, clientId, connections: 1, dir }), { dir });
  running.push(weir);
  await waitFor(() => weir.ready(), 60_000, 'weir ready');

  const N = 100_000;
  const started = Date.now();
  const { pub, expected } = await publishExpected(mqttUrl, N, 1024, `p100k-pub-${process.pid}`);
  assert.equal(pub.acked, N, 'Mosquitto acked every publish');
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 300_000, `${N} messages acked by weir`);
  const elapsed = Date.now() - started;
  const counted = await countPulsarMessages({ admin_url: pulsar.httpUrl, topic, connect_timeout_ms: 10_000 });
  assert.equal(counted.total, N, 'the broker counted exactly N messages');

  const read = await readAll(pulsar.httpUrl, topic, N);
  assert.equal(read.length, N, 'the reader read exactly N messages');
  assertAsPublished(read, expected, PARTITIONS);
  const raw = read.reduce((a, r) => a + r.value.length, 0);
  const stored = await storedBytes(pulsar.httpUrl, topic);
  assert.ok(stored < raw, `stored ${stored} B < raw ${raw} B: compression took effect`);

  t.diagnostic(
    `${N} messages of 1 KB published and stored in Pulsar in ${elapsed} ms (${Math.round(N / (elapsed / 1000))} msg/s, QoS 1, 1 connection); raw ${raw} B stored as ${stored} B`,
  );
  await assertCleanRun(weir, N, RULE);
  running.splice(running.indexOf(weir), 1);
});
