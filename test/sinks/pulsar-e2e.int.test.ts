// The acceptance, end to end against real parts: Mosquitto → weir (its own process) → a
// 10-partition zlib Pulsar topic, read back by an independent reader (the broker's WebSocket reader
// API: the Java client inside the broker splits and decompresses the batches).
// 100,000 QoS 1 messages of 1 KB: exactly 100,000 messages, byte-identical to what the rule
// produced, one device in one partition in order, every partition used, stored < raw. (An outage
// of the broker is a case of the sink conformance suite, test/sinks/conformance.int.test.ts.)
//   node --import tsx --test test/sinks/pulsar-e2e.int.test.ts
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { publishLoad } from '../harness/load/publisher.js';
import { telemetrySample } from '../../src/embedded/devices.js';
import { countPulsarMessages } from '../../src/sinks/pulsar/count.js';
import { endSessions } from '../e2e/fixtures.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { tempDir, waitFor } from '../harness/process.js';
import { sharedPulsar } from '../harness/pulsar.js';
import { startWeir, type WeirFiles, type WeirProcess } from '../harness/weir.js';

const PARTITIONS = 10;
const running: WeirProcess[] = [];
const sessions: Array<[string, string, number]> = [];
const dirs: string[] = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id, n] of sessions) await endSessions(url, id, n);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function pulsarFiles(o: {
  mqttUrl: string;
  serviceUrl: string;
  httpUrl: string;
  topic: string;
  clientId: string;
  connections: number;
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
    type: pulsar
    service_url: ${o.serviceUrl}
    admin_url: ${o.httpUrl}
    topic: ${o.topic}
    create_topic: if_missing
    partitions: ${PARTITIONS}
    compression: zlib
    connect_timeout_ms: 2000
    batch: { max_items: 1000, max_delay_ms: 10 }
    retry: { initial_ms: 100, max_ms: 1000 }
    max_in_flight: 4
dead_letter: { file: ${join(o.dir, 'dead-letters.jsonl')} }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
    rules: {
      'to-pulsar.yaml': `
id: telemetry_to_pulsar
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
    key: \${device_id}
`,
    },
  };
}

interface Read {
  partition: number;
  key: string | undefined;
  payload: Buffer;
}

/**
 * Reads all partitions from the earliest message until `enough(messages)` holds, then 1 s more
 * (to catch anything beyond it, such as duplicates that at-least-once allows).
 */
async function readAll(httpUrl: string, topic: string, enough: (read: Read[]) => boolean, timeoutMs = 180_000): Promise<Read[]> {
  const out: Read[] = [];
  const sockets: WebSocket[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${out.length} messages in ${timeoutMs} ms, not enough`)), timeoutMs);
      let done = false;
      for (let p = 0; p < PARTITIONS; p++) {
        const ws = new WebSocket(
          `${httpUrl.replace(/^http/, 'ws')}/ws/v2/reader/${topic.replace('://', '/')}-partition-${p}?messageId=earliest&receiverQueueSize=5000`,
        );
        sockets.push(ws);
        ws.on('error', reject);
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { messageId: string; payload: string; key?: string };
          ws.send(JSON.stringify({ messageId: m.messageId }));
          out.push({ partition: p, key: m.key, payload: Buffer.from(m.payload, 'base64') });
          if (!done && enough(out)) {
            done = true;
            clearTimeout(timer);
            setTimeout(resolve, 1_000);
          }
        });
      }
    });
  } finally {
    for (const ws of sockets) ws.terminate();
  }
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
  const expected = new Map<string, string>();
  const started = Date.now();
  const pub = await publishLoad({
    url: mqttUrl,
    clients: 10,
    devices: 1000,
    size: 1024,
    qos: 1,
    limit: N,
    clientIdPrefix: `p100k-pub-${process.pid}`,
    payloadFor: (device, seq) => {
      const p = telemetrySample(String(device), seq, 1024);
      const s = JSON.parse(p.toString()) as { ts: number; seq: number; temp: number; hum: number; location: string };
      // What the rule outputs: its SELECT's fields in order, the device from the publisher's clientid.
      expected.set(
        `${device}/${seq}`,
        JSON.stringify({ ts: s.ts, device_id: String(device), seq: s.seq, temp: s.temp, humidity: s.hum, location: s.location }),
      );
      return p;
    },
  });
  assert.equal(pub.acked, N, 'Mosquitto acked every publish');
  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 300_000, `${N} messages acked by weir`);
  const elapsed = Date.now() - started;
  const counted = await countPulsarMessages({ admin_url: pulsar.httpUrl, topic, connect_timeout_ms: 10_000 });
  assert.equal(counted.total, N, 'the broker counted exactly N messages');

  const read = await readAll(pulsar.httpUrl, topic, (r) => r.length >= N);
  assert.equal(read.length, N, 'the reader read exactly N messages');
  let raw = 0;
  const byDevice = new Map<string, Read[]>();
  for (const r of read) {
    raw += r.payload.length;
    const v = JSON.parse(r.payload.toString()) as { device_id: string; seq: number };
    const want = expected.get(`${v.device_id}/${v.seq}`);
    assert.ok(want !== undefined, `message ${v.device_id}/${v.seq} was published once`);
    assert.ok(r.payload.equals(Buffer.from(want)), `message ${v.device_id}/${v.seq} is byte-identical to the rule's output`);
    assert.equal(r.key, v.device_id);
    expected.delete(`${v.device_id}/${v.seq}`);
    let l = byDevice.get(v.device_id);
    if (!l) byDevice.set(v.device_id, (l = []));
    l.push(r);
  }
  assert.equal(expected.size, 0, 'every published message is in the topic');
  assert.equal(byDevice.size, 1000);
  const used = new Set<number>();
  for (const [device, rs] of byDevice) {
    assert.equal(new Set(rs.map((r) => r.partition)).size, 1, `device ${device} in one partition`);
    used.add(rs[0]!.partition);
    // A partition's reader delivers in log order, so the order of `rs` is the stored order.
    const seqs = rs.map((r) => (JSON.parse(r.payload.toString()) as { seq: number }).seq);
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, `device ${device} in order`);
  }
  assert.equal(used.size, PARTITIONS, 'every partition used');
  const stats = (await (await fetch(`${pulsar.httpUrl}/admin/v2/persistent/${topic.slice('persistent://'.length)}/partitioned-stats`)).json()) as {
    storageSize: number;
  };
  assert.ok(stats.storageSize < raw, `stored ${stats.storageSize} B < raw ${raw} B: compression took effect`);

  assert.equal(await weir.metric('weir_sink_success_total', 'sink="events"'), N);
  assert.equal(await weir.metric('weir_rule_passed_total', 'rule="telemetry_to_pulsar"'), N);
  assert.equal(await weir.metric('weir_ingest_unacked'), 0);
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0);
  t.diagnostic(
    `${N} messages of 1 KB published and stored in Pulsar in ${elapsed} ms (${Math.round(N / (elapsed / 1000))} msg/s, QoS 1, 1 connection); raw ${raw} B stored as ${stats.storageSize} B`,
  );
  assert.equal(await weir.stop(), 0, 'clean exit on SIGTERM');
  running.splice(running.indexOf(weir), 1);
});
