// Two replicas in one share group (the counters issue's acceptance 2), against real Mosquitto and
// PostgreSQL: 100,000 messages, one replica restarted in the middle. The ledger covers both
// replicas and the restart, so `weir reconcile` across both reports 0 difference.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
let mqttUrlUsed = '';
after(async () => {
  for (const w of running) await w.kill();
  for (const id of ['weir-rep-a', 'weir-rep-b']) if (mqttUrlUsed) await endSessions(mqttUrlUsed, id);
});

test('two replicas, 100,000 messages, one restarted mid-run: weir reconcile across both reports 0 difference', { timeout: 300_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const files = (id: string) => telemetryFiles({ mqttUrl, pgUrl, clientId: id, shareGroup: 'weir-rep' });
  const a = await startWeir(files('weir-rep-a'));
  const b = await startWeir(files('weir-rep-b'));
  running.push(a, b);
  await waitFor(async () => (await a.ready()) && (await b.ready()), 20_000, 'both ready');

  const N = 100_000;
  const publishing = publishLoad({ url: mqttUrl, clients: 8, devices: 1000, size: 200, qos: 1, limit: N, clientIdPrefix: 'rep-pub' });
  await waitFor(async () => (await countRows(pgUrl)) > 20_000, 120_000, 'a fifth stored');
  assert.equal(await b.stop(), 0, 'replica B stops (A is live, so B drains; its restart starts a new session)');
  const b2 = await startWeir(files('weir-rep-b'), { dir: b.dir });
  running.push(b2);
  const pub = await publishing;
  assert.equal(pub.acked, N);
  await waitFor(async () => (await countRows(pgUrl)) >= N, 180_000, `${N} rows`);
  await waitFor(async () => (await a.metric('weir_ingest_unacked')) + (await b2.metric('weir_ingest_unacked')) === 0, 30_000, 'everything acked');

  const rec = await runCli([
    'reconcile',
    '-c',
    join(a.dir, 'weir.yaml'),
    '-m',
    `http://127.0.0.1:${a.httpPort}/metrics`,
    '-m',
    `http://127.0.0.1:${b2.httpPort}/metrics`,
    '--json',
  ]);
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  const report = JSON.parse(rec.stdout) as {
    ok: boolean;
    lines: Array<{ rule: string; weirCount: number; sinkCount: number; difference: number; success: number }>;
  };
  const line = report.lines.find((l) => l.rule === 'telemetry_to_tsdb')!;
  assert.equal(line.sinkCount, N);
  assert.equal(line.weirCount, N, 'the ledger covers both replicas and the restart');
  assert.equal(line.difference, 0);
  assert.ok(line.success < N, "the restarted replica's counters began again: only the ledger spans its restart");
  assert.equal(await a.stop(), 0);
  assert.equal(await b2.stop(), 0);
});
