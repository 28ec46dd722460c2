// Live reload of rules/ during a run against real Mosquitto and PostgreSQL (the operations
// issue's acceptance 2): a field added, then a broken edit, then a fix. The broken edit is
// rejected with its line and column and the running rule keeps running; no message is lost or
// stored twice; the new field appears in rows after the reload; the rule's counters go on.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, query, telemetryFiles, telemetryRule as rule } from './fixtures.js';

let weir: WeirProcess | undefined;
let mqttUrlUsed = '';
after(async () => {
  await weir?.kill();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, 'weir-reload');
});

test('rules edited during a run: a field added, a broken edit rejected with line and column, a fix; nothing lost or stored twice', {
  timeout: 240_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const base = ['ts', 'device_id', 'seq', 'temp'];
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-reload' });
  weir = await startWeir({ ...files, rules: { 'telemetry.yaml': rule(base) } });
  await waitFor(() => weir!.ready(), 20_000, 'weir ready');
  const ruleFile = join(weir.dir, 'rules', 'telemetry.yaml');
  const reloads = () =>
    weir!
      .log()
      .split('\n')
      .filter((l) => l.includes('"rules reloaded"')).length;

  const N = 30_000;
  // No ON CONFLICT in these rules: a message stored twice would be a primary-key violation,
  // dead-lettered and counted, so "stored once" is checked, not absorbed.
  const publishing = publishLoad({ url: mqttUrl, clients: 3, devices: 150, size: 200, qos: 1, limit: N, intervalMs: 1, clientIdPrefix: 'reload-pub' });

  await waitFor(async () => (await countRows(pgUrl)) > 2_000, 60_000, 'rows before the first edit');
  writeFileSync(ruleFile, rule([...base, 'humidity']));
  await waitFor(() => reloads() >= 1, 20_000, 'the first reload');
  await waitFor(async () => (await countRows(pgUrl)) > 6_000, 60_000, 'rows after the first edit');

  writeFileSync(ruleFile, rule([...base, 'humidity'], 'SELECT payload.ts AS ts,, clientid AS device_id FROM "device/+/telemetry"'));
  await waitFor(() => weir!.log().includes('rule rejected'), 20_000, 'the broken edit to be rejected');
  const rejected = weir
    .log()
    .split('\n')
    .find((l) => l.includes('rule rejected'))!;
  assert.match(rejected, /telemetry\.yaml:3:\d+: sql: /, 'the rejection names file, line and column');
  const rowsAtBreak = await countRows(pgUrl);
  await waitFor(async () => (await countRows(pgUrl)) > rowsAtBreak + 2_000, 60_000, 'the running rule to keep storing after the broken edit');

  writeFileSync(
    ruleFile,
    rule([...base, 'humidity'])
      .replace('payload.hum AS humidity', 'payload.hum AS humidity, payload.location AS location')
      .replace('      humidity: ${humidity}', '      humidity: ${humidity}\n      location: ${location}'),
  );
  await waitFor(() => reloads() >= 2, 20_000, 'the fix to be loaded');

  const pub = await publishing;
  assert.equal(pub.acked, N);
  await waitFor(async () => (await weir!.metric('weir_ingest_acked_total')) >= N, 120_000, 'every message acked');

  assert.equal(await countRows(pgUrl), N, 'every message stored');
  const [d] = await query<{ n: string }>(pgUrl, 'SELECT count(DISTINCT (device_id, seq)) AS n FROM telemetry');
  assert.equal(Number(d!.n), N);
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0, 'nothing stored twice (no key violation)');
  assert.equal(await weir.metric('weir_sink_success_total'), N, 'each message written once');
  assert.equal(await weir.metric('weir_rule_matched_total', 'rule="telemetry_to_tsdb"'), N, 'the counters went on across reloads');
  const [h] = await query<{ with_h: string; without_h: string; with_loc: string }>(
    pgUrl,
    'SELECT count(*) FILTER (WHERE humidity IS NOT NULL) AS with_h, count(*) FILTER (WHERE humidity IS NULL) AS without_h, count(*) FILTER (WHERE location IS NOT NULL) AS with_loc FROM telemetry',
  );
  assert.ok(Number(h!.without_h) > 2_000, 'rows before the edit have no humidity');
  assert.ok(Number(h!.with_h) > 2_000, 'rows after the edit have it');
  assert.ok(Number(h!.with_loc) > 0, 'the fixed rule added location');
  assert.equal(await weir.stop(), 0);
  weir = undefined;
});
