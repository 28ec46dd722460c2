// `ack: on_receive` against a real Mosquitto: messages are acked at once, but weir still holds
// each one until its outputs are durable, so a sink that cannot take them (here a PostgreSQL URL
// whose port has nothing listening) pauses reading at max_unacked instead of filling memory.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freePort, waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions } from './fixtures.js';

let weir: WeirProcess | undefined;
let mqttUrlUsed = '';
after(async () => {
  await weir?.kill();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, 'weir-on-receive', 1);
});

test('ack: on_receive with the sink unreachable: reading pauses at max_unacked; what was read is acked, the rest stays queued at the broker', {
  timeout: 120_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const deadPort = await freePort();
  const MAX = 200;
  weir = await startWeir({
    config: `
broker:
  url: ${mqttUrl}
  client_id: weir-on-receive
  connections: 1
  share_group: weir-on-receive
  ack: on_receive
  max_unacked: ${MAX}
  publisher_clientid: { topic_level: 2 }
sinks:
  tsdb:
    type: postgres
    url: postgres://weir@127.0.0.1:${deadPort}/none
    connect_timeout_ms: 500
    retry: { initial_ms: 100, max_ms: 500 }
dead_letter: { file: ./dead.jsonl }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
`,
    rules: {
      'telemetry.yaml': `id: telemetry
sql: SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq FROM "device/+/telemetry"
actions:
  - sink: tsdb
    table: telemetry
    columns:
      ts: \${ts}
      device_id: \${device_id}
      seq: \${seq}
`,
    },
  });
  await waitFor(async () => (await weir!.metric('weir_ingest_connected')) === 1, 30_000, 'weir connected to the broker');
  const N = 5_000;
  const pub = await publishLoad({ url: mqttUrl, clients: 2, devices: 50, size: 200, qos: 1, limit: N, clientIdPrefix: `onr-pub-${Date.now()}` });
  assert.equal(pub.acked, N, 'the broker took every message');
  // Reading stops once MAX messages are held; a socket read already in progress may add one
  // chunk's worth (at most 64 KB of 200 B messages) before the pause takes effect.
  await waitFor(async () => (await weir!.metric('weir_ingest_received_total')) >= MAX, 30_000, 'weir read up to its bound');
  await new Promise((r) => setTimeout(r, 2_000));
  const received = await weir.metric('weir_ingest_received_total');
  assert.ok(received >= MAX && received <= MAX + 400, `received ${received}: held at max_unacked ${MAX}, not the ${N} queued`);
  assert.equal(await weir.metric('weir_ingest_acked_total'), received, 'everything read was acked at once');
  assert.equal(await weir.metric('weir_sink_success_total'), 0, 'the sink stored nothing');
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(await weir.metric('weir_ingest_received_total'), received, 'still paused a second later');
});
