// What is missing at the tail, against real Mosquitto and PostgreSQL and weir processes (issue 35).
// Two weirs write one telemetry table: A stores the devices of device/+/telemetry, B those of
// site-b/+/telemetry (a replica per site). B is killed with SIGKILL and not restarted while its
// device goes on publishing: the broker acks every message to the device and queues it in B's
// session, where nothing stores it. The gap check sees nothing (no row follows the loss);
// staleness sees the device's silence against its interval and estimates the messages lost. Then
// what weir itself holds: read from a running A (held while its table is locked), and a weir that
// cannot answer — killed, or frozen with SIGSTOP — is "could not read", exit 3.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import mqtt from 'mqtt';
import pg from 'pg';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { ROOT, runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, query, telemetryFiles } from '../e2e/fixtures.js';

const running: WeirProcess[] = [];
let mqttUrlUsed = '';
after(async () => {
  for (const w of running) {
    w.svc.proc.kill('SIGCONT');
    await w.kill();
  }
  for (const id of ['weir-tail-a', 'weir-tail-b']) if (mqttUrlUsed) await endSessions(mqttUrlUsed, id, 1);
});

/** The devices' own clock: sample n of every device is stamped BASE + n seconds. */
const BASE = Date.parse('2026-01-05T10:00:00Z');
const stamp = (n: number) => new Date(BASE + n * 1000).toISOString();

/** Publishes samples [from, to) of each device (QoS 1: resolved when the broker has acked each). */
async function publish(client: mqtt.MqttClient, devices: Array<{ id: string; topic: string }>, from: number, to: number): Promise<void> {
  for (let n = from; n < to; n++) {
    await Promise.all(
      devices.map((d) =>
        client.publishAsync(d.topic, JSON.stringify({ device: d.id, seq: n, ts: BASE + n * 1000, temp: 20, hum: 40, location: 'hall' }), { qos: 1 }),
      ),
    );
  }
}

test('a replica killed while its device goes on publishing: the device is stale with the lost count; a weir that cannot answer is exit 3', {
  timeout: 300_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const a = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-tail-a', connections: 1 }));
  running.push(a);
  const siteB = readFileSync(join(ROOT, 'rules/telemetry.yaml'), 'utf8')
    .replace('id: telemetry_to_tsdb', 'id: site_b_to_tsdb')
    .replace('FROM "device/+/telemetry"', 'FROM "site-b/+/telemetry"');
  const bFiles = telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-tail-b', connections: 1 });
  const b = await startWeir({ config: bFiles.config, rules: { 'site-b.yaml': siteB } });
  running.push(b);
  await waitFor(async () => (await a.ready()) && (await b.ready()), 60_000, 'both weirs ready');

  const devices = [
    { id: 'a1', topic: 'device/a1/telemetry' },
    { id: 'a2', topic: 'device/a2/telemetry' },
    { id: 'a3', topic: 'device/a3/telemetry' },
    { id: 'b1', topic: 'site-b/b1/telemetry' },
  ];
  const client = await mqtt.connectAsync(mqttUrl, { clientId: 'tail-devices', protocolVersion: 5, reconnectPeriod: 0 });
  try {
    await publish(client, devices, 0, 60);
    await waitFor(async () => (await countRows(pgUrl)) === 240, 120_000, 'the first 60 samples of each device stored');

    // B dies with its share of the traffic in its session, and nobody restarts it.
    await b.kill('SIGKILL');
    await publish(client, devices, 60, 100);
    await waitFor(async () => (await countRows(pgUrl)) === 240 + 3 * 40, 120_000, "A's devices stored to sample 99");
  } finally {
    await client.endAsync();
  }
  // Every one of b1's last 40 messages was acked by the broker to the device, and none is stored.
  const [b1] = await query<{ n: string; last: string }>(pgUrl, `SELECT count(*) AS n, max(seq) AS last FROM telemetry WHERE device_id = 'b1'`);
  assert.deepEqual([Number(b1!.n), Number(b1!.last)], [60, 59]);

  const config = join(a.dir, 'weir.yaml');
  const until = stamp(100); // the devices' "now": the end of their 100th second
  const reconcile = (...args: string[]) => runCli(['reconcile', '-c', config, '--sequence', 'telemetry:device_id:seq', '--until', until, ...args]);

  const reported = await reconcile();
  assert.equal(reported.code, 0, `stale keys are reported, not a failure, unless --stale-after is given:\n${reported.stdout}${reported.stderr}`);
  assert.match(reported.stdout, /no gaps in the sequence numbers\n$/, 'the gap check cannot see a loss at the tail');
  assert.match(reported.stdout, /\ntelemetry +4 +1 +40\n/, '4 keys timed, 1 stale, 40 estimated missing');
  // b1: last row at sample 59, now at 100: 41 s silent, 41 intervals of 1 s; 60..99 were due.
  assert.match(
    reported.stdout,
    new RegExp(`stalest keys of telemetry:device_id:seq:ts \\(1 key stale\\):\\n.*\\n {2}b1 +60 +${stamp(59).replace(/[.]/g, '\\.')} +41 s +1 s +41\\.0 +40\n`),
  );
  assert.match(reported.stderr, /^STALE: telemetry: 1 key silent for more than 10 intervals, about 40 messages expected and missing$/m);

  const strict = await reconcile('--stale-after', '10', '--json');
  assert.equal(strict.code, 1, `--stale-after makes a stale key a finding:\n${strict.stdout}${strict.stderr}`);
  const doc = JSON.parse(strict.stdout) as {
    ok: boolean;
    sequence: Array<{ missing: number; staleness: { staleKeys: number; missing: number; stalest: Array<{ key: string; missing: number }> } }>;
  };
  assert.equal(doc.ok, false);
  assert.deepEqual(
    [doc.sequence[0]!.missing, doc.sequence[0]!.staleness.staleKeys, doc.sequence[0]!.staleness.stalest.map((k) => [k.key, k.missing])],
    [0, 1, [['b1', 40]]],
  );
  const lenient = await reconcile('--stale-after', '50');
  assert.equal(lenient.code, 0, `41 intervals is within 50:\n${lenient.stdout}${lenient.stderr}`);

  // What A holds: its table locked against inserts, a message waits unacked; reconcile shows it.
  const locker = new pg.Client({ connectionString: pgUrl });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE telemetry IN SHARE MODE'); // blocks INSERT, not count(*)
    const late = await mqtt.connectAsync(mqttUrl, { clientId: 'tail-late', protocolVersion: 5, reconnectPeriod: 0 });
    await publish(late, devices.slice(0, 1), 100, 103);
    await late.endAsync();
    await waitFor(async () => (await a.metric('weir_ingest_held')) === 3, 60_000, 'A holds the 3 messages');
    await waitFor(async () => (await a.metric('weir_ingest_oldest_unacked_age_seconds')) >= 1, 60_000, 'the oldest has waited a second');
    const metricsA = `http://127.0.0.1:${a.httpPort}/metrics`;
    const held = await runCli(['reconcile', '-c', config, '-m', metricsA]);
    assert.equal(held.code, 0, `${held.stdout}${held.stderr}`);
    assert.match(
      held.stdout,
      new RegExp(
        `held by weir \\(received, not yet stored or dead-lettered\\), per connection:\\n.*\\n {2}${metricsA.replace(/[.]/g, '\\.')} +weir-tail-a-0 +yes +3 +\\d[\\d.]* s\\n {2}3 messages held in all\\n`,
      ),
    );
    const json = JSON.parse((await runCli(['reconcile', '-c', config, '-m', metricsA, '--json'])).stdout) as {
      held: Array<{ connection: string; held: number; oldestUnackedS: number }>;
    };
    assert.deepEqual(
      json.held.map((h) => [h.connection, h.held, h.oldestUnackedS >= 1]),
      [['weir-tail-a-0', 3, true]],
    );
  } finally {
    await locker.query('ROLLBACK');
    await locker.end();
  }
  await waitFor(async () => (await a.metric('weir_ingest_held')) === 0, 60_000, 'A stores them once the lock is gone');
  assert.equal(await a.metric('weir_ingest_oldest_unacked_age_seconds'), 0);

  // B is dead: its /metrics refuses the connection.
  const metricsB = `http://127.0.0.1:${b.httpPort}/metrics`;
  const dead = await runCli(['reconcile', '-c', config, '-m', `http://127.0.0.1:${a.httpPort}/metrics`, '-m', metricsB]);
  assert.equal(dead.code, 3, `${dead.stdout}${dead.stderr}`);
  assert.match(dead.stderr, new RegExp(`^error: reading --metrics ${metricsB.replace(/[.]/g, '\\.')}: connect ECONNREFUSED`, 'm'));
  assert.equal(dead.stdout, `not reconciled: could not read ${metricsB}\n`);
  assert.doesNotMatch(dead.stdout, /^reconciled/m);

  // A frozen (SIGSTOP): the kernel accepts the connection, nothing answers.
  a.svc.proc.kill('SIGSTOP');
  try {
    const frozen = await runCli(['reconcile', '-c', config, '-m', `http://127.0.0.1:${a.httpPort}/metrics`, '--json']);
    assert.equal(frozen.code, 3, `${frozen.stdout}${frozen.stderr}`);
    assert.match(frozen.stderr, /: no answer within 10 s \(a weir stopped or stuck answers nothing\)\n/);
    const out = JSON.parse(frozen.stdout) as { ok: boolean; metricsUnread: Array<{ url: string; error: string }> };
    assert.equal(out.ok, false);
    assert.equal(out.metricsUnread.length, 1);
  } finally {
    a.svc.proc.kill('SIGCONT');
  }
  assert.equal(await a.stop(), 0);
});
