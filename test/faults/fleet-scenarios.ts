// The fleet scenarios (issue 31): weir replicas in one share group, driven by the harness as a
// Kubernetes StatefulSet is (orchestrator.ts), under a steady QoS 1 stream in which every message
// has a unique (device, seq). Each scenario ends with `weir reconcile --sequence` over the whole
// run and is held to: nothing lost, nothing stored twice. weir runs as shipped (plain `weir run`,
// no fleet setting), only SIGTERM and SIGKILL tell it anything.
//
// What each run records, beside the fault suite's accounting (ledger.ts):
// - duplicates delivered: rows weir committed for a (device, seq) it had committed before. A
//   BEFORE INSERT trigger on `telemetry` appends every row weir writes to `telemetry_deliveries`
//   before the rule's ON CONFLICT DO NOTHING absorbs it, in the same transaction, so a batch that
//   did not commit counts nothing;
// - seconds from the event (the scenario's first orchestrator action) to the last row stored, and
//   the longest delay of any message from its publication (the payload's ts) to its row's commit;
// - sessions left on the broker under a client id whose pod does not run (a non-destructive probe:
//   it connects without clean start, reads CONNACK's session-present flag, acks nothing, and
//   leaves the session as it found it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import mqttPacket from 'mqtt-packet';
import { query, telemetryFiles } from '../e2e/fixtures.js';
import { startHivemq } from '../harness/hivemq.js';
import { publishLoad } from '../harness/load/publisher.js';
import { startMosquitto } from '../harness/mosquitto.js';
import { builtMosquitto, MOSQUITTO_BUILD_VERSION } from '../harness/mosquitto-build.js';
import { freshDatabase } from '../harness/postgres.js';
import { ROOT } from '../harness/weir.js';
import { Fleet } from './fleet.js';
import { Ledger, TELEMETRY, type Accounting } from './ledger.js';
import { StatefulSet, type Exit } from './orchestrator.js';
import { reconcile, reconcileNote, settle, type ReconcileOutcome, type Settled } from './scenario.js';
import type { RestartableBroker } from './services.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Each weir has this many connections (client ids `<pod>-0`, `<pod>-1`). */
const CONNECTIONS = 2;
/** Two minutes: a lost node's share must be stored within this of the loss (issue 31). */
export const NODE_LOSS_LIMIT_S = 120;

export type FleetBrokerName = 'mosquitto-2.0.21' | 'mosquitto-2.0.11' | 'hivemq';
export const FLEET_BROKERS: readonly FleetBrokerName[] = ['mosquitto-2.0.21', 'hivemq', 'mosquitto-2.0.11'];

export interface FleetBroker extends RestartableBroker {
  readonly name: FleetBrokerName;
}

/** The broker for one broker's scenarios: persistent (sessions and queues survive its restart). */
export async function startFleetBroker(name: FleetBrokerName): Promise<FleetBroker> {
  const b =
    name === 'hivemq'
      ? await startHivemq()
      : await startMosquitto({ persistence: true, bin: name === 'mosquitto-2.0.21' ? await builtMosquitto() : undefined });
  return Object.assign(b, { name });
}

/** Why a broker cannot run a scenario: said in the table and the test output, never skipped silently. */
export function cannotRun(s: FleetScenario, broker: FleetBrokerName): string | undefined {
  if (s.brokerRestart && broker === 'mosquitto-2.0.11')
    return "not run: Mosquitto 2.0.11 does not restore $share subscriptions across a restart, so what devices publish before the replicas subscribe again goes to nobody, a loss no replica can prevent (docs/operations.md, 'Broker restarts'; run the broker restart on 2.0.21 or HiveMQ CE)";
  return undefined;
}

export interface FleetContext {
  readonly sts: StatefulSet;
  readonly broker: FleetBroker;
  readonly size: number;
  /** CI-size run: the full stop is shorter. */
  readonly ci: boolean;
  /** Resolves once the broker has acknowledged `fraction` of `size`. */
  untilPublished(fraction: number): Promise<void>;
  /** Marks the scenario's event (the first call counts for "event → last stored"). */
  event(): void;
  fact(name: string, value: number): void;
  note(text: string): void;
  /** How many of these client ids' connections have a session on the broker (probe, non-destructive). */
  sessionsOf(clientIds: string[]): Promise<number>;
}

export interface FleetScenario {
  readonly name: string;
  readonly title: string;
  readonly replicas: number;
  readonly ciSize: number;
  /** Restarts the broker (not run on Mosquitto 2.0.11). */
  readonly brokerRestart?: boolean;
  /** How long settling may see nothing move before it gives up (default 20 s). */
  readonly quietMs?: number;
  act(ctx: FleetContext): Promise<void>;
  /** Checks beyond fleetPass. */
  check?(r: FleetResult): void;
}

export interface FleetResult extends Accounting {
  readonly scenario: string;
  readonly title: string;
  readonly broker: FleetBrokerName;
  readonly size: number;
  /** Messages per second the stream reached (acknowledged by the broker). */
  readonly rate: number;
  readonly settled: Settled;
  /** Rows committed again for a (device, seq) already committed, absorbed by ON CONFLICT. */
  readonly deliveredDuplicates: number;
  /** From the scenario's event to the last row committed. */
  readonly eventToLastStoredS: number;
  /** The longest a message took from publication to its row's commit. */
  readonly maxDelayS: number;
  readonly reconcile: ReconcileOutcome;
  readonly exits: readonly Exit[];
  readonly facts: ReadonlyMap<string, number>;
  readonly notes: string[];
  readonly peakRssMb: number;
  readonly seconds: number;
}

/** Nothing lost, nothing stored twice, and `weir reconcile --sequence` agrees. */
export function fleetPass(r: FleetResult): void {
  assert.ok(r.published >= r.size, `the broker acknowledged the whole stream (${r.published} of at least ${r.size})`);
  assert.equal(r.lost, 0, `nothing lost (waiting ended: ${r.settled}; lost e.g. ${r.lostSample.join(', ')})`);
  assert.equal(r.duplicates, 0, 'each message stored once (ON CONFLICT absorbs redeliveries)');
  assert.equal(r.strays, 0, 'no row of a message nobody published');
  assert.equal(r.deadLettered, 0, 'a plain sample is never dead-lettered');
  assert.equal(r.reconcile.code, 0, `weir reconcile --sequence exits 0:\n${r.reconcile.output}`);
  assert.equal(r.facts.get('sessions left') ?? 0, 0, 'no session left on the broker under a pod that is gone');
}

const TRIGGER = `
CREATE TABLE telemetry_deliveries (device_id text NOT NULL, seq bigint NOT NULL);
CREATE FUNCTION telemetry_delivery() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO telemetry_deliveries VALUES (NEW.device_id, NEW.seq);
  RETURN NEW;
END $$;
CREATE TRIGGER telemetry_delivery BEFORE INSERT ON telemetry FOR EACH ROW EXECUTE FUNCTION telemetry_delivery();
`;

/**
 * Whether each of `clientIds`' connections has a session on the broker: a bare MQTT 5 CONNECT
 * without clean start, CONNACK's session-present flag, then DISCONNECT. Nothing the broker sends
 * meanwhile is read or acked, so a session that is there keeps its queue (and its expiry, weir's
 * default); one the probe created ends with it (expiry 0).
 */
export async function sessionsOf(url: string, clientIds: string[]): Promise<number> {
  const { hostname, port } = new URL(url);
  const opts = { protocolVersion: 5 } as const;
  let n = 0;
  for (const id of clientIds) {
    for (let i = 0; i < CONNECTIONS; i++) {
      const sock = net.connect(Number(port), hostname);
      const parser = mqttPacket.parser(opts);
      const present = await new Promise<boolean>((resolve, reject) => {
        parser.once('packet', (p) =>
          p.cmd === 'connack' && p.reasonCode === 0 ? resolve(Boolean(p.sessionPresent)) : reject(new Error(`probe ${id}-${i}: ${p.cmd} ${p.reasonCode}`)),
        );
        sock.on('data', (d) => parser.parse(d));
        sock.once('error', reject);
        sock.write(
          mqttPacket.generate(
            {
              cmd: 'connect',
              protocolId: 'MQTT',
              protocolVersion: 5,
              clean: false,
              clientId: `${id}-${i}`,
              keepalive: 30,
              properties: { sessionExpiryInterval: 7 * 24 * 3600 },
            },
            opts,
          ),
        );
      });
      if (present) n++;
      const bye = mqttPacket.generate({ cmd: 'disconnect', reasonCode: 0, properties: present ? {} : { sessionExpiryInterval: 0 } }, opts);
      await new Promise<void>((resolve) => sock.end(bye, () => resolve()));
      sock.destroy();
    }
  }
  return n;
}

export interface FleetRunOptions {
  size?: number;
  /** Target messages per second (default 1,000; the full run 2,000 or more). */
  rate?: number;
  ci?: boolean;
  log?: (line: string) => void;
}

/** Runs one scenario on `broker`; never throws for a failed expectation (see fleetPass). */
export async function runFleetScenario(s: FleetScenario, broker: FleetBroker, pgServerUrl: string, opts: FleetRunOptions = {}): Promise<FleetResult> {
  const size = opts.size ?? s.ciSize;
  const rate = opts.rate ?? 1000;
  const log = opts.log ?? (() => undefined);
  const started = Date.now();
  const notes: string[] = [];
  const facts = new Map<string, number>();
  const pgUrl = await freshDatabase(pgServerUrl, 'weir_fleet');
  await query(pgUrl, readFileSync(join(ROOT, 'migrations/002_telemetry.sql'), 'utf8'));
  await query(pgUrl, TRIGGER);
  // A StatefulSet's name unique per run, so that no session or retained message of an earlier
  // scenario on a long-lived broker meets this one; its pods are <name>-0, <name>-1, ...
  const name = `weir-${s.name}-${Date.now().toString(36)}`;
  const fleet = new Fleet(broker.url, CONNECTIONS);
  const sts = new StatefulSet(fleet, {
    name,
    files: (clientId) => telemetryFiles({ mqttUrl: broker.url, pgUrl, clientId, shareGroup: name, connections: CONNECTIONS }),
    log: (l) => log(`${s.name}: ${l}`),
  });
  try {
    await sts.create(s.replicas, true);
    const ledger = new Ledger();
    const clients = 10;
    const devices = 200;
    let eventAt: number | undefined;
    let acting = true;
    const ctx: FleetContext = {
      sts,
      broker,
      size,
      ci: opts.ci ?? false,
      untilPublished: async (fraction) => {
        while (ledger.acked.size < fraction * size) await sleep(50);
      },
      event: () => {
        eventAt ??= Date.now();
      },
      fact: (k, v) => void facts.set(k, v),
      note: (text) => {
        notes.push(text);
        log(`${s.name}: ${text}`);
      },
      sessionsOf: (ids) => sessionsOf(broker.url, ids),
    };
    log(`${s.name} on ${broker.name}: ${size} messages at ~${rate}/s (${clients} publishers, ${devices} devices), ${s.replicas} replicas`);
    const t0 = Date.now();
    const publishing = publishLoad({
      url: broker.url,
      clients,
      devices,
      size: 200,
      qos: 1,
      limit: size,
      intervalMs: Math.max(1, Math.floor((clients * 1000) / rate)),
      clientIdPrefix: `${name}-pub`,
      onAcked: ledger.onAcked,
      // The stream lasts as long as the orchestrator acts, so that every action happens under load.
      continueWhile: () => acting,
    });
    const acts = s.act(ctx).finally(() => {
      acting = false;
    });
    const [pub, act] = await Promise.allSettled([publishing, acts]);
    if (pub.status === 'rejected') throw pub.reason;
    if (act.status === 'rejected') throw act.reason;
    const streamS = (pub.value.endedAt - pub.value.startedAt) / 1000;
    const reached = Math.round(pub.value.acked / streamS);
    log(
      `${s.name}: stream done, ${ledger.acked.size} acked by the broker in ${streamS.toFixed(0)} s (${reached}/s) after ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );

    const settled = await settle(
      pgUrl,
      TELEMETRY,
      fleet,
      () => ledger.acked.size,
      Math.max(180_000, 60_000 + size / 2),
      (line) => log(`${s.name}: ${line}`),
      s.quietMs ?? 20_000,
    );
    const accounting = await ledger.account(pgUrl, fleet.fallbackFiles());
    const [d] = await query<{ n: string }>(pgUrl, 'SELECT count(*) - count(DISTINCT (device_id, seq)) AS n FROM telemetry_deliveries');
    const [t] = await query<{ last: number | null; delay: number | null }>(
      pgUrl,
      'SELECT extract(epoch FROM max(received_at))::float8 AS last, extract(epoch FROM max(received_at - ts))::float8 AS delay FROM telemetry',
    );
    const stoppedIds = sts.clientIds.filter((id) => !sts.running.some((o) => sts.clientId(o) === id));
    if (stoppedIds.length) {
      // A lost node's sessions may hold nothing (HiveMQ keeps one queue per share group) and still
      // be there until a replica adopts and ends them: up to the limit after the loss, as far as
      // weir's documented counter tells. Then, since an adopter ends a session once nothing has
      // arrived for a moment and the probe would take it over, 5 s more.
      const lost = sts.lostOrdinals.length * CONNECTIONS;
      const until = (eventAt ?? Date.now()) + NODE_LOSS_LIMIT_S * 1000;
      while (lost && Date.now() < until && (await fleet.sum('weir_sessions_adopted_total', 0)) < lost) await sleep(1000);
      if (lost) await sleep(5_000);
      facts.set('sessions left', (facts.get('sessions left') ?? 0) + (await sessionsOf(broker.url, stoppedIds)));
    }
    const adopted = await fleet.sum('weir_sessions_adopted_total', 0);
    if (adopted) notes.push(`${adopted} sessions adopted (weir_sessions_adopted_total of the running pods)`);
    const running = sts.running;
    const rec = await reconcile(fleet, sts.pod(running[0] ?? 0), true);
    if (accounting.lost) notes.push(`lost, e.g. ${accounting.lostSample.slice(0, 5).join(', ')}`);
    if (rec.code !== 0) notes.push(reconcileNote(rec, 2));
    const last = t?.last ?? 0;
    return {
      ...accounting,
      scenario: s.name,
      title: s.title,
      broker: broker.name,
      size,
      rate: reached,
      settled,
      deliveredDuplicates: Number(d?.n ?? 0),
      eventToLastStoredS: eventAt && last ? Math.max(0, Math.round(last - eventAt / 1000)) : 0,
      maxDelayS: Math.round((t?.delay ?? 0) * 10) / 10,
      reconcile: rec,
      exits: sts.exits,
      facts,
      notes,
      peakRssMb: fleet.peakRssMb,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await fleet.dispose();
  }
}

// (1) ------------------------------------------------------------------------------------------
const scale: FleetScenario = {
  name: 'scale-3-1-3',
  title: 'scale 3 → 1 → 3 (highest ordinal first, each after the previous exited; up in order, each ready)',
  replicas: 3,
  ciSize: 12_000,
  async act(ctx) {
    await ctx.untilPublished(0.25);
    ctx.event();
    await ctx.sts.scale(1);
    // The removed pods' client ids: a scale-down that drained leaves no session behind.
    ctx.fact('sessions left', await ctx.sessionsOf([ctx.sts.clientId(1), ctx.sts.clientId(2)]));
    await ctx.untilPublished(0.55);
    await ctx.sts.scale(3);
    ctx.note('scaled to 1 at 25 % of the stream, back to 3 at 55 %');
  },
};

// (1b) The issue's own measurement: a scale-down for good, 3 → 1 and nothing back, so that a share
// left in a removed pod's session shows as lost rather than as a delay until the pod returns.
const scaleDown: FleetScenario = {
  name: 'scale-3-1',
  title: 'scale 3 → 1 for good (the removed pods never come back)',
  replicas: 3,
  ciSize: 10_000,
  async act(ctx) {
    await ctx.untilPublished(0.3);
    ctx.event();
    await ctx.sts.scale(1);
    ctx.note('scaled to 1 at 30 % of the stream');
  },
};

// (2), (3) -------------------------------------------------------------------------------------
function rolling(replicas: number): FleetScenario {
  return {
    name: `rolling-${replicas}`,
    title: `rolling update of ${replicas === 1 ? '1 replica' : `${replicas} replicas`} (reverse ordinal order, each ready before the next)`,
    replicas,
    ciSize: replicas === 1 ? 6_000 : 12_000,
    async act(ctx) {
      await ctx.untilPublished(0.2);
      ctx.event();
      await ctx.sts.rollingUpdate();
      ctx.note('rolling update from 20 % of the stream');
    },
  };
}

// (4) ------------------------------------------------------------------------------------------
const fullStop: FleetScenario = {
  name: 'full-stop',
  title: 'every replica stopped at once for 60 s while devices keep publishing, then started',
  replicas: 3,
  ciSize: 12_000,
  async act(ctx) {
    const downMs = ctx.ci ? 10_000 : 60_000;
    await ctx.untilPublished(0.2);
    ctx.event();
    await ctx.sts.stopAll();
    await sleep(downMs);
    await ctx.sts.create(3);
    ctx.note(`all 3 stopped (SIGTERM at the same instant) at 20 % for ${downMs / 1000} s${ctx.ci ? ' (CI size: 60 s in the full run)' : ''}`);
  },
};

// (5) ------------------------------------------------------------------------------------------
const both: FleetScenario = {
  name: 'two-at-once',
  title: 'the only two replicas terminated at the same instant (Deployment-style), then started again',
  replicas: 2,
  ciSize: 8_000,
  async act(ctx) {
    await ctx.untilPublished(0.25);
    ctx.event();
    await ctx.sts.terminateTogether([0, 1]);
    await sleep(3000);
    await ctx.sts.create(2, true);
    ctx.note('both SIGTERMed in one tick at 25 %, replacements (same client ids) started 3 s after both exited');
  },
};

// (6) ------------------------------------------------------------------------------------------
const nodeLoss: FleetScenario = {
  name: 'node-loss',
  title: 'node loss of one of 3 replicas (SIGKILL, never back)',
  replicas: 3,
  ciSize: 10_000,
  // Its share may wait at the broker until another replica adopts the session: wait out the limit.
  quietMs: (NODE_LOSS_LIMIT_S + 10) * 1000,
  async act(ctx) {
    await ctx.untilPublished(0.3);
    ctx.event();
    await ctx.sts.nodeLoss(2);
    ctx.note('pod 2 killed at 30 % of the stream, its node never back');
  },
  check(r) {
    assert.ok(r.maxDelayS <= NODE_LOSS_LIMIT_S, `the lost node's share stored within ${NODE_LOSS_LIMIT_S} s (longest delay ${r.maxDelayS} s)`);
  },
};

// (7) ------------------------------------------------------------------------------------------
const brokerDuringRoll: FleetScenario = {
  name: 'broker-restart-rolling',
  title: 'the broker restarted (gracefully) during a rolling update of 3',
  replicas: 3,
  ciSize: 12_000,
  brokerRestart: true,
  async act(ctx) {
    await ctx.untilPublished(0.2);
    ctx.event();
    await ctx.sts.rollingUpdate(async (ordinal) => {
      // While pod 1 is down, between its exit and its start.
      if (ordinal !== 1) return;
      const t0 = Date.now();
      await ctx.broker.stop();
      await ctx.broker.start();
      ctx.note(`broker restarted while pod 1 was down, serving again after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    });
  },
};

export const FLEET_SCENARIOS: readonly FleetScenario[] = [scale, scaleDown, rolling(3), rolling(1), fullStop, both, nodeLoss, brokerDuringRoll];

/** The scenario's expectation applied to its outcome: 'pass' or 'FAIL: …'. */
export function fleetVerdict(s: FleetScenario, r: FleetResult): string {
  try {
    fleetPass(r);
    s.check?.(r);
    return 'pass';
  } catch (err) {
    return `FAIL: ${(err as Error).message.split('\n')[0]}`;
  }
}

export interface FleetRow {
  scenario: string;
  broker: FleetBrokerName;
  result?: FleetResult;
  verdict: string;
}

const HEAD = [
  'scenario',
  'broker',
  'published',
  'msg/s',
  'stored',
  'lost',
  'duplicates stored',
  'duplicates delivered',
  'event → last stored s',
  'longest delay s',
  'sessions left',
  'reconcile --sequence',
  'duration s',
  'result',
];

export function fleetTable(rows: FleetRow[]): string {
  const cells = rows.map((row) => {
    const r = row.result;
    if (!r) return [row.scenario, row.broker, ...HEAD.slice(2, -1).map(() => '-'), row.verdict];
    const missing = /(\d+) missing sequence number/.exec(r.reconcile.output)?.[1];
    return [
      r.scenario,
      r.broker,
      r.published,
      r.rate,
      r.stored,
      r.lost,
      r.duplicates,
      r.deliveredDuplicates,
      r.eventToLastStoredS,
      r.maxDelayS,
      r.facts.get('sessions left') ?? 0,
      `exit ${r.reconcile.code}${missing ? `, ${missing} missing` : ''}`,
      r.seconds,
      row.verdict,
    ].map(String);
  });
  const line = (c: string[]) => `| ${c.map((x) => x.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(HEAD), `|${HEAD.map((_, i) => (i >= 2 && i <= 12 && i !== 11 ? ' ---: ' : ' --- ')).join('|')}|`, ...cells.map(line)].join('\n');
}

export function fleetNotes(rows: FleetRow[]): string {
  return rows
    .filter((r) => r.result)
    .map((r) => {
      const x = r.result!;
      const exits = x.exits.map((e) => `${e.ordinal}: ${e.how} ${e.seconds.toFixed(1)} s`).join(', ');
      return `- ${x.scenario} (${x.broker}): ${[...x.notes, `exits ${exits || 'none'}`].join('; ')}${x.settled === 'accounted' ? '' : `; waiting ended: ${x.settled}`}`;
    })
    .join('\n');
}

export const FLEET_BROKER_LABEL: Record<FleetBrokerName, string> = {
  'mosquitto-2.0.21': `Mosquitto ${MOSQUITTO_BUILD_VERSION} (built from Debian's source)`,
  'mosquitto-2.0.11': "Mosquitto 2.0.11 (Debian 12's package)",
  hivemq: 'HiveMQ CE',
};
