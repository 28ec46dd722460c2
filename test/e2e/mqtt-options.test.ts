// Ingest options against a real Mosquitto: MQTT 3.1.1, TLS with a private CA and certificate
// verification on by default, username/password (never logged).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { certificates } from '../harness/certificates.js';
import { startMosquitto, type MosquittoBroker } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, telemetryFiles } from './fixtures.js';

const cleanup: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

async function run(weir: WeirProcess, mqttUrl: string, pgUrl: string, n: number, pubOpts: { username?: string; password?: string; ca?: string } = {}) {
  await waitFor(() => weir.ready(), 20_000, 'weir ready');
  const pub = await publishLoad({
    url: mqttUrl,
    clients: 2,
    devices: 50,
    size: 200,
    qos: 1,
    limit: n,
    clientIdPrefix: `opt-pub-${Date.now()}`,
    connectOptions: pubOpts,
  });
  assert.equal(pub.acked, n);
  await waitFor(async () => (await countRows(pgUrl)) >= n, 60_000, `${n} rows`);
  assert.equal(await countRows(pgUrl), n);
}

test('MQTT 3.1.1 (protocol_version: 4): every message becomes a row', { timeout: 120_000 }, async () => {
  const mq = await startMosquitto();
  cleanup.push(() => mq.stop());
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const files = telemetryFiles({ mqttUrl: mq.url, pgUrl, clientId: 'weir-v311' });
  const weir = await startWeir({ ...files, config: files.config.replace('  share_group:', '  protocol_version: 4\n  share_group:') });
  cleanup.push(() => weir.kill());
  await run(weir, mq.url, pgUrl, 2_000);
  assert.equal(await weir.stop(), 0);
});

test('TLS with a private CA and a password: messages flow, and the password is in no log line or metric', { timeout: 120_000 }, async () => {
  const tls = certificates();
  const user = { username: 'weir', password: 's3cret-Pa55word' };
  const mq: MosquittoBroker = await startMosquitto({ tls, user });
  cleanup.push(() => mq.stop());
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const files = telemetryFiles({ mqttUrl: mq.url, pgUrl, clientId: 'weir-tls' });
  const config = files.config.replace('  share_group:', `  username: weir\n  password: \${MQTT_PASSWORD}\n  tls:\n    ca: ${tls.cafile}\n  share_group:`);
  const weir = await startWeir({ ...files, config }, { env: { MQTT_PASSWORD: user.password, WEIR_LOG_LEVEL: 'debug' } });
  cleanup.push(() => weir.kill());
  await run(weir, mq.url, pgUrl, 1_000, { ...user, ca: tls.cafile });
  const metrics = await (await fetch(`http://127.0.0.1:${weir.httpPort}/metrics`)).text();
  assert.equal(await weir.stop(), 0);
  assert.ok(!weir.log().includes(user.password), 'password not in the log');
  assert.ok(!metrics.includes(user.password), 'password not in /metrics');
});

test('TLS verification is on by default: a broker certificate from an unknown CA is refused, and weir is not ready', { timeout: 60_000 }, async () => {
  const mq = await startMosquitto({ tls: certificates() });
  cleanup.push(() => mq.stop());
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const weir = await startWeir(telemetryFiles({ mqttUrl: mq.url, pgUrl, clientId: 'weir-tls-bad' }));
  cleanup.push(() => weir.kill());
  await waitFor(() => /self.signed|unable to verify|certificate/i.test(weir.log()), 20_000, 'a certificate error in the log');
  assert.equal(await weir.ready(), false);
  assert.equal(await weir.metric('weir_ingest_connected'), 0);
  assert.equal(await weir.stop(), 0);
});
