// `migrate_on_start: true` with the database down, as under an orchestrator that starts both at
// once: weir run stays up (no crash loop), serves /healthz, keeps /readyz not ready with the
// migration's state and reason in its detail, and reads nothing from the broker; when the
// database comes up the migrations run, weir subscribes, and the messages the broker queued
// meanwhile are stored. A SIGTERM while it waits ends it at once, cleanly. Against a real
// PostgreSQL (stopped and started on its port) with an ordinary role, and real Mosquitto.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import mqtt from 'mqtt';
import { telemetrySample } from '../../src/embedded/devices.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { ordinaryRoleDatabase, startPostgres, type PostgresServer } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, telemetryFiles } from './fixtures.js';

/** What each test leaves to undo, undone last first: weir before the sessions and server it used. */
const undo: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const u of undo.reverse()) await u();
});

/** A database for an ordinary role on a server of this test's own, then the server stopped. */
async function downDatabase(): Promise<{ server: PostgresServer; url: string }> {
  const server = await startPostgres();
  undo.push(() => server.dispose());
  const url = await ordinaryRoleDatabase(server.url);
  await server.stop();
  return { server, url };
}

interface Readyz {
  ready: boolean;
  broker?: boolean;
  migration?: { state: string; sink?: string; failed_attempts: number; reason?: string; next_attempt_at?: string };
}

async function readyz(w: WeirProcess): Promise<{ status: number; body: Readyz }> {
  const r = await fetch(`http://127.0.0.1:${w.httpPort}/readyz`);
  return { status: r.status, body: (await r.json()) as Readyz };
}

async function publish(mqttUrl: string, from: number, n: number): Promise<void> {
  const c = await mqtt.connectAsync(mqttUrl, { clientId: `mos-pub-${process.pid}-${from}`, reconnectPeriod: 0 });
  for (let i = from; i < from + n; i++) await c.publishAsync('device/d1/telemetry', telemetrySample('d1', i, 100), { qos: 1 });
  await c.endAsync();
}

test('with the database down weir run stays up and not ready, reads nothing, and migrates, subscribes and stores once the database is up', {
  timeout: 240_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const { server, url } = await downDatabase();
  const clientId = `weir-mos-${process.pid}`;
  undo.push(() => endSessions(mqttUrl, clientId, 1));
  // The session weir will resume, made beforehand, so the broker queues what is published while
  // weir waits: nothing may be read (or acked) before the migrations succeeded.
  const pre = await mqtt.connectAsync(mqttUrl, {
    clientId: `${clientId}-0`,
    clean: false,
    protocolVersion: 5,
    properties: { sessionExpiryInterval: 3600 },
    reconnectPeriod: 0,
  });
  await pre.subscribeAsync(`$share/${clientId}/device/+/telemetry`, { qos: 1 });
  await pre.endAsync();

  const w = await startWeir(telemetryFiles({ mqttUrl, pgUrl: url, clientId, connections: 1 }));
  undo.push(() => w.kill());
  await waitFor(() => w.log().includes('migrations failed'), 30_000, 'the first failed migration logged');
  const waiting = await readyz(w);
  assert.equal(waiting.status, 503);
  assert.equal(waiting.body.ready, false);
  assert.equal(waiting.body.broker, false, 'not connected to the broker while migrations wait');
  assert.equal(waiting.body.migration?.sink, 'tsdb');
  assert.match(waiting.body.migration?.reason ?? '', /^tsdb: .*ECONNREFUSED/);

  await publish(mqttUrl, 1, 20);
  // A few more attempts, weir alive through them, still nothing read.
  await waitFor(async () => ((await readyz(w)).body.migration?.failed_attempts ?? 0) >= 3, 30_000, 'three failed attempts');
  assert.equal(w.svc.proc.exitCode, null, 'weir is still running');
  assert.equal(await w.metric('weir_ingest_received_total'), 0, 'nothing read from the broker');
  const logged = w
    .log()
    .split('\n')
    .filter((l) => l.includes('migrations failed') || l.includes('migrations still failing'));
  assert.equal(logged.length, 1, 'the failure is logged once, not per attempt');
  assert.equal((JSON.parse(logged[0]!) as { level: number }).level, 50, 'at error level');

  await server.start();
  await waitFor(() => w.ready(), 90_000, '/readyz ready once the database is up');
  const applied = w
    .log()
    .split('\n')
    .find((l) => l.includes('migrations applied'));
  assert.ok(applied, w.log());
  assert.ok((JSON.parse(applied) as { failed_attempts?: number }).failed_attempts! >= 3);
  assert.equal((await readyz(w)).body.migration, undefined, 'no migration detail once done');
  await waitFor(async () => (await countRows(url)) === 20, 60_000, 'the 20 messages queued while weir waited stored');
  await publish(mqttUrl, 21, 5);
  await waitFor(async () => (await countRows(url)) === 25, 60_000, 'messages published after the start stored');
  assert.equal(await w.stop(), 0);
});

test('a SIGTERM while migrate_on_start waits for the database ends weir at once, with exit 0', { timeout: 120_000 }, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const { url } = await downDatabase();
  const clientId = `weir-mos-term-${process.pid}`;
  undo.push(() => endSessions(mqttUrl, clientId, 1));
  const files = telemetryFiles({ mqttUrl, pgUrl: url, clientId, connections: 1 });
  // A minute between attempts: the stop must cut the wait short, not sit it out.
  files.config = files.config.replace('retry: { initial_ms: 100, max_ms: 1000 }', 'retry: { initial_ms: 60000, max_ms: 60000 }');
  const w = await startWeir(files);
  undo.push(() => w.kill());
  await waitFor(() => w.log().includes('migrations failed'), 30_000, 'the first failed migration logged');
  const t0 = Date.now();
  assert.equal(await w.stop(), 0, w.log());
  assert.ok(Date.now() - t0 < 30_000, `stopped in ${Date.now() - t0} ms, within the minute's wait`);
  assert.match(w.log(), /"signal":"SIGTERM"/);
  assert.match(w.log(), /"msg":"stopped"/);
  assert.doesNotMatch(w.log(), /open handles keep the process alive/);
});
