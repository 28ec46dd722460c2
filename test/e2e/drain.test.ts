// Scale-down without stranded messages (the operations issue's acceptance 5), against a real
// Mosquitto: a share group keeps dealing messages to a member whose session is alive even while
// it is offline. A member removed with `weir run --drain` leaves cleanly (unsubscribe, finish,
// end the session) and the remaining member stores everything; a member stopped with
// --keep-session keeps its session, and its share of later messages waits there for it — which is
// what a restart wants and a removal must not do. Without either flag the fleet decides
// (test/e2e/fleet.test.ts).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { sharedMosquitto } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { startWeir, type WeirProcess } from '../harness/weir.js';
import { endSessions, query, telemetryFiles } from './fixtures.js';

const running: WeirProcess[] = [];
const sessions: string[] = [];
let mqttUrlUsed = '';
after(async () => {
  for (const w of running) await w.kill();
  for (const id of sessions) await endSessions(mqttUrlUsed, id);
});

async function distinct(pgUrl: string): Promise<number> {
  const [r] = await query<{ n: string }>(pgUrl, 'SELECT count(DISTINCT (device_id, seq)) AS n FROM telemetry');
  return Number(r!.n);
}

async function twoMembers(group: string, argsA: string[]) {
  const { url: mqttUrl } = await sharedMosquitto();
  mqttUrlUsed = mqttUrl;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  sessions.push(`${group}-a`, `${group}-b`);
  const a = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId: `${group}-a`, shareGroup: group }), { args: argsA });
  const b = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId: `${group}-b`, shareGroup: group }));
  running.push(a, b);
  await waitFor(async () => (await a.ready()) && (await b.ready()), 20_000, 'both members ready');
  return { mqttUrl, pgUrl, a, b };
}

test('a member drained and removed under load: every message published during and after the drain is stored by the other', { timeout: 240_000 }, async () => {
  const { mqttUrl, pgUrl, a, b } = await twoMembers('weir-drain', ['--drain']);
  const N = 24_000;
  const publishing = publishLoad({ url: mqttUrl, clients: 3, devices: 120, size: 200, qos: 1, limit: N, intervalMs: 1, clientIdPrefix: 'drain-pub' });
  await waitFor(async () => (await a.metric('weir_ingest_acked_total')) > 2_000, 60_000, 'member A to have taken its share');
  assert.equal(await a.stop(), 0, 'A drains and exits cleanly');
  assert.match(a.log(), /draining: leaving the share group/);
  assert.match(a.log(), /unsubscribed/);
  const pub = await publishing;
  assert.equal(pub.acked, N);
  await waitFor(async () => (await distinct(pgUrl)) >= N, 120_000, `all ${N} stored`);
  assert.equal(await distinct(pgUrl), N, 'none stranded');
  assert.ok((await b.metric('weir_ingest_acked_total')) > N / 2, 'B took over the rest');
  assert.equal(await b.stop(), 0);
});

test('a member stopped with --keep-session keeps its session although another is live: its share of later messages waits for it', {
  timeout: 240_000,
}, async () => {
  const { mqttUrl, pgUrl, a, b } = await twoMembers('weir-nodrain', ['--keep-session']);
  assert.equal(await a.stop(), 0);
  const N = 4_000;
  const pub = await publishLoad({ url: mqttUrl, clients: 2, devices: 100, size: 200, qos: 1, limit: N, clientIdPrefix: 'nodrain-pub' });
  assert.equal(pub.acked, N);
  await waitFor(async () => (await b.metric('weir_ingest_acked_total')) >= N / 4, 60_000, 'B storing its share');
  await new Promise((r) => setTimeout(r, 3000));
  const whileAway = await distinct(pgUrl);
  assert.ok(whileAway < N, `messages dealt to the stopped member are not stored by the other (${whileAway} of ${N})`);
  // A comes back with the same client id: its session delivers what was kept for it.
  const a2 = await startWeir(telemetryFiles({ mqttUrl, pgUrl, clientId: 'weir-nodrain-a', shareGroup: 'weir-nodrain' }));
  running.push(a2);
  await waitFor(async () => (await distinct(pgUrl)) >= N, 60_000, `all ${N} stored after A returned`);
  assert.equal(await distinct(pgUrl), N);
  assert.equal(await a2.stop(), 0);
  assert.equal(await b.stop(), 0);
});
