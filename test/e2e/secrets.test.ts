// No secret in logs, errors or metrics (the operations issue's acceptance 3): weir runs at debug
// level with a broker password, a PostgreSQL URL with a password, a Kafka SASL password and a
// Pulsar token, while every sink is unreachable, so that errors are logged over and over.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { startMosquitto } from '../harness/mosquitto.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';

const SECRETS = { mqtt: 'Mq77-pass-word', pg: 'Pg-s3cret-xyz', kafka: 'Kafka-sasl-p4ss', pulsar: 'eyJhbGciOiJIUzI1NiJ9.pulsar-token-Zq' };
let weir: WeirProcess | undefined;
const stops: Array<() => Promise<unknown>> = [];
after(async () => {
  await weir?.kill();
  for (const s of stops) await s();
});

test('with every sink unreachable, no password or token appears in any log line, /metrics, /sinks or /rules', { timeout: 120_000 }, async () => {
  const mq = await startMosquitto({ user: { username: 'weir', password: SECRETS.mqtt } });
  stops.push(() => mq.stop());
  const config = `
broker:
  url: ${mq.url}
  client_id: weir-secrets
  share_group: weir-secrets
  username: weir
  password: \${T_MQTT_PASSWORD}
  reconnect: { min_ms: 100, max_ms: 500 }
sinks:
  db:
    type: postgres
    url: postgres://weir:\${T_PG_PASSWORD}@127.0.0.1:1/weir
    connect_timeout_ms: 500
    retry: { initial_ms: 50, max_ms: 200 }
  bus:
    type: kafka
    brokers: [127.0.0.1:1]
    sasl: { mechanism: plain, username: weir, password: '\${T_KAFKA_PASSWORD}' }
    retry: { initial_ms: 50, max_ms: 200 }
  stream:
    type: pulsar
    service_url: pulsar://127.0.0.1:1
    topic: persistent://public/default/t
    auth_token: \${T_PULSAR_TOKEN}
    retry: { initial_ms: 50, max_ms: 200 }
dead_letter: { file: ./dead.jsonl }
http: { host: 127.0.0.1, port: {{HTTP_PORT}} }
log_level: debug
`;
  const rule = `id: fanout
sql: SELECT payload.temp AS temp FROM "device/+/telemetry"
payload_format: raw
actions:
  - sink: db
    table: t
    columns: { temp: '\${temp}' }
  - sink: bus
    topic: telemetry
  - sink: stream
`;
  weir = await startWeir(
    { config, rules: { 'fanout.yaml': rule } },
    {
      env: {
        T_MQTT_PASSWORD: SECRETS.mqtt,
        T_PG_PASSWORD: SECRETS.pg,
        T_KAFKA_PASSWORD: SECRETS.kafka,
        T_PULSAR_TOKEN: SECRETS.pulsar,
        WEIR_LOG_LEVEL: 'debug',
      },
    },
  );
  await waitFor(async () => (await weir!.metric('weir_ingest_connected')) === 2, 20_000, 'connected to the broker with the password');
  await publishLoad({ url: mq.url, clients: 1, devices: 5, size: 100, qos: 1, limit: 20, connectOptions: { username: 'weir', password: SECRETS.mqtt } });
  await waitFor(() => (weir!.log().match(/sink down|will retry|failed/g) ?? []).length >= 6, 30_000, 'errors from the unreachable sinks');
  await new Promise((r) => setTimeout(r, 3000));
  const base = `http://127.0.0.1:${weir.httpPort}`;
  const outputs = {
    log: weir.log(),
    metrics: await (await fetch(`${base}/metrics`)).text(),
    sinks: await (await fetch(`${base}/sinks`)).text(),
    rules: await (await fetch(`${base}/rules`)).text(),
  };
  assert.equal(await weir.ready(), false, 'not ready with every sink down');
  for (const [where, text] of Object.entries(outputs)) {
    for (const [name, secret] of Object.entries(SECRETS)) {
      assert.ok(!text.includes(secret), `the ${name} secret appears in ${where}`);
    }
  }
  assert.ok(outputs.log.split('\n').length > 10, 'there was plenty to log');
});
