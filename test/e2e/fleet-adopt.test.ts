// Adoption with one weir (src/core/fleet/adoption.ts), against a real Mosquitto: the orphan is a session
// the test leaves on the broker in the share group, and its presence record the test writes. While
// the adoption cannot store (the table locked against inserts) the owner says it is live again:
// weir lets go of the session without ending it; once the owner is gone again weir adopts it anew,
// stores its whole queue and ends it.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import mqtt from 'mqtt';
import pg from 'pg';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, sessionPresent, telemetryFiles } from './fixtures.js';
import { telemetrySample } from '../../src/embedded/devices.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string, number]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id, n] of sessions) await endSessions(url, id, n);
});

test('an adoption the owner interrupts lets go of the session whole; adopted again later, its queue is stored and the session ended', {
  timeout: 180_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const group = 'fleet-solo';
  sessions.push([mqttUrl, 'fleet-solo-b', 2], [mqttUrl, 'ghost', 1]);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: 'fleet-solo-b', shareGroup: group, connections: 1 });
  files.config = files.config.replace('  publisher_clientid:', '  fleet: { will_delay_s: 2, adopt_after_s: 2 }\n  publisher_clientid:');
  const b = await startWeir(files);
  running.push(b);
  await waitFor(() => b.ready(), 20_000, 'weir ready');

  // The orphan: a session in the group, offline, that the broker keeps dealing a share to.
  const ghost = await mqtt.connectAsync(mqttUrl, { clientId: 'ghost-0', clean: false, protocolVersion: 5, properties: { sessionExpiryInterval: 3600 } });
  await ghost.subscribeAsync(`$share/${group}/device/+/telemetry`, { qos: 1 });
  await ghost.endAsync();
  const pub = await mqtt.connectAsync(mqttUrl, { clientId: 'fleet-solo-pub', protocolVersion: 5 });
  const N = 1_000;
  for (let i = 1; i <= N; i++) await pub.publishAsync(`device/d${i % 10}/telemetry`, telemetrySample(`d${i % 10}`, i, 120), { qos: 1 });
  await waitFor(async () => (await b.metric('weir_ingest_acked_total')) >= N / 4, 30_000, 'weir storing its share');
  const ownShare = await b.metric('weir_ingest_acked_total');
  await waitFor(async () => (await countRows(pgUrl)) >= ownShare, 30_000, 'its share stored');
  assert.ok(ownShare < N, 'the orphan took a share');

  const record = (state: string) =>
    JSON.stringify({ state, client_id: 'ghost', sessions: ['ghost-0'], connections: 1, incarnation: 'ghost-1', pid: 1, host: 'h', version: 'test', time: '' });
  const topic = `weir/${group}/members/ghost`;
  const locker = new pg.Client({ connectionString: pgUrl });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE telemetry IN SHARE ROW EXCLUSIVE MODE');
    await pub.publishAsync(topic, record('gone'), { qos: 1, retain: true });
    await waitFor(async () => (await b.metric('weir_sessions_adopted_messages_total')) > 0, 30_000, 'weir adopting the queue');
    // The owner is back: weir lets go at once, keeping the session (nothing stored could be acked).
    await pub.publishAsync(topic, record('live'), { qos: 1, retain: true });
    await waitFor(async () => (await b.metric('weir_sessions_adoption_abandoned_total')) === 1, 30_000, 'weir lets go');
    assert.match(b.log(), /"why":\["the owner is live again"\].*adoption given up; the sessions stay/);
    assert.equal(await b.metric('weir_sessions_adopted_total'), 0);
    await locker.query('COMMIT');
  } finally {
    await locker.end();
  }
  // Gone again, for good: adopted, stored, ended.
  await pub.publishAsync(topic, record('gone'), { qos: 1, retain: true });
  await waitFor(async () => (await b.metric('weir_sessions_adopted_total')) === 1, 60_000, 'adopted');
  await waitFor(async () => (await countRows(pgUrl)) >= N, 30_000, `all ${N} stored`);
  const [r] = await query(pgUrl);
  assert.equal(Number(r!.n), N, 'each sample once');
  assert.equal(Number(r!.bad), 0, 'values from the messages');
  // The record is cleared and the session is gone (a probe with session expiry 0 finds none).
  assert.equal(await sessionPresent(mqttUrl, 'ghost-0'), false);
  await pub.endAsync();
  assert.equal(await b.stop(), 0);
});

async function query(pgUrl: string): Promise<Array<{ n: string; bad: string }>> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    // temp is a function of seq (src/embedded/devices.ts): a row whose temp does not follow came from elsewhere.
    const r = await c.query<{ n: string; bad: string }>(
      'SELECT count(DISTINCT (device_id, seq)) AS n, count(*) FILTER (WHERE temp <> round((15 + ((seq * 7919) % 300) / 10.0) * 10) / 10) AS bad FROM telemetry',
    );
    return r.rows;
  } finally {
    await c.end();
  }
}
