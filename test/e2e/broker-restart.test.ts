// The MQTT broker restarted under a running weir, on both real brokers: Mosquitto 2.0.11 (Debian's,
// persistence on) and HiveMQ CE 2025.5 (file persistence), each its own instance. weir subscribes
// with $share/<group>/... on 2 connections (persistent sessions); a QoS 1 publisher keeps
// publishing through the restart (its clients try to reconnect every 100 ms, as devices that
// want their data through do, and send again what was not acked); the broker is stopped
// mid-stream (SIGTERM, or SIGKILL), left down 3 s and started on the same port and data. Then every
// (device, seq) the broker acknowledged is looked up in the telemetry table; where some are
// missing, weir is restarted once on the same sessions to tell messages stuck at the broker from
// messages gone. weir runs with its default `broker.reconnect`; WEIR_TEST_RECONNECT='{ … }'
// replaces it (e.g. `{ refused_ms: 0, quiet_ms: 0 }` measures weir without either remedy).
//
// What is true, and asserted (docs/operations.md, "Broker restarts: what survives, per broker"):
// - HiveMQ keeps sessions, queues and $share subscriptions across a graceful restart: 0 lost.
// - Mosquitto 2.0.11 restores sessions and queues but not $share subscriptions: what the broker
//   acks after its start and before weir has subscribed again goes to nobody. weir retries a
//   refused port every 25-50 ms (reconnect.refused_ms), so that window is tens of ms; whatever it
//   loses, the per-device sequence check finds. With a plain subscription (one connection,
//   share_group '') the subscription is part of the restored session: 0 lost.
// - SIGKILL loses what the broker had not written yet: measured, and the check finds it too.
// - HiveMQ CE after a SIGKILL holds what it queued for the shared subscription until the session
//   connects again; weir reconnects a connection that goes quiet (reconnect.quiet_ms), so nothing
//   stays stuck.
// "The check" is `weir reconcile --sequence telemetry:device_id:seq` (exit 1 and the missing count
// when there are gaps, 0 when none), cross-checked by counting the gaps in SQL from seq 1.
// Each run prints one `# broker-restart` diagnostic line with its figures.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test, type TestContext } from 'node:test';
import { publishLoad } from '../harness/load/publisher.js';
import { startHivemq, type HivemqBroker } from '../harness/hivemq.js';
import { startMosquitto, type MosquittoBroker } from '../harness/mosquitto.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { waitFor } from '../harness/process.js';
import { runCli, startWeir, type WeirProcess } from '../harness/weir.js';
import { query, telemetryFiles } from './fixtures.js';

const weirs: WeirProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const w of weirs) await w.kill();
  for (const c of cleanups) await c().catch(() => {});
});

type Broker = Pick<MosquittoBroker & HivemqBroker, 'url' | 'stop' | 'start' | 'kill'>;

interface Run {
  /** Distinct (device, seq) the broker acknowledged. */
  acked: number;
  /** Acknowledged and not in the table. */
  lost: number;
  /** Gaps in the per-device seq sequences of the table, counted in SQL from seq 1. */
  missingBySequence: number;
  /** `weir reconcile --sequence telemetry:device_id:seq` after the run: exit code, missing count, stderr. */
  reconcile: { code: number; missing: number; stderr: string };
  /** From the broker's spawn to each of weir's connections' first SUBSCRIBE after it, in ms. */
  resubscribedMs: number[];
  /**
   * Of the lost, how many arrived once weir was restarted (a new connection to the same sessions):
   * they were stuck at the broker, not gone. Measured only when something was missing.
   */
  arrivedAfterWeirRestart: number;
  /** Relative to the broker's spawn: when the publisher saw the first and last lost message acked. */
  lostAckedMs: [number, number] | null;
  detail: Record<string, unknown>;
}

/** Missing seq values per device, counted from 1 to the highest stored: gaps a sequence check finds. */
async function missingBySequence(pgUrl: string): Promise<number> {
  const [r] = await query<{ n: string }>(
    pgUrl,
    `SELECT coalesce(sum(hi - n), 0) AS n FROM (SELECT max(seq) AS hi, count(DISTINCT seq) AS n FROM telemetry GROUP BY device_id) d`,
  );
  return Number(r!.n);
}

/** weir's own log lines (pino JSON), with their time in ms. */
function logEvents(w: WeirProcess): Array<{ at: number; msg: string; client_id?: string; session_present?: boolean }> {
  const out = [];
  for (const line of w.log().split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const j = JSON.parse(line) as { time: string; msg: string; client_id?: string; session_present?: boolean };
      out.push({ ...j, at: Date.parse(j.time) });
    } catch {
      // a partial last line
    }
  }
  return out;
}

async function restartRun(
  t: TestContext,
  o: { name: string; broker: Broker; how: 'graceful' | 'kill'; messages: number; intervalMs: number; restartAfter: number; plain?: boolean },
): Promise<Run> {
  const { broker } = o;
  const connections = o.plain ? 1 : 2;
  const pgUrl = await freshDatabase((await sharedPostgres()).url);
  const clientId = `weir-restart-${o.name}`;
  const files = telemetryFiles({ mqttUrl: broker.url, pgUrl, clientId, connections, shareGroup: o.plain ? "''" : undefined });
  // weir's own reconnect defaults (min_ms 500, max_ms 30000), not the fixtures' fast ones: the
  // time weir takes to subscribe again is what this test measures.
  const weirFiles = {
    ...files,
    config: files.config.replace(/^ {2}reconnect: .*\n/m, process.env.WEIR_TEST_RECONNECT ? `  reconnect: ${process.env.WEIR_TEST_RECONNECT}\n` : ''),
  };
  const weir = await startWeir(weirFiles);
  weirs.push(weir);
  await waitFor(() => weir.ready(), 30_000, 'weir ready');
  await waitFor(() => logEvents(weir).filter((e) => e.msg === 'subscribed').length >= connections, 30_000, 'every connection subscribed');

  const ackedAt = new Map<string, number>();
  const publishing = publishLoad({
    url: broker.url,
    clients: 4,
    devices: 40,
    size: 200,
    qos: 1,
    limit: o.messages,
    intervalMs: o.intervalMs,
    clientIdPrefix: `restart-pub-${o.name}`,
    reconnectMs: 100,
    onAcked: (device, seq) => {
      const id = `${device}/${seq}`;
      if (!ackedAt.has(id)) ackedAt.set(id, Date.now());
    },
  });
  await waitFor(() => ackedAt.size >= o.restartAfter, 60_000, `${o.restartAfter} messages acked before the restart`);
  const stopAt = Date.now();
  await (o.how === 'graceful' ? broker.stop() : broker.kill());
  const goneAt = Date.now();
  await new Promise((r) => setTimeout(r, 3_000));
  const spawnAt = Date.now();
  await broker.start();
  const upAt = Date.now();
  const pub = await publishing;
  assert.equal(pub.failed, 0, 'the broker refused no message');
  assert.equal(pub.acked, pub.published, 'every message was acked in the end (sent again after the reconnect when needed)');
  assert.ok(pub.reconnects >= 4, `the publishers reconnected (${pub.reconnects})`);

  // Done when everything is stored, or when nothing has moved for 15 s (lost messages never come):
  // longer than weir's reconnect.quiet_ms (10 s), after which a queue the broker holds is released.
  const stored = new Set<string>();
  let last = -1;
  let stillSince = Date.now();
  const deadline = Date.now() + 120_000;
  for (;;) {
    stored.clear();
    for (const r of await query<{ id: string }>(pgUrl, `SELECT DISTINCT device_id || '/' || seq AS id FROM telemetry`)) stored.add(r.id);
    if ([...ackedAt.keys()].every((id) => stored.has(id))) break;
    if (stored.size !== last) [last, stillSince] = [stored.size, Date.now()];
    else if (Date.now() - stillSince > 15_000 && (await weir.metric('weir_ingest_unacked')) === 0) break;
    assert.ok(Date.now() < deadline, 'the table stopped changing within 120 s');
    await new Promise((r) => setTimeout(r, 250));
  }

  let lostIds = [...ackedAt.keys()].filter((id) => !stored.has(id));
  let arrivedAfterWeirRestart = 0;
  if (lostIds.length) {
    // Stuck or lost? A new process on the same sessions: a broker that still holds the messages
    // delivers them now.
    assert.equal(await weir.stop(), 0, 'weir stops cleanly');
    const again = await startWeir(weirFiles, { dir: weir.dir });
    weirs.push(again);
    await waitFor(() => again.ready(), 30_000, 'weir ready again');
    await new Promise((r) => setTimeout(r, 10_000));
    const now = new Set((await query<{ id: string }>(pgUrl, `SELECT DISTINCT device_id || '/' || seq AS id FROM telemetry`)).map((r) => r.id));
    arrivedAfterWeirRestart = lostIds.filter((id) => now.has(id)).length;
    for (const id of now) stored.add(id);
    lostIds = lostIds.filter((id) => !now.has(id));
    assert.equal(await again.stop(), 0, 'weir stops cleanly');
  } else {
    assert.equal(await weir.stop(), 0, 'weir stops cleanly');
  }
  const lostTimes = lostIds.map((id) => ackedAt.get(id)! - spawnAt).sort((a, b) => a - b);
  const events = logEvents(weir).filter((e) => e.at >= goneAt - 1_000);
  // Each connection's first SUBSCRIBE after the restart (later ones: quiet_ms reconnects, the
  // second weir process).
  const firstSubscribe = new Map<string, number>();
  for (const e of events) if (e.msg === 'subscribed' && e.client_id && !firstSubscribe.has(e.client_id)) firstSubscribe.set(e.client_id, e.at - spawnAt);
  const resubscribedMs = [...firstSubscribe.values()];
  const run: Run = {
    acked: ackedAt.size,
    lost: lostIds.length,
    missingBySequence: await missingBySequence(pgUrl),
    reconcile: { code: -1, missing: -1, stderr: '' },
    resubscribedMs,
    arrivedAfterWeirRestart,
    lostAckedMs: lostTimes.length ? [lostTimes[0]!, lostTimes.at(-1)!] : null,
    detail: {
      stopMs: goneAt - stopAt,
      startMs: upAt - spawnAt,
      reconnectedMs: events.filter((e) => e.msg === 'connected to broker').map((e) => [e.at - spawnAt, e.session_present]),
      rows: stored.size,
      publisherReconnects: pub.reconnects,
      seconds: (pub.endedAt - pub.startedAt) / 1000,
    },
  };
  const rec = await runCli(['reconcile', '-c', join(weir.dir, 'weir.yaml'), '--sequence', 'telemetry:device_id:seq', '--json']);
  let missing: number | undefined;
  try {
    missing = (JSON.parse(rec.stdout) as { sequence: Array<{ table: string; missing: number }> }).sequence.find((r) => r.table === 'telemetry')?.missing;
  } catch {
    // reported below
  }
  assert.ok(missing !== undefined, `weir reconcile --json printed a sequence result (exit ${rec.code}):\n${rec.stdout}${rec.stderr}`);
  run.reconcile = { code: rec.code, missing, stderr: rec.stderr };
  t.diagnostic(`broker-restart ${o.name}: ${JSON.stringify({ ...run, reconcile: { code: rec.code, missing: run.reconcile.missing } })}`);
  return run;
}

/** What every run asserts: nothing stuck at the broker, and the sequence check (SQL and `weir reconcile`) finds exactly what was lost. */
function assertLossDetected(run: Run): void {
  assert.equal(run.arrivedAfterWeirRestart, 0, 'no message waited at the broker for a new weir process');
  assert.equal(run.missingBySequence, run.lost, 'the gaps in the table are exactly the lost messages');
  assert.equal(run.reconcile.missing, run.lost, `weir reconcile --sequence counts every lost message\n${run.reconcile.stderr}`);
  if (run.lost > 0) {
    assert.equal(run.reconcile.code, 1, 'reconcile exits 1 when sequence numbers are missing');
    assert.match(run.reconcile.stderr, new RegExp(`GAPS: telemetry: ${run.lost} missing sequence number`));
  } else {
    assert.equal(run.reconcile.code, 0, `reconcile exits 0 when nothing is missing\n${run.reconcile.stderr}`);
  }
}

async function persistentMosquitto(): Promise<MosquittoBroker> {
  const m = await startMosquitto({ persistence: true });
  cleanups.push(() => m.dispose());
  return m;
}

async function hivemq(): Promise<HivemqBroker> {
  const h = await startHivemq();
  cleanups.push(() => h.dispose());
  return h;
}

// ~450 msg/s for ~18 s: the restart falls in the first third.
const MOSQUITTO_RUN = { messages: 8_000, intervalMs: 8, restartAfter: 2_400 };
// HiveMQ stops in ~5 s and starts in ~5 s: ~250 msg/s for ~26 s, so publishing outlasts the outage.
const HIVEMQ_RUN = { messages: 5_000, intervalMs: 20, restartAfter: 1_000 };

/**
 * A share group has a member again as soon as one connection has subscribed: until then, what the
 * broker acks goes to nobody. The publishers are back within ~100 ms of the broker's start, weir
 * after its backoff's remainder (a random share of up to 4 s here), so how much is lost varies.
 */
function assertLossIsTheResubscribeGap(run: Run): void {
  const firstSubscribed = Math.min(...run.resubscribedMs);
  // 300 ms: SUBACK's and PUBACK's ways back, and the publishers' 100 ms reconnect period.
  if (firstSubscribed > 300)
    assert.ok(run.lost > 0, `weir subscribed again ${firstSubscribed} ms after the broker's start, with the publishers back: messages were lost`);
  if (run.lost > 0) {
    const [first, last] = run.lostAckedMs!;
    assert.ok(first >= 0, `every lost message was acked after the broker's start (first at ${first} ms)`);
    assert.ok(
      last <= firstSubscribed + 300,
      `every lost message was acked before weir's first SUBSCRIBE was through (last at ${last} ms, subscribed at ${firstSubscribed} ms)`,
    );
  }
}

test('Mosquitto 2.0.11, graceful restart: $share subscriptions are not restored; weir subscribes again within tens of ms, what is acked before that is lost, and the sequence check counts every lost message', {
  timeout: 240_000,
}, async (t) => {
  const run = await restartRun(t, { name: 'mosquitto-term', broker: await persistentMosquitto(), how: 'graceful', ...MOSQUITTO_RUN });
  assert.equal(run.resubscribedMs.length, 2, 'both connections subscribed again');
  assertLossDetected(run);
  assertLossIsTheResubscribeGap(run);
});

test("Mosquitto 2.0.11, graceful restart with a plain subscription (share_group '', one connection): the session keeps it, 0 lost", {
  timeout: 240_000,
}, async (t) => {
  const run = await restartRun(t, { name: 'mosquitto-plain', broker: await persistentMosquitto(), how: 'graceful', plain: true, ...MOSQUITTO_RUN });
  assert.equal(run.lost, 0, 'nothing the broker acked is missing');
  assertLossDetected(run);
});

test('Mosquitto 2.0.11, SIGKILL: the loss is measured (the same re-subscribe gap, and whatever was acked after the last autosave), and the sequence check counts every lost message', {
  timeout: 240_000,
}, async (t) => {
  const run = await restartRun(t, { name: 'mosquitto-kill', broker: await persistentMosquitto(), how: 'kill', ...MOSQUITTO_RUN });
  assert.equal(run.resubscribedMs.length, 2, 'both connections subscribed again');
  assertLossDetected(run);
  if (Math.min(...run.resubscribedMs) > 300) assert.ok(run.lost > 0, 'the re-subscribe gap loses messages after a SIGKILL too');
});

test('HiveMQ CE 2025.5, graceful restart: sessions, queues and $share subscriptions survive, 0 lost', { timeout: 300_000 }, async (t) => {
  const run = await restartRun(t, { name: 'hivemq-term', broker: await hivemq(), how: 'graceful', ...HIVEMQ_RUN });
  assert.equal(run.lost, 0, 'nothing the broker acked is missing');
  assertLossDetected(run);
});

test('HiveMQ CE 2025.5, SIGKILL: nothing stays stuck in the queue the broker restored (weir reconnects a connection that goes quiet), and the sequence check counts whatever was lost', {
  timeout: 300_000,
}, async (t) => {
  const run = await restartRun(t, { name: 'hivemq-kill', broker: await hivemq(), how: 'kill', ...HIVEMQ_RUN });
  assertLossDetected(run);
});
