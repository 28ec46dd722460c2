// Shutdown has an end, against real Mosquitto and PostgreSQL: a message whose write never commits
// (its table locked by another transaction, so the INSERT waits) is held; SIGTERM with
// --grace-ms 2000 stops weir within the grace period and a margin, without acking the message,
// and the broker gives it to the next weir with the same client id, which stores it. And a grace
// period that is not a number is refused before anything starts.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, test } from 'node:test';
import mqtt from 'mqtt';
import pg from 'pg';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { countRows, endSessions, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: Array<[string, string]> = [];
after(async () => {
  for (const w of running) await w.kill();
  for (const [url, id] of sessions) await endSessions(url, id, 1);
});

test('--grace-ms that is not a whole number: exit 2, one line naming the option, nothing started', async () => {
  const bads = ['abc', '2s', '1.5', ''];
  // Independent CLI runs, each a process start: at once, to keep the file's run short.
  const results = await Promise.all(bads.map((bad) => runCli(['run', '-c', '/nonexistent/weir.yaml', `--grace-ms=${bad}`])));
  for (const [i, bad] of bads.entries()) {
    const r = results[i]!;
    assert.equal(r.code, 2, `--grace-ms=${bad}: ${r.stderr}`);
    assert.equal(r.stderr.split('\n')[0], `error: --grace-ms takes a whole number of milliseconds, 0 or more, not '${bad}'`);
    assert.doesNotMatch(r.stderr, /\n +at /);
  }
});

test('SIGTERM with a message held by a write that never commits: weir exits within the grace period, the message unacked and stored by the next weir', {
  timeout: 180_000,
}, async () => {
  const { url: mqttUrl } = await sharedMosquitto();
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const clientId = 'weir-stop-held';
  sessions.push([mqttUrl, clientId]);
  const files = telemetryFiles({ mqttUrl, pgUrl, clientId, connections: 1 });
  const weir = await startWeir(files, { args: ['--grace-ms', '2000'] });
  running.push(weir);
  await waitFor(() => weir.ready(), 30_000, 'weir ready');

  // Another transaction holds the table: weir's INSERT waits for it, so the message stays held.
  const locker = new pg.Client({ connectionString: pgUrl });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE telemetry IN ACCESS EXCLUSIVE MODE');
  const pub = await mqtt.connectAsync(mqttUrl, { clientId: `${clientId}-pub`, protocolVersion: 5 });
  await pub.publishAsync('device/held-1/telemetry', JSON.stringify({ ts: 1733140000123, seq: 1, temp: 20.5, hum: 40, location: 'hall' }), { qos: 1 });
  await pub.endAsync();
  await waitFor(async () => (await weir.metric('weir_ingest_unacked')) === 1, 30_000, 'the message held unacked');

  const t0 = Date.now();
  weir.svc.proc.kill('SIGTERM');
  const exited = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), 60_000);
    weir.svc.proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  const tookMs = Date.now() - t0;
  process.stdout.write(`# weir stopped ${tookMs} ms after SIGTERM\n`);
  // 2 s of grace, up to 5 s for each closing step that must wait on a peer, 2 s for the event
  // loop to empty: generous, since the machine is shared; before the fix this took for ever.
  assert.notEqual(exited, null, `weir still running 60 s after SIGTERM:\n${weir.log()}`);
  assert.equal(exited, 0, weir.log());
  assert.ok(tookMs < 20_000, `stopped in ${tookMs} ms`);
  assert.match(weir.log(), /grace period over with messages unacked; the broker will redeliver them/);

  // The INSERT still waiting on the lock would commit once the lock goes: end it first, so the
  // only way the row can appear is the broker's redelivery to the next weir.
  await locker.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
  await locker.query('ROLLBACK');
  await locker.end();
  assert.equal(await countRows(pgUrl), 0, 'nothing stored while the table was locked');

  const next = await startWeir(files);
  running.push(next);
  await waitFor(async () => (await countRows(pgUrl)) === 1, 60_000, 'the held message stored by the next weir');
  assert.ok((await next.metric('weir_ingest_received_total')) >= 1, 'the broker redelivered it');
  assert.equal(await next.stop(), 0);
});

test('SIGTERM while the broker has not answered CONNECT: weir exits at once, leaving nothing open', { timeout: 120_000 }, async () => {
  // A listener that accepts and never answers: every connection (the sessions', the presence
  // one's) stays "connecting". Before the fix the presence client's socket and its connect timer
  // kept the process alive until weir's 2 s last resort, with a warning.
  const held: net.Socket[] = [];
  const silent = net.createServer((s) => {
    held.push(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const mqttUrl = `mqtt://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const pgUrl = await freshDatabase((await sharedPostgres()).url);
    const weir = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-stop-connecting' }));
    running.push(weir);
    await waitFor(() => held.length >= 3, 30_000, 'two session connections and the presence one to reach the listener');
    const t0 = Date.now();
    assert.equal(await weir.stop(), 0, weir.log());
    running.splice(running.indexOf(weir), 1);
    const tookMs = Date.now() - t0;
    assert.doesNotMatch(weir.log(), /open handles keep the process alive/);
    assert.ok(tookMs < 1_500, `stopped ${tookMs} ms after SIGTERM (the last resort fires at 2,000 ms)`);
  } finally {
    for (const s of held) s.destroy();
    silent.close();
  }
});
