// weir reconcile --broker against a real Mosquitto: the broker's own $SYS counts are read and
// shown beside weir's (broker-wide, never subtracted), in the table and in --json.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import mqtt from 'mqtt';
import { brokerCounts } from '../../src/reconcile/broker-counts.js';
import { telemetryFiles } from '../e2e/fixtures.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { tempDir } from '../harness/process.js';
import { runCli, writeWeirFiles } from '../harness/weir.js';

test("brokerCounts reads Mosquitto's $SYS counters: messages received grow with what is published", { timeout: 60_000 }, async () => {
  const { url } = await sharedMosquitto();
  const before = await brokerCounts({ url, client_id: 'bc-test' } as never);
  assert.match(before.values.version ?? '', /^mosquitto version \d/);
  const pub = await mqtt.connectAsync(url, { clientId: 'bc-test-pub', protocolVersion: 5 });
  for (let i = 0; i < 50; i++) await pub.publishAsync('bc/test', 'x', { qos: 1 });
  await pub.endAsync();
  // $SYS is refreshed every sys_interval (10 s by default).
  // $SYS is refreshed every sys_interval (10 s by default); a counter never changed is not published yet.
  const received = (c: typeof before) => Number(c.values.publish_received ?? 0);
  let after = before;
  for (let i = 0; i < 25 && received(after) < received(before) + 50; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    after = await brokerCounts({ url, client_id: 'bc-test' } as never);
  }
  assert.ok(received(after) >= received(before) + 50, `publish_received ${before.values.publish_received} → ${after.values.publish_received}`);
  assert.match(after.values.stored_messages ?? '', /^\d+$/);
});

test("weir reconcile --broker prints the broker's own counts beside the ledger check, and in --json", { timeout: 60_000 }, async () => {
  const { url } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const dir = writeWeirFiles(telemetryFiles({ mqttUrl: url, pgUrl }), 9464, tempDir('reconcile-broker'));
  assert.equal((await runCli(['migrate', '-c', join(dir, 'weir.yaml')])).code, 0);
  const text = await runCli(['reconcile', '-c', join(dir, 'weir.yaml'), '--broker']);
  assert.equal(text.code, 0, `${text.stdout}${text.stderr}`);
  assert.match(
    text.stdout,
    /the broker's own counts \(\$SYS, broker-wide since its start\):\n {2}name +value\n {2}version +mosquitto version [^\n]+\n {2}uptime +\d+ seconds\n/,
  );
  const json = await runCli(['reconcile', '-c', join(dir, 'weir.yaml'), '--broker', '--json']);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout) as { ok: boolean; broker: Record<string, string> };
  assert.equal(doc.ok, true);
  assert.match(doc.broker.uptime ?? '', /^\d+ seconds$/);
});
