// Acceptance 1 of the foundation: 100,000 QoS 1 messages from 1,000 device topics through a real
// Mosquitto become exactly 100,000 rows in a real PostgreSQL, and the counters say the same; and
// (the counters issue's acceptance 3) /metrics scraped all through the run keeps every identity.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { identityViolations } from '../harness/identities.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, query, telemetryFiles } from './fixtures.js';

let weir: WeirProcess | undefined;
let mqttUrlUsed: string | undefined;
after(async () => {
  await weir?.stop();
  if (mqttUrlUsed) await endSessions(mqttUrlUsed, 'weir-100k');
});

test('100,000 QoS 1 messages from 1,000 device topics become exactly 100,000 rows, every counter agrees, and the identities hold at every scrape', {
  timeout: 240_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  weir = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-100k' }));
  await waitFor(() => weir!.ready(), 20_000, 'weir ready');

  const N = 100_000;
  // Scrape /metrics all through the run: the counters' identities must hold at every scrape.
  let scraping = true;
  let midRun = 0;
  const violations: string[] = [];
  const scraper = (async () => {
    while (scraping) {
      const m = await weir!.metrics();
      violations.push(...identityViolations(m));
      const stored = [...m].filter(([k]) => k.startsWith('weir_sink_success_total')).reduce((a, [, v]) => a + v, 0);
      if (stored > 0 && stored < N) midRun++;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const pub = await publishLoad({ url: mqttUrl, clients: 10, devices: 1000, size: 200, qos: 1, limit: N });
  assert.equal(pub.acked, N, 'the broker acked every publish');

  await waitFor(async () => (await countRows(pgUrl)) >= N && (await weir!.metric('weir_ingest_acked_total')) >= N, 120_000, `${N} rows`);
  scraping = false;
  await scraper;
  assert.ok(midRun >= 5, `${midRun} scrapes while the run was in progress`);
  assert.deepEqual(violations.slice(0, 5), [], 'every identity held at every scrape');
  // Give anything extra (a duplicate) a moment to show up before counting exactly.
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await countRows(pgUrl), N);
  const [distinct] = await query<{ n: string }>(pgUrl, 'SELECT count(DISTINCT (device_id, seq)) AS n FROM telemetry');
  assert.equal(Number(distinct!.n), N, 'every (device, seq) once');
  const [devices] = await query<{ n: string }>(pgUrl, 'SELECT count(DISTINCT device_id) AS n FROM telemetry');
  assert.equal(Number(devices!.n), 1000);

  const rule = 'rule="telemetry_to_tsdb"';
  assert.equal(await weir.metric('weir_rule_matched_total', rule), N);
  assert.equal(await weir.metric('weir_rule_passed_total', rule), N);
  assert.equal(await weir.metric('weir_rule_failed_total', rule), 0);
  assert.equal(await weir.metric('weir_sink_success_total', 'sink="tsdb"'), N);
  assert.equal(await weir.metric('weir_ingest_received_total'), N);
  assert.equal(await weir.metric('weir_ingest_acked_total'), N);
  assert.equal(await weir.metric('weir_ingest_unacked'), 0);
  const [ledger] = await query<{ n: string }>(pgUrl, "SELECT sum(rows) AS n FROM weir_ledger WHERE rule_id = 'telemetry_to_tsdb' AND table_name = 'telemetry'");
  assert.equal(Number(ledger!.n), N, 'the ledger counted every committed row');
  const [dl] = await query<{ n: string }>(pgUrl, 'SELECT count(*) AS n FROM weir_dead_letter');
  assert.equal(Number(dl!.n), 0);
  const rules = (await (await fetch(`http://127.0.0.1:${weir.httpPort}/rules`)).json()) as Array<{
    id: string;
    state: string;
    sql: string;
    counters: Record<string, number>;
  }>;
  assert.equal(rules[0]!.id, 'telemetry_to_tsdb');
  assert.equal(rules[0]!.state, 'running');
  assert.match(rules[0]!.sql, /FROM "device\/\+\/telemetry"/);
  assert.deepEqual([rules[0]!.counters.matched, rules[0]!.counters.passed, rules[0]!.counters.actionsSuccess], [N, N, N]);
  const sinks = (await (await fetch(`http://127.0.0.1:${weir.httpPort}/sinks`)).json()) as Array<{ name: string; type: string; up: boolean }>;
  assert.deepEqual(
    sinks.map((x) => [x.name, x.type, x.up]),
    [['tsdb', 'postgres', true]],
  );
  const stopAt = Date.now();
  assert.equal(await weir.stop(), 0, 'clean exit on SIGTERM');
  // Nothing is in flight: shutdown must not wait out its grace period (a leaked timer once did).
  assert.ok(Date.now() - stopAt < 15_000, `stopped in ${Date.now() - stopAt} ms`);
  weir = undefined;
});
