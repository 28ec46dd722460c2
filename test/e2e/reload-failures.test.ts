// Rule reloads you can see (operators' issue, item 4), on a weir process against real Mosquitto
// and PostgreSQL: a rejected edit is counted in weir_rules_reload_failures_total and shown on
// /rules beside the rule it concerns (which keeps running), a rejected new file as `rejected`,
// and a successful reload clears them.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions, telemetryFiles } from './fixtures.js';

interface RuleEntry {
  id?: string;
  file: string;
  state: string;
  reload_error?: { at: string; errors: string[] };
}

let weir: WeirProcess | undefined;
let mqttUrlUsed = '';
after(async () => {
  await weir?.kill();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, 'weir-reload-fail');
});

test('a rejected rule edit is counted and shown on /rules until a reload succeeds', { timeout: 60_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-reload-fail' });
  weir = await startWeir(files);
  await waitFor(() => weir!.ready(), 20_000, 'weir ready');
  const w = weir;
  const rules = async () => (await (await fetch(`http://127.0.0.1:${w.httpPort}/rules`)).json()) as RuleEntry[];
  const failures = async () => (await w.metrics()).get('weir_rules_reload_failures_total');
  const count = (text: string) => w.log().split(text).length - 1;
  const settle = () => new Promise((r) => setTimeout(r, 600));
  const ruleFile = join(w.dir, 'rules', 'telemetry.yaml');
  const good = files.rules['telemetry.yaml']!;

  assert.equal(await failures(), 0, 'exported at 0 before any failure, so an alert on its increase sees the first');
  assert.equal((await rules())[0]!.reload_error, undefined);

  writeFileSync(ruleFile, good.replace('payload.ts AS ts,', 'payload.ts AS ts,,'));
  await waitFor(() => count('"rule rejected') >= 1, 10_000, 'the broken edit to be rejected');
  await settle();
  assert.equal(await failures(), 1);
  const [entry, ...rest] = await rules();
  assert.equal(rest.length, 0);
  assert.equal(entry!.id, 'telemetry_to_tsdb');
  assert.equal(entry!.state, 'running', 'the old rule runs on');
  assert.equal(entry!.reload_error?.errors.length, 1);
  assert.match(entry!.reload_error!.errors[0]!, /telemetry\.yaml:\d+:\d+: sql: /, 'the error with its file, line and column');
  assert.ok(Date.now() - Date.parse(entry!.reload_error!.at) < 10_000);

  // A new file that does not load either: listed as rejected, nothing of it runs.
  writeFileSync(join(w.dir, 'rules', 'extra.yaml'), 'id: extra\nsql: SELECT FROM\n');
  await waitFor(async () => (await failures()) === 2, 10_000, 'the second rejected reload counted');
  const listed = await rules();
  const extra = listed.find((r) => r.file.endsWith('extra.yaml'));
  assert.equal(extra?.state, 'rejected');
  assert.match(extra!.reload_error!.errors[0]!, /extra\.yaml:2:\d+/);
  assert.ok(listed.find((r) => r.id === 'telemetry_to_tsdb')?.reload_error, 'the first file is still broken');

  rmSync(join(w.dir, 'rules', 'extra.yaml'));
  writeFileSync(ruleFile, good);
  await waitFor(() => count('"rules reloaded"') >= 1, 10_000, 'the fix to be loaded');
  await settle();
  const fixed = await rules();
  assert.deepEqual(
    fixed.map((r) => [r.id, r.state, r.reload_error]),
    [['telemetry_to_tsdb', 'running', undefined]],
  );
  assert.equal(await failures(), 2, 'a counter: the failures stay counted');
  assert.equal(await w.stop(), 0);
  weir = undefined;
});
