// The fault scenarios, each with its fault and its expectation. Run them with
// test/faults/faults.test.ts (CI sizes) or `npm run faults` (full sizes, docs/reliability.md).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { query } from '../e2e/fixtures.js';
import { telemetrySample } from '../../src/embedded/devices.js';
import { HOSTILE, oversizePayload, TELEMETRY_COLUMNS, type HostileEnd } from '../harness/hostile.js';
import { takeDown } from '../harness/outage.js';
import { waitFor } from '../harness/process.js';
import { MISSING } from './report.js';
import type { Scenario, ScenarioContext, ScenarioResult, ScenarioTable } from './scenario.js';
import { crashPostgres, type BrokerName } from './services.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every message the broker acknowledged is in the table exactly once, and reconcile agrees. */
function nothingLost(r: ScenarioResult): void {
  assert.equal(r.published, r.size, 'the broker acknowledged every message');
  assert.equal(r.lost, 0, `nothing lost (waiting ended: ${r.settled}; lost e.g. ${r.lostSample.join(', ')})`);
  assert.equal(r.duplicates, 0, 'each message stored once (ON CONFLICT absorbs redeliveries)');
  assert.equal(r.strays, 0, 'no row or dead letter of a message nobody published');
  assert.equal(r.reconcile.code, 0, `weir reconcile exits 0:\n${r.reconcile.output}`);
}

/** nothingLost, for a stream of plain samples: none of them is a dead letter. */
function allStored(r: ScenarioResult): void {
  nothingLost(r);
  assert.equal(r.deadLettered, 0, 'a plain sample is never dead-lettered');
}

const weirOf = (ctx: ScenarioContext, i = 0) => ctx.fleet.member(i).weir;

// (1) ------------------------------------------------------------------------------------------
const killTenTimes: Scenario = {
  name: 'kill-9-x10',
  title: 'weir killed with SIGKILL 10 times at random points, restarted each time',
  ciSize: 10_000,
  // Ten kills and restarts (3-5 s each) fall inside the stream.
  streamSeconds: (n) => Math.max(60, n / 3000),
  async inject(ctx) {
    const m = ctx.fleet.member(0);
    const points = Array.from({ length: 10 }, () => 0.05 + 0.85 * ctx.rng()).sort((a, b) => a - b);
    for (const p of points) {
      await ctx.untilPublished(p);
      await sleep(200 + 1300 * ctx.rng()); // up and working for a moment since the last restart
      await ctx.fleet.kill(m, 'SIGKILL');
      await sleep(1000 * ctx.rng());
      await ctx.fleet.restart(m);
    }
    ctx.fact('restarts', m.restarts);
    ctx.note(`killed at ${points.map((p) => `${Math.round(p * 100)} %`).join(', ')} of the stream`);
  },
  check(r) {
    assert.equal(r.facts.get('restarts'), 10);
    allStored(r);
  },
};

// (2), (3), (4) --------------------------------------------------------------------------------
function postgresDown(name: string, title: string, downMs: number, how: 'fast' | 'immediate', streamS: number): Scenario {
  return {
    name,
    title,
    ownPostgres: true,
    ciSize: 5_000,
    streamSeconds: (n) => Math.max(streamS, n / 3000),
    async inject(ctx) {
      await ctx.untilPublished(0.2);
      const pg = ctx.postgres!;
      // fast: the harness's stop() (SIGINT, `pg_ctl stop -m fast`); immediate: a crash.
      const service = how === 'fast' ? pg : { stop: () => crashPostgres(pg) };
      await takeDown(weirOf(ctx), service, { ms: downMs, notReadyMs: 15_000 });
      await pg.start();
      ctx.note(`PostgreSQL ${how === 'fast' ? 'stopped (fast)' : 'crashed (immediate)'} for ${downMs / 1000} s at 20 % of the stream`);
    },
    check: allStored,
  };
}

// (5) ------------------------------------------------------------------------------------------
const PAYLOAD_LIMIT = 64 * 1024;
interface Kind {
  name: string;
  end: HostileEnd;
  reason?: string;
  payload(device: string, seq: number, ts: number): Buffer;
}
const KINDS: Kind[] = [
  ...HOSTILE,
  {
    // Good, with fields named as event fields: the row holds the payload's id and topic, and its
    // `timestamp` (a field the rule does not select) changes nothing.
    name: 'a sample with its own id, topic and timestamp fields',
    end: 'stored',
    payload: (d, s, t) =>
      Buffer.from(JSON.stringify({ device: d, seq: s, ts: t, temp: 19.25, hum: 55, location: 'hall-9', id: `m-${d}-${s}`, topic: `site/${d}`, timestamp: 1 })),
  },
  {
    name: 'a payload over max_payload_bytes',
    end: 'dead_lettered',
    reason: 'payload_too_large',
    payload: (d, s, t) => oversizePayload(d, s, t, PAYLOAD_LIMIT),
  },
];

/** Where each hostile message should end and where it did, as "kind: n expected …, got …" lines. */
function hostileMismatches(r: ScenarioResult): string[] {
  const byKind = new Map(KINDS.map((k) => [k.name, k]));
  const bad = new Map<string, number>();
  for (const [id, name] of r.ledger.kinds) {
    const k = byKind.get(name)!;
    const reason = r.deadReasons.get(id);
    const got = r.storedIds.has(id) ? 'stored' : reason !== undefined ? `dead_lettered (${reason})` : 'nowhere';
    const ok =
      got !== 'nowhere' &&
      (k.end === 'either' || (k.end === 'stored' ? got === 'stored' : reason !== undefined && (k.reason === undefined || reason === k.reason)));
    if (!ok) {
      const line = `${name}: expected ${k.end}${k.reason ? ` (${k.reason})` : ''}, got ${got}`;
      bad.set(line, (bad.get(line) ?? 0) + 1);
    }
  }
  return [...bad].map(([line, n]) => `${n} × ${line}`);
}

const { ts, ...shipped } = TELEMETRY_COLUMNS;
/**
 * The hostile scenario's rule: the shipped rule's fields, with columns named as the event's fields
 * (`id`, `topic`, `timestamp`) and as the event counter that was once stored (`seq`, issue 28). A
 * selected field the payload lacks is NULL; a root array or scalar has no fields, so its row is
 * refused (seq and timestamp are NOT NULL) and dead-lettered.
 */
const HOSTILE_TABLE: ScenarioTable = {
  name: 'hostile_rows',
  device: 'device_id',
  seq: 'seq',
  ddl: `CREATE TABLE hostile_rows (
    device_id text NOT NULL, seq bigint NOT NULL, "timestamp" timestamptz NOT NULL, id text, topic text,
    temp double precision, humidity double precision, location text, PRIMARY KEY (device_id, seq))`,
  rule: `id: hostile_rows
sql: |
  SELECT clientid AS device_id, payload.seq AS seq, payload.ts AS timestamp, payload.id AS id, payload.topic AS topic,
         payload.temp AS temp, payload.hum AS humidity, payload.location AS location
  FROM "device/+/telemetry"
actions:
  - sink: tsdb
    table: hostile_rows
    columns:
      device_id: \${device_id}
      seq: \${seq}
      timestamp: \${timestamp}
      id: \${id}
      topic: \${topic}
      temp: \${temp}
      humidity: \${humidity}
      location: \${location}
    on_conflict: (device_id, seq) DO NOTHING
`,
  columns: {
    ...shipped,
    timestamp: ts,
    id: { from: 'payload.id', type: 'text' },
    topic: { from: 'payload.topic', type: 'text' },
  },
};

const hostile: Scenario = {
  name: 'hostile-payloads',
  title: 'hostile payloads (every family in test/harness/hostile.ts, and oversized) mixed into good traffic, every row checked against its message',
  ciSize: 5_000,
  streamSeconds: (n) => Math.max(15, n / 3000),
  weir: { maxPayloadBytes: PAYLOAD_LIMIT },
  table: HOSTILE_TABLE,
  // A dead-lettered message is a gap in the table by design; the ledger check applies.
  sequence: false,
  payloads(size) {
    // Good only for the first and last 30 % of the stream; every tenth message hostile between.
    // The good ones are the publisher's plain samples, supplied here so that the oracle sees them.
    let n = 0;
    let h = 0;
    return (device, seq) => {
      const i = n++;
      if (i < 0.3 * size || i >= 0.7 * size || i % 10 !== 5) return { payload: telemetrySample(String(device), seq, 200) };
      const k = KINDS[h++ % KINDS.length]!;
      return { kind: k.name, payload: k.payload(String(device), seq, Date.now()) };
    };
  },
  async inject() {},
  check(r) {
    assert.notEqual(r.settled, 'timed out', 'weir acked every message: no stall');
    assert.ok(r.ledger.kinds.size >= KINDS.length, 'every hostile family was published');
    assert.deepEqual(hostileMismatches(r), [], 'every hostile message ends as its family should');
    const good = [...r.ledger.acked].filter((id) => !r.ledger.kinds.has(id));
    assert.deepEqual(good.filter((id) => !r.storedIds.has(id)).slice(0, 10), [], 'every good message is stored');
    let lastHostile = -1;
    for (const id of r.ledger.kinds.keys()) lastHostile = Math.max(lastHostile, r.ledger.ackOrder.get(id) ?? -1);
    const after = good.filter((id) => (r.ledger.ackOrder.get(id) ?? -1) > lastHostile);
    assert.ok(after.length > 0.2 * r.size, `good messages after the last hostile one (${after.length})`);
    assert.equal(after.filter((id) => !r.storedIds.has(id)).length, 0, 'every good message published after the hostile ones is stored: 0 stalls');
    nothingLost(r);
    // Content: every row is its message's, value for value (no fabricated seq, no event field
    // standing in for a selected one); every value of a good row predicted and compared.
    const c = r.content!;
    assert.equal(c.rows, r.rows, 'every row was compared');
    assert.deepEqual(c.mismatches, [], `every stored row holds what its message carried (${c.wrongRows} rows differ)`);
    assert.ok(c.compared >= good.length * Object.keys(HOSTILE_TABLE.columns).length, `every value of every good row compared (${c.compared})`);
  },
};

// (6) ------------------------------------------------------------------------------------------
/** `text` with `from` replaced, failing loudly when the shipped rule no longer has `from`. */
function edit(text: string, from: string, to: string): string {
  assert.ok(text.includes(from), `rules/telemetry.yaml still has ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

const ruleEdits: Scenario = {
  name: 'rule-edits',
  title: 'rules edited mid-stream: a valid edit, invalid YAML, invalid SQL, then a fix',
  ciSize: 5_000,
  streamSeconds: (n) => Math.max(30, n / 3000),
  async inject(ctx) {
    const m = ctx.fleet.member(0);
    const file = join(m.weir.dir, 'rules', 'telemetry.yaml');
    const shipped = m.files.rules['telemetry.yaml']!;
    const valid = edit(shipped, 'payload.location AS location', 'upper(payload.location) AS location');
    const reloads = () => ctx.fleet.logLines('"rules reloaded"').length;
    const rejections = () => ctx.fleet.logLines('rule rejected').length;
    const upper = async () => Number((await query<{ n: string }>(ctx.pgUrl, "SELECT count(*) AS n FROM telemetry WHERE location LIKE 'X%'"))[0]!.n);

    await ctx.untilPublished(0.2);
    writeFileSync(file, valid);
    await waitFor(() => reloads() >= 1, 20_000, 'the valid edit to be loaded');
    await waitFor(async () => (await upper()) > 0, 30_000, 'rows written by the edited rule');

    await ctx.untilPublished(0.4);
    writeFileSync(file, edit(valid, 'actions:', 'actions: ['));
    await waitFor(() => rejections() >= 1, 20_000, 'invalid YAML to be rejected');

    await ctx.untilPublished(0.6);
    writeFileSync(file, edit(valid, 'payload.ts AS ts,', 'payload.ts AS ts,,'));
    await waitFor(() => rejections() >= 2, 20_000, 'invalid SQL to be rejected');
    const before = await upper();
    await waitFor(async () => (await upper()) > before, 30_000, 'the running rule to go on storing after the rejections');

    // weir reconcile reads the rules too: leave a valid set behind.
    await ctx.untilPublished(0.8);
    writeFileSync(file, valid);
    await waitFor(() => reloads() >= 2, 20_000, 'the fix to be loaded');
    ctx.fact('reloads', reloads());
    ctx.fact('rejections', rejections());
    ctx.fact('running', ctx.fleet.running.length);
    ctx.note(`${reloads()} reloads, ${rejections()} rejections logged`);
  },
  check(r) {
    assert.equal(r.facts.get('running'), 1, 'weir kept running');
    assert.equal(r.facts.get('reloads'), 2, 'the valid edit and the fix were loaded');
    assert.ok((r.facts.get('rejections') ?? 0) >= 2, 'invalid YAML and invalid SQL were rejected and logged');
    allStored(r);
  },
};

// (7) ------------------------------------------------------------------------------------------
const replicas: Scenario = {
  name: 'replicas-kill-9',
  title: 'two replicas in one share group, one killed with SIGKILL and restarted',
  replicas: 2,
  ciSize: 10_000,
  streamSeconds: (n) => Math.max(30, n / 3000),
  async inject(ctx) {
    await ctx.untilPublished(0.4);
    const b = ctx.fleet.member(1);
    await ctx.fleet.kill(b, 'SIGKILL');
    await sleep(1000 + 1000 * ctx.rng());
    await ctx.fleet.restart(b);
    ctx.note('replica b killed at 40 % of the stream, restarted 1-2 s later');
  },
  check: allStored,
};

// (8) ------------------------------------------------------------------------------------------
const sigterm: Scenario = {
  name: 'sigterm-restart',
  title: 'weir stopped with SIGTERM under load, then started again',
  ciSize: 5_000,
  streamSeconds: (n) => Math.max(20, n / 3000),
  async inject(ctx) {
    await ctx.untilPublished(0.4);
    const m = ctx.fleet.member(0);
    const started = Date.now();
    ctx.fact('exit code', (await ctx.fleet.kill(m, 'SIGTERM')) ?? -1);
    ctx.note(`SIGTERM at 40 %: exited in ${((Date.now() - started) / 1000).toFixed(2)} s`);
    await ctx.fleet.restart(m);
  },
  check(r) {
    assert.equal(r.facts.get('exit code'), 0, 'a stopped weir exits 0');
    allStored(r);
  },
};

// (9), (10) ------------------------------------------------------------------------------------
type BrokerFault = 'graceful' | 'kill-9' | 'graceful-backlog';
const BROKER_FAULTS: Record<BrokerFault, string> = {
  graceful: 'restarted gracefully',
  'kill-9': 'killed with SIGKILL and started again',
  'graceful-backlog': 'restarted gracefully while messages were queued for a stopped weir',
};

function brokerRestart(broker: BrokerName, how: BrokerFault): Scenario {
  return {
    name: `broker-${how}-${broker}`,
    title: `${broker === 'hivemq' ? 'HiveMQ CE' : 'Mosquitto with persistence'} ${BROKER_FAULTS[how]}`,
    broker,
    ciSize: 5_000,
    // HiveMQ CE lets 50 messages at a time be in flight to a subscriber: about 1,000 msg/s here.
    streamSeconds: (n) => Math.max(30, n / (broker === 'hivemq' ? 800 : 3000)),
    async inject(ctx) {
      await ctx.untilPublished(0.4);
      const b = ctx.broker!;
      const m = ctx.fleet.member(0);
      // With a backlog: weir stops (its session stays), and the broker queues 3 s of messages
      // for it, which the restart must keep.
      if (how === 'graceful-backlog') {
        await ctx.fleet.kill(m, 'SIGTERM');
        await sleep(3000);
      }
      const started = Date.now();
      if (how === 'kill-9') await b.kill();
      else await b.stop();
      await b.start();
      ctx.note(
        `broker ${how === 'kill-9' ? 'killed' : 'stopped'} at 40 %${how === 'graceful-backlog' ? ' with 3 s of messages queued for weir' : ''}, serving again after ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      if (how === 'graceful-backlog') await ctx.fleet.restart(m);
      else await ctx.fleet.ready(m);
    },
    check(r) {
      if (broker === 'hivemq' && how !== 'kill-9') return nothingLost(r);
      assert.equal(r.duplicates, 0, 'each message stored once');
      if (r.lost === 0) return nothingLost(r);
      // A loss weir cannot prevent (Mosquitto 2.0.11 drops $share subscriptions on restart) must
      // at least be named: per-device sequence gaps in the stored data.
      assert.ok(r.reconcile.sequence, `${r.lost} messages lost, and this weir reconcile has no --sequence to name the gap`);
      assert.equal(r.reconcile.code, 1, `weir reconcile --sequence exits 1 when ${r.lost} messages are missing:\n${r.reconcile.output}`);
      assert.match(r.reconcile.output, MISSING, 'reconcile names the missing sequence numbers');
    },
  };
}

export const SCENARIOS: readonly Scenario[] = [
  killTenTimes,
  postgresDown('pg-stop-30s', 'PostgreSQL stopped (fast) for 30 s', 30_000, 'fast', 40),
  postgresDown('pg-stop-3min', 'PostgreSQL stopped (fast) for 3 min', 180_000, 'fast', 60),
  postgresDown('pg-crash', 'PostgreSQL crashed (immediate) and restarted after 15 s', 15_000, 'immediate', 30),
  hostile,
  ruleEdits,
  replicas,
  sigterm,
  ...(['mosquitto', 'hivemq'] as const).flatMap((b) => (['graceful', 'kill-9', 'graceful-backlog'] as const).map((how) => brokerRestart(b, how))),
];
