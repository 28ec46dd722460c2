// Acceptance 2–4 of the foundation, against real Mosquitto and PostgreSQL: weir killed with
// SIGKILL mid-stream, PostgreSQL down for 30 s mid-stream, and bad input mixed into good traffic.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { telemetrySample } from '../../src/embedded/devices.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres, startPostgres, type PostgresServer } from '../harness/postgres.js';
import { takeDown } from '../harness/outage.js';
import { waitFor } from '../harness/process.js';
import { identityViolations } from '../harness/identities.js';
import { runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, query, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const servers: PostgresServer[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const s of servers) await s.dispose();
  for (const [url, id] of sessions) await endSessions(url, id);
});

/** `weir reconcile` against the instance's own config and /metrics. */
async function reconcile(w: WeirProcess) {
  return runCli(['reconcile', '-c', join(w.dir, 'weir.yaml'), '--metrics', `http://127.0.0.1:${w.httpPort}/metrics`]);
}

async function distinctSamples(pgUrl: string): Promise<number> {
  const [r] = await query<{ n: string }>(pgUrl, 'SELECT count(DISTINCT (device_id, seq)) AS n FROM telemetry');
  return Number(r!.n);
}

test('weir killed with SIGKILL mid-stream: after a restart every published message is in the table exactly once', { timeout: 240_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  sessions.push([mqttUrl, 'weir-kill']);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-kill' });
  const first = await startWeir(files);
  running.push(first);
  await waitFor(() => first.ready(), 20_000, 'weir ready');

  const N = 60_000;
  const publishing = publishLoad({ url: mqttUrl, clients: 6, devices: 300, size: 200, qos: 1, limit: N, clientIdPrefix: 'kill-pub' });
  // Kill it while messages are both stored and still in flight.
  await waitFor(async () => (await countRows(pgUrl)) > 5_000, 60_000, 'some rows stored');
  await first.kill('SIGKILL');
  const storedAtKill = await countRows(pgUrl);
  assert.ok(storedAtKill < N, `killed mid-stream (${storedAtKill} rows at the kill)`);
  const pub = await publishing;
  assert.equal(pub.acked, N);

  // Same client ids: the broker kept both sessions and their queues while weir was away.
  const second = await startWeir(files);
  running.push(second);
  await waitFor(async () => (await distinctSamples(pgUrl)) >= N, 120_000, `all ${N} samples stored`);
  await new Promise((r) => setTimeout(r, 1000));
  assert.equal(await distinctSamples(pgUrl), N, 'nothing lost');
  assert.equal(await countRows(pgUrl), N, 'ON CONFLICT absorbed every redelivery: each sample once');
  const [ledger] = await query<{ n: string }>(pgUrl, 'SELECT sum(rows) AS n FROM weir_ledger');
  assert.equal(Number(ledger!.n), N, 'the ledger, committed with the rows, survived the kill and counts each row once');
  const rec = await reconcile(second);
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.match(rec.stdout, new RegExp(`telemetry_to_tsdb +tsdb +telemetry .* ${N} +${N} +0\n`));
  assert.equal(await second.stop(), 0);
});

test('PostgreSQL stopped for 30 s mid-stream: nothing lost, no crash, retries counted, /readyz not ready while it was down', { timeout: 300_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const server = await startPostgres();
  servers.push(server);
  const pgUrl = await freshDatabase(server.url);
  sessions.push([mqttUrl, 'weir-pgdown']);
  // A 2 s keepalive: the outage lasts many keepalive periods while reading is paused, and the
  // connection must survive them (a redelivered window would be wasted work and duplicates).
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-pgdown' });
  const weir = await startWeir({ ...files, config: files.config.replace('  max_unacked: 5000', '  max_unacked: 5000\n  keepalive_s: 2') });
  running.push(weir);
  await waitFor(() => weir.ready(), 20_000, 'weir ready');

  const N = 40_000;
  // A steady stream (not a burst) so that the outage falls in its middle.
  const publishing = publishLoad({ url: mqttUrl, clients: 4, devices: 200, size: 200, qos: 1, limit: N, intervalMs: 2, clientIdPrefix: 'pgdown-pub' });
  await waitFor(async () => (await countRows(pgUrl)) > 2_000, 60_000, 'some rows stored');
  await takeDown(weir, server, {
    ms: 30_000,
    notReadyMs: 15_000,
    whileDown: async () => assert.deepEqual(identityViolations(await weir.metrics()), [], 'the identities hold while the sink is down'),
  });
  await server.start();
  await publishing;
  await waitFor(async () => (await distinctSamples(pgUrl)) >= N, 120_000, `all ${N} samples stored`);
  await waitFor(() => weir.ready(), 20_000, '/readyz ready again');
  assert.equal(await distinctSamples(pgUrl), N, 'nothing lost');
  assert.ok((await weir.metric('weir_sink_retried_total', 'sink="tsdb"')) > 0, 'retries were counted');
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0, 'an outage dead-letters nothing');
  assert.equal(await weir.metric('weir_ingest_abandoned_total'), 0, 'the MQTT connections survived the outage');
  assert.equal(await weir.metric('weir_sink_success_total'), N, 'no message was delivered twice');
  const rec = await reconcile(weir);
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.equal(await weir.stop(), 0);
});

test('bad input mixed into good traffic: good rows land, each bad message is dead-lettered with its reason, counters agree', { timeout: 240_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  sessions.push([mqttUrl, 'weir-bad']);
  const weir = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-bad', maxPayloadBytes: 512 * 1024 }));
  running.push(weir);
  await waitFor(() => weir.ready(), 20_000, 'weir ready');

  const N = 20_000;
  const kinds = { notJson: 0, badValue: 0, huge: 0 };
  const pub = await publishLoad({
    url: mqttUrl,
    clients: 4,
    devices: 100,
    size: 200,
    qos: 1,
    limit: N,
    clientIdPrefix: 'bad-pub',
    payloadFor: (device, seq) => {
      if (seq % 97 === 0) {
        kinds.notJson++;
        return Buffer.from(`temp=${seq};device=${device}`);
      }
      if (seq % 89 === 0) {
        // "hot" cannot go into a double precision column: the server rejects this row only.
        kinds.badValue++;
        return Buffer.from(JSON.stringify({ device: String(device), seq, ts: Date.now(), temp: 'hot', hum: 1, location: 'x' }));
      }
      if (seq % 151 === 0) {
        kinds.huge++;
        return telemetrySample(String(device), seq, 1024 * 1024);
      }
      return undefined;
    },
  });
  assert.equal(pub.acked, N);
  const bad = kinds.notJson + kinds.badValue + kinds.huge;
  assert.ok(kinds.notJson > 0 && kinds.badValue > 0 && kinds.huge > 0);

  await waitFor(async () => (await weir.metric('weir_ingest_acked_total')) >= N, 120_000, 'every message acked');
  assert.equal(await countRows(pgUrl), N - bad, 'every good message is a row');
  const reasons = await query<{ reason: string; n: string; err: string }>(
    pgUrl,
    'SELECT reason, count(*) AS n, min(error) AS err FROM weir_dead_letter GROUP BY reason ORDER BY reason',
  );
  const byReason = Object.fromEntries(reasons.map((r) => [r.reason, Number(r.n)]));
  assert.deepEqual(byReason, { invalid_payload: kinds.notJson, payload_too_large: kinds.huge, rejected: kinds.badValue });
  const rejected = reasons.find((r) => r.reason === 'rejected')!;
  assert.match(rejected.err, /invalid input syntax for type double precision/);
  const [refused] = await query<{ record: Record<string, unknown> }>(pgUrl, "SELECT record FROM weir_dead_letter WHERE reason = 'rejected' LIMIT 1");
  assert.deepEqual(Object.keys(refused!.record).sort(), ['device_id', 'humidity', 'location', 'seq', 'temp', 'ts'], 'the refused row, column by column');
  assert.equal(refused!.record.temp, 'hot');
  const [huge] = await query<{ len: number }>(pgUrl, "SELECT octet_length(payload) AS len FROM weir_dead_letter WHERE reason = 'payload_too_large' LIMIT 1");
  assert.ok(huge!.len >= 1024 * 1024, 'the original payload is kept whole');

  const rule = 'rule="telemetry_to_tsdb"';
  const matched = await weir.metric('weir_rule_matched_total', rule);
  assert.equal(matched, N - kinds.huge, 'oversized payloads are dead-lettered before any rule');
  assert.equal(await weir.metric('weir_rule_failed_exception_total', rule), kinds.notJson);
  assert.equal(await weir.metric('weir_rule_passed_total', rule), N - kinds.huge - kinds.notJson);
  assert.equal(await weir.metric('weir_sink_success_total', 'sink="tsdb"'), N - bad);
  assert.equal(await weir.metric('weir_sink_dead_lettered_total', 'sink="tsdb"'), kinds.badValue);
  assert.equal(await weir.metric('weir_dead_letter_total'), bad);
  assert.deepEqual(identityViolations(await weir.metrics()), []);
  const rec = await reconcile(weir);
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.match(
    rec.stdout,
    new RegExp(
      `telemetry_to_tsdb +tsdb +telemetry +${N - kinds.huge} +${N - kinds.huge - kinds.notJson} +${kinds.notJson} +${N - bad} +${bad} +${N - bad} +${N - bad} +0\n`,
    ),
  );
  // One row gone behind weir's back: reconcile must say so, name the rule and the difference.
  await query(pgUrl, 'DELETE FROM telemetry WHERE ctid = (SELECT ctid FROM telemetry LIMIT 1)');
  const broken = await reconcile(weir);
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /DIFFERENCE rule telemetry_to_tsdb → tsdb \(telemetry\): sink has \d+, weir stored \d+, difference -1/);
  assert.equal(await weir.stop(), 0);
});
