// Rules from a Kubernetes ConfigMap, updated while weir runs under load, against real Mosquitto and
// PostgreSQL. rules_dir is laid out and swapped exactly as the kubelet does a mounted ConfigMap
// (test/harness/configmap-volume.ts: timestamped `..<time>` directories, a `..data` symlink renamed
// over atomically, visible files that are symlinks through `..data`), twice: a rule that gains
// `humidity`, then `location`. Checked:
// - each swap reloads the rules exactly once ("rules reloaded" in the log, one per swap), with the
//   one rule, not a second copy from the `..data` or `..<time>` directories (ruleFilesIn skips
//   dot names; a recursive watch sees events in them, which is fine as long as they are one burst);
// - the watch survives the old version's directory being deleted (the second swap is seen too);
// - nothing is lost or stored twice: every message published is a row, once (no ON CONFLICT, so a
//   second store would be a key violation, dead-lettered and counted);
// - every value comes from its message (temp and humidity from the seq the sample was made with);
// - messages published after the second reload follow the newest rule.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ruleFilesIn } from '../../src/config/load.js';
import { telemetrySample } from '../../src/embedded/devices.js';
import { ConfigMapVolume } from '../harness/configmap-volume.js';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir, waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, query, telemetryFiles, telemetryRule } from './fixtures.js';

const CLIENT_ID = 'weir-configmap';
const SIZE = 200;
const BASE = ['ts', 'device_id', 'seq', 'temp'];
const WITH_LOCATION_SQL =
  'SELECT payload.ts AS ts, clientid AS device_id, payload.seq AS seq, payload.temp AS temp, payload.hum AS humidity, payload.location AS location FROM "device/+/telemetry"';

let weir: WeirProcess | undefined;
let mqttUrlUsed = '';
after(async () => {
  await weir?.kill();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, CLIENT_ID);
});

test('rules from a ConfigMap swapped by the kubelet under load: one reload per swap, nothing lost, new messages follow the new rule', {
  timeout: 300_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const dir = tempDir('weir-configmap');
  const volume = new ConfigMapVolume(join(dir, 'rules'));
  volume.write({ 'telemetry.yaml': telemetryRule(BASE) });
  // What weir's loader reads from that layout: the visible file, once.
  assert.deepEqual(ruleFilesIn(volume.dir), [join(volume.dir, 'telemetry.yaml')]);

  weir = await startWeir({ ...telemetryFiles({ mqttUrl, pgUrl, clientId: CLIENT_ID }), rules: {} }, { dir });
  await waitFor(() => weir!.ready(), 30_000, 'weir ready');
  // The whole log (weir.log() is its tail), one JSON object per line.
  const reloads = () =>
    readFileSync(join(dir, 'weir.log'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"rules reloaded"'))
      .map((l) => (JSON.parse(l) as { rules: string[] }).rules);

  const N = 30_000;
  const devices = 150;
  const publishing = publishLoad({ url: mqttUrl, clients: 3, devices, size: SIZE, qos: 1, limit: N, intervalMs: 1, clientIdPrefix: 'configmap-pub' });

  await waitFor(async () => (await countRows(pgUrl)) > 3_000, 60_000, 'rows before the first swap');
  const firstVersion = volume.current();
  volume.write({ 'telemetry.yaml': telemetryRule([...BASE, 'humidity']) });
  await waitFor(() => reloads().length >= 1, 20_000, 'the reload after the first swap');
  const atFirst = await countRows(pgUrl);
  await waitFor(async () => (await countRows(pgUrl)) > atFirst + 3_000, 60_000, 'rows after the first swap');

  volume.write({ 'telemetry.yaml': telemetryRule([...BASE, 'humidity', 'location'], WITH_LOCATION_SQL) });
  assert.notEqual(volume.current(), firstVersion);
  await waitFor(() => reloads().length >= 2, 20_000, 'the reload after the second swap (the old version directory deleted)');

  const pub = await publishing;
  assert.equal(pub.acked, N);
  // After both reloads were logged: a second round, every message of which must follow the newest rule.
  const M = 3_000;
  const late = await publishLoad({
    url: mqttUrl,
    clients: 3,
    devices,
    size: SIZE,
    qos: 1,
    limit: M,
    intervalMs: 1,
    clientIdPrefix: 'configmap-pub',
    seqBase: 1_000_000,
  });
  assert.equal(late.acked, M);
  await waitFor(async () => (await weir!.metric('weir_ingest_acked_total')) >= N + M, 120_000, 'every message acked');

  assert.deepEqual(reloads(), [['telemetry_to_tsdb'], ['telemetry_to_tsdb']], 'one reload per swap, each with the one rule');
  assert.equal(await weir.metric('weir_rules_reload_failures_total'), 0, 'no reload rejected (a duplicate rule id would be)');
  assert.doesNotMatch(weir.log(), /watching the rules directory failed/);

  assert.equal(await countRows(pgUrl), N + M, 'every message stored');
  const [d] = await query<{ n: string }>(pgUrl, 'SELECT count(DISTINCT (device_id, seq)) AS n FROM telemetry');
  assert.equal(Number(d!.n), N + M, 'each message once');
  assert.equal(await weir.metric('weir_sink_dead_lettered_total'), 0, 'nothing stored twice (no key violation)');
  assert.equal(await weir.metric('weir_rule_matched_total', 'rule="telemetry_to_tsdb"'), N + M, 'the counters went on across reloads');

  // Content: each value from its own message (telemetrySample derives temp and hum from seq; the
  // location pads the sample to SIZE bytes).
  const rows = await query<{ device_id: string; seq: number; temp: number; humidity: number | null; location: string | null }>(
    pgUrl,
    'SELECT device_id, seq, temp, humidity, location FROM telemetry',
  );
  let withHumidity = 0;
  let withLocation = 0;
  for (const r of rows) {
    const sample = JSON.parse(telemetrySample(r.device_id, r.seq, SIZE, 0).toString()) as { temp: number; hum: number; location: string };
    const where = `device ${r.device_id} seq ${r.seq}`;
    assert.equal(r.temp, sample.temp, where);
    if (r.humidity !== null) {
      assert.equal(r.humidity, sample.hum, where);
      withHumidity++;
    }
    if (r.location !== null) {
      assert.ok(r.humidity !== null && /^x*$/.test(r.location), `${where}: location only with the third rule`);
      withLocation++;
    }
    if (r.seq > 1_000_000) assert.ok(r.humidity !== null && r.location !== null, `${where}: published after the last reload, stored by the newest rule`);
  }
  assert.ok(rows.length - withHumidity > 3_000, 'rows before the first swap have no humidity');
  assert.ok(withHumidity - withLocation > 0, 'rows between the swaps have humidity and no location');
  assert.ok(withLocation >= M);
  assert.equal(await weir.stop(), 0);
  weir = undefined;
});
