// The mqtt (republish) sink end to end against real brokers: devices publish to a broker, weir (its
// own process) reads them through its share group and republishes each output with the templated
// topic, QoS, retain, properties and user properties; an independent MQTT 5 subscriber reads every
// republished message back from the broker and checks each one. On Mosquitto and HiveMQ CE, and a
// kill -9 of weir mid-stream with nothing lost.
//   npm test -- test/sinks/mqtt-e2e.int.test.ts
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import mqtt, { type IPublishPacket, type MqttClient } from 'mqtt';
import { TELEMETRY_TO_SINK_SQL, endSessions } from '../e2e/fixtures.js';
import { sharedHivemq } from '../harness/hivemq.js';
import { fileMosquitto } from '../harness/mosquitto.js';
import { tempDir, waitFor } from '../harness/process.js';
import { startWeir, type WeirFiles, type WeirProcess } from '../harness/weir.js';
import { DEVICES, publishExpected } from './message-sink-e2e.js';

const RULE = 'alerts';
const running: WeirProcess[] = [];
const sessions: Array<[string, string, number]> = [];
const clients: MqttClient[] = [];
const dirs: string[] = [];
const mosquitto = fileMosquitto();
after(async () => {
  for (const w of running) await w.kill();
  for (const c of clients) await c.endAsync(true).catch(() => undefined);
  for (const [url, id, n] of sessions) await endSessions(url, id, n).catch(() => undefined);
  await mosquitto.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * weir reading device/+/telemetry and republishing each sample to the same broker: as is to
 * alerts/<device> (QoS 1, properties, user properties), and its seq retained on last/<device> (QoS 0).
 */
function republishFiles(o: { mqttUrl: string; clientId: string; prefix: string; dir: string }): WeirFiles {
  return {
    config: `
broker:
  url: ${o.mqttUrl}
  client_id: ${o.clientId}
  connections: 2
  share_group: ${o.clientId}
  max_unacked: 5000
  reconnect: { min_ms: 100, max_ms: 1000 }
  publisher_clientid: { topic_level: 2 }
sinks:
  republish:
    type: mqtt
    batch: { max_items: 500, max_delay_ms: 10 }
    retry: { initial_ms: 100, max_ms: 1000 }
dead_letter: { file: ${join(o.dir, 'dead-letters.jsonl')} }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
    rules: {
      [`${RULE}.yaml`]: `
id: ${RULE}
sql: |
  ${TELEMETRY_TO_SINK_SQL}
actions:
  - sink: republish
    topic: ${o.prefix}/alerts/\${device_id}
    qos: 1
    properties: { content_type: application/json, message_expiry_interval: 3600 }
    user_properties: { device: '\${device_id}', seq: '\${seq}', rule: ${RULE} }
  - sink: republish
    topic: ${o.prefix}/last/\${device_id}
    qos: 0
    retain: true
    payload: '\${seq}'
`,
    },
  };
}

interface Received {
  topic: string;
  payload: Buffer;
  qos: number;
  retain: boolean;
  properties: IPublishPacket['properties'];
}

/** An independent MQTT 5 subscriber to `filter` (QoS 1), collecting what it receives. */
async function subscriber(url: string, filter: string, id: string): Promise<Received[]> {
  const got: Received[] = [];
  const c = await mqtt.connectAsync(url, { clientId: id, protocolVersion: 5, clean: true, reconnectPeriod: 0 });
  clients.push(c);
  c.on('message', (topic, payload, packet) => got.push({ topic, payload, qos: packet.qos, retain: packet.retain, properties: packet.properties }));
  await c.subscribeAsync(filter, { qos: 1 });
  return got;
}

/** Each alert is an expected output, as published, with its templated topic, QoS, properties; every expected output came at least once. */
function checkAlerts(got: Received[], expected: Map<string, string>, prefix: string): { duplicates: number } {
  const seen = new Set<string>();
  let duplicates = 0;
  for (const m of got) {
    const v = JSON.parse(m.payload.toString()) as { device_id: string; seq: number };
    const key = `${v.device_id}/${v.seq}`;
    const want = expected.get(key);
    assert.ok(want !== undefined, `alert ${key} was published`);
    assert.equal(m.payload.toString(), want, `alert ${key} is the rule's output, byte for byte`);
    assert.equal(m.topic, `${prefix}/alerts/${v.device_id}`);
    assert.equal(m.qos, 1);
    assert.equal(m.retain, false);
    assert.equal(m.properties?.contentType, 'application/json');
    const expiry = m.properties?.messageExpiryInterval;
    assert.ok(expiry !== undefined && expiry <= 3600 && expiry > 3000, `message expiry ${expiry}`);
    assert.deepEqual({ ...m.properties?.userProperties }, { device: v.device_id, seq: String(v.seq), rule: RULE });
    if (seen.has(key)) duplicates++;
    seen.add(key);
  }
  assert.deepEqual(
    [...expected.keys()].filter((k) => !seen.has(k)),
    [],
    'every published message was republished',
  );
  return { duplicates };
}

/** The retained last/<device>: one per device, flagged retained, QoS 0, holding one of the device's seqs. */
async function checkRetained(url: string, prefix: string, expected: Map<string, string>, id: string): Promise<void> {
  const retained = await subscriber(url, `${prefix}/last/+`, id);
  await waitFor(() => retained.length >= DEVICES, 30_000, `${DEVICES} retained messages`);
  const seqs = new Map<string, Set<string>>();
  for (const k of expected.keys()) {
    const [d, s] = k.split('/') as [string, string];
    let set = seqs.get(d);
    if (!set) seqs.set(d, (set = new Set()));
    set.add(s);
  }
  assert.equal(retained.length, DEVICES);
  for (const m of retained) {
    const device = m.topic.slice(`${prefix}/last/`.length);
    assert.equal(m.retain, true, `${m.topic} retained`);
    assert.equal(m.qos, 0);
    assert.ok(seqs.get(device)?.has(m.payload.toString()), `${m.topic} holds a seq of ${device} (${m.payload.toString()})`);
  }
}

const BROKERS: Array<[string, () => Promise<string>]> = [
  ['Mosquitto', () => mosquitto.url()],
  ['HiveMQ CE', async () => (await sharedHivemq()).url],
];

for (const [name, urlOf] of BROKERS) {
  describe(`republish on ${name}`, { timeout: 300_000 }, () => {
    it('every message republished once with its templated topic, QoS 1, properties and user properties; the retained copy per device', async (t) => {
      const url = await urlOf();
      const tag = `${name.split(' ')[0]!.toLowerCase()}-${process.pid}`;
      const prefix = `republish-${tag}`;
      const clientId = `weir-republish-${tag}`;
      sessions.push([url, clientId, 2]);
      const dir = tempDir('weir-mqtt-e2e');
      dirs.push(dir);
      const alerts = await subscriber(url, `${prefix}/alerts/#`, `checker-${tag}`);
      const weir = await startWeir(republishFiles({ mqttUrl: url, clientId, prefix, dir }), { dir });
      running.push(weir);
      await waitFor(() => weir.ready(), 30_000, 'weir ready');

      const N = 10_000;
      const { pub, expected } = await publishExpected(url, N, 200, `republish-pub-${tag}`);
      assert.equal(pub.acked, N, 'the broker acked every publish');
      await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 120_000, `${N} messages acked by weir`);
      await waitFor(() => alerts.length >= N, 30_000, `${N} alerts read back`);
      const { duplicates } = checkAlerts(alerts, expected, prefix);
      assert.equal(duplicates, 0, 'no failure, no duplicate');
      assert.equal(alerts.length, N);
      await checkRetained(url, prefix, expected, `retained-${tag}`);
      assert.equal(await weir.metric('weir_sink_success_total', 'sink="republish"'), 2 * N);
      assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0);
      assert.equal(await weir.metric('weir_ingest_unacked'), 0);
      t.diagnostic(`${N} messages republished twice each and read back from ${name}`);
      assert.equal(await weir.stop(), 0, 'clean exit on SIGTERM');
      running.splice(running.indexOf(weir), 1);
    });
  });
}

describe('republish across a kill -9 of weir', { timeout: 300_000 }, () => {
  it('weir killed mid-stream and started again on the same sessions: every message republished at least once', async (t) => {
    const url = await mosquitto.url();
    const tag = `kill-${process.pid}`;
    const prefix = `republish-${tag}`;
    const clientId = `weir-republish-${tag}`;
    sessions.push([url, clientId, 2]);
    const dir = tempDir('weir-mqtt-kill');
    dirs.push(dir);
    const alerts = await subscriber(url, `${prefix}/alerts/#`, `checker-${tag}`);
    const files = republishFiles({ mqttUrl: url, clientId, prefix, dir });
    const first = await startWeir(files, { dir });
    running.push(first);
    await waitFor(() => first.ready(), 30_000, 'weir ready');

    const N = 20_000;
    const publishing = publishExpected(url, N, 200, `republish-pub-${tag}`);
    await waitFor(async () => (await first.metric('weir_ingest_acked_total')) >= N / 4, 120_000, 'a quarter acked');
    await first.kill('SIGKILL');
    running.splice(running.indexOf(first), 1);
    const killedAt = alerts.length;
    const second = await startWeir(files, { dir });
    running.push(second);
    const { pub, expected } = await publishing;
    assert.equal(pub.acked, N, 'the broker acked every publish');
    await waitFor(
      () => new Set(alerts.map((m) => m.payload.toString())).size >= N,
      180_000,
      `${N} distinct alerts read back (${new Set(alerts.map((m) => m.payload.toString())).size} so far)`,
    );
    const { duplicates } = checkAlerts(alerts, expected, prefix);
    t.diagnostic(`${N} messages, weir killed after ${killedAt} alerts: all ${N} republished, ${duplicates} duplicates (redelivered after the kill)`);
    assert.equal(await second.metric('weir_sink_dead_lettered_total'), 0);
    assert.equal(await second.stop(), 0);
    running.splice(running.indexOf(second), 1);
  });
});
