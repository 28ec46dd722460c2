// weir reconcile against real Kafka and Pulsar brokers: messages through Mosquitto → weir →
// a Kafka topic and a Pulsar topic; the brokers' own counts (offsets, partitioned-stats) equal
// weir's success counters, and a record written to the topic behind weir's back is reported.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedKafka } from '../harness/kafka.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { waitFor } from '../harness/process.js';
import { sharedPulsar } from '../harness/pulsar.js';
import { runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions } from './fixtures.js';

let weir: WeirProcess | undefined;
let mqttUrlUsed = '';
after(async () => {
  await weir?.kill();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, 'weir-rec-brokers');
});

test("Kafka and Pulsar: reconcile reports 0 difference after a run, and names a record written behind weir's back", { timeout: 240_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const { brokers } = await sharedKafka();
  const { serviceUrl, httpUrl } = await sharedPulsar();
  const suffix = Date.now().toString(36);
  const kafkaTopic = `reconcile-${suffix}`;
  const config = `
broker:
  url: ${mqttUrl}
  client_id: weir-rec-brokers
  share_group: weir-rec-brokers
sinks:
  bus:
    type: kafka
    brokers: [${brokers.join(', ')}]
    create_topics: { partitions: 3, replication_factor: 1 }
  stream:
    type: pulsar
    service_url: ${serviceUrl}
    admin_url: ${httpUrl}
    topic: persistent://public/default/reconcile-${suffix}
    partitions: 2
    create_topic: if_missing
dead_letter: { file: ./dead.jsonl }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`;
  const rule = `id: fanout
sql: SELECT payload.device AS device, payload.seq AS seq FROM "device/+/telemetry"
actions:
  - sink: bus
    topic: ${kafkaTopic}
    key: \${device}
  - sink: stream
    key: \${device}
`;
  weir = await startWeir({ config, rules: { 'fanout.yaml': rule } });
  await waitFor(() => weir!.ready(), 60_000, 'weir ready with both sinks');
  const N = 3_000;
  const pub = await publishLoad({ url: mqttUrl, clients: 2, devices: 30, size: 150, qos: 1, limit: N, clientIdPrefix: 'rec-pub' });
  assert.equal(pub.acked, N);
  await waitFor(async () => (await weir!.metric('weir_ingest_acked_total')) >= N, 60_000, 'every message acked');

  const metricsUrl = `http://127.0.0.1:${weir.httpPort}/metrics`;
  const cfg = join(weir.dir, 'weir.yaml');
  const ok = await runCli(['reconcile', '-c', cfg, '-m', metricsUrl, '--json']);
  assert.equal(ok.code, 0, `${ok.stdout}${ok.stderr}`);
  const report = JSON.parse(ok.stdout) as { lines: Array<{ sink: string; weirCount: number; sinkCount: number; difference: number }> };
  for (const sink of ['bus', 'stream']) {
    const l = report.lines.find((x) => x.sink === sink)!;
    assert.deepEqual([l.weirCount, l.sinkCount, l.difference], [N, N, 0], sink);
  }

  // One record that weir did not write.
  const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: kafkaTopic, messages: [{ value: 'not from weir' }] });
  await producer.disconnect();
  const off = await runCli(['reconcile', '-c', cfg, '-m', metricsUrl]);
  assert.equal(off.code, 1);
  assert.match(off.stderr, new RegExp(`DIFFERENCE rule fanout → bus \\(${kafkaTopic}\\): sink has ${N + 1}, weir stored ${N}, difference 1`));
  assert.equal(await weir.stop(), 0);
  weir = undefined;
});
