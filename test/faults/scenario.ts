// The fault suite's scenario runner. A scenario drives weir as a black box: a fresh database, its
// own client ids and share group, weir as its own process (or two), a paced QoS 1 stream of
// messages each with a unique (device, seq), and a fault injected at a point in that stream. Then
// it waits until weir has acked everything (or goes quiet, or a timeout passes) and measures what
// the broker acknowledged against what reached the table or the dead letters, with
// `weir reconcile` and weir's peak memory beside it. A scenario with a table of its own also has
// every stored row compared, value for value, with the message it came from.
import { join } from 'node:path';
import { publishLoad } from '../harness/load/publisher.js';
import { query, telemetryFiles, type Endpoints } from '../e2e/fixtures.js';
import { RowOracle, type ColumnSource, type ContentReport } from '../harness/hostile.js';
import { freshDatabase, startPostgres, type PostgresServer } from '../harness/postgres.js';
import { runCli } from '../harness/weir.js';
import { Fleet, type Member } from './fleet.js';
import { Ledger, TELEMETRY, type Accounting, type CustomPayload, type StoredTable } from './ledger.js';
import { startRestartableBroker, type BrokerName, type RestartableBroker } from './services.js';

/** The run's shared services; a scenario that takes one of them down starts its own instead. */
export interface Services {
  mqttUrl: string;
  pgUrl: string;
}

export interface ScenarioContext {
  readonly size: number;
  /** Seeded, so a run's random fault points can be repeated (the seed is in the notes). */
  readonly rng: () => number;
  readonly fleet: Fleet;
  readonly ledger: Ledger;
  /** The scenario's database. */
  readonly pgUrl: string;
  /** The scenario's own PostgreSQL (`ownPostgres`). */
  readonly postgres?: PostgresServer;
  /** The scenario's own broker (`broker`). */
  readonly broker?: RestartableBroker;
  /** Resolves once the broker has acknowledged `fraction` of the stream. */
  untilPublished(fraction: number): Promise<void>;
  /** A figure the scenario's check reads (an exit code, a count of log lines). */
  fact(name: string, value: number): void;
  note(text: string): void;
}

/**
 * A rule and table of the scenario's own instead of the shipped rule and `telemetry`: the table is
 * created before weir starts, and each stored row is compared with what its message carried.
 */
export interface ScenarioTable extends StoredTable {
  /** CREATE TABLE …, run on the scenario's fresh database. */
  readonly ddl: string;
  /** The rule file's YAML; its action writes the table through the sink `tsdb`. */
  readonly rule: string;
  /** Every column the rule fills, and where from (the oracle's input, test/harness/hostile.ts). */
  readonly columns: Readonly<Record<string, ColumnSource>>;
}

export interface Scenario {
  /** For `--only`. */
  readonly name: string;
  readonly title: string;
  /** A broker of its own, which the scenario restarts; otherwise the shared Mosquitto. */
  readonly broker?: BrokerName;
  /** A PostgreSQL of its own, which the scenario takes down; otherwise the shared one. */
  readonly ownPostgres?: boolean;
  /** weir processes in the share group (default 1). */
  readonly replicas?: number;
  /** Messages in the CI run. */
  readonly ciSize: number;
  /** How long the stream of `size` messages lasts, so that the fault falls inside it. */
  streamSeconds(size: number): number;
  /** weir.yaml settings beyond the fixture's (e2e/fixtures.ts telemetryFiles). */
  readonly weir?: Pick<Endpoints, 'maxPayloadBytes' | 'extra'>;
  /** Its own rule and table (default: the shipped rule into `telemetry`). */
  readonly table?: ScenarioTable;
  /**
   * A run's payload hook: the scenario's own payload for a message (hostile input), or undefined for
   * a plain sample. With `table`, it supplies every message's payload, so that each row can be
   * compared with its message.
   */
  payloads?(size: number): (device: number, seq: number) => CustomPayload | undefined;
  /** `weir reconcile --sequence` where it exists (default true; false where gaps are expected). */
  readonly sequence?: boolean;
  /** The fault, run beside the stream. */
  inject(ctx: ScenarioContext): Promise<void>;
  /** The expectation, with node:assert; throws when it does not hold. */
  check(r: ScenarioResult): void;
}

export interface ReconcileOutcome {
  code: number;
  /** Whether --sequence was given (the scenario wants it). */
  sequence: boolean;
  output: string;
}

export type Settled = 'accounted' | 'quiet' | 'timed out';

export interface ScenarioResult extends Accounting {
  readonly scenario: string;
  readonly title: string;
  readonly broker: string;
  readonly size: number;
  /** How waiting ended: everything stored or dead-lettered, nothing moving any more, or the timeout. */
  readonly settled: Settled;
  readonly reconcile: ReconcileOutcome;
  readonly peakRssMb: number;
  readonly seconds: number;
  readonly facts: ReadonlyMap<string, number>;
  readonly notes: string[];
  readonly ledger: Ledger;
  /** With `table`: every stored row against the message of its (device, seq). */
  readonly content?: ContentReport;
}

export interface RunOptions {
  size?: number;
  seed?: number;
  /** After the stream, how long weir may take to account for everything (default: 60 s + 1 s per 2,000 messages). */
  settleMs?: number;
  log?: (line: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** mulberry32: a small seeded generator, enough for picking fault points. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function reconcile(fleet: Fleet, member: Member, sequence: boolean): Promise<ReconcileOutcome> {
  const args = ['reconcile', '-c', join(member.weir.dir, 'weir.yaml'), ...fleet.metricsUrls().flatMap((u) => ['-m', u])];
  if (sequence) args.push('--sequence', 'telemetry:device_id:seq');
  const r = await runCli(args);
  return { code: r.code, sequence, output: `${r.stdout}${r.stderr}` };
}

/** What `weir reconcile` said when it exited non-zero: its first `lines` DIFFERENCE, GAPS or error lines. */
export function reconcileNote(rec: ReconcileOutcome, lines: number): string {
  return `reconcile: ${rec.output
    .trim()
    .split('\n')
    .filter((l) => /^(DIFFERENCE|GAPS|error)/.test(l))
    .slice(0, lines)
    .join(' / ')}`;
}

/**
 * Polls until every acknowledged message is stored or dead-lettered and weir holds none unacked;
 * logs the counts every 30 s, so a slow weir (still moving) can be told from a stalled one.
 */
export async function settle(
  pgUrl: string,
  table: StoredTable,
  fleet: Fleet,
  published: () => number,
  timeoutMs: number,
  log: (line: string) => void,
  quietMs = 15_000,
): Promise<Settled> {
  const deadline = Date.now() + timeoutMs;
  let logged = Date.now();
  let last = '';
  let since = Date.now();
  let accountedOnce = false;
  for (;;) {
    const [c] = await query<{ s: string; d: string }>(
      pgUrl,
      `SELECT (SELECT count(DISTINCT ("${table.device}", "${table.seq}")) FROM "${table.name}") AS s, (SELECT count(*) FROM weir_dead_letter) AS d`,
    ).catch(() => []);
    const unacked = await fleet.sum('weir_ingest_unacked');
    const stored = Number(c?.s ?? 0);
    const dead = Number(c?.d ?? 0);
    if (stored + dead >= published() && unacked === 0) {
      // Twice in a row, a second apart: a message the broker still held would have arrived.
      if (accountedOnce) return 'accounted';
      accountedOnce = true;
    } else accountedOnce = false;
    const state = `${stored}/${dead}/${unacked}`;
    if (Date.now() - logged >= 30_000) {
      logged = Date.now();
      log(`waiting: ${stored} stored, ${dead} dead-lettered, ${unacked} unacked in weir, of ${published()}`);
    }
    if (state !== last) {
      last = state;
      since = Date.now();
    } else if (unacked === 0 && Date.now() - since >= quietMs) return 'quiet';
    if (Date.now() > deadline) return 'timed out';
    await sleep(1000);
  }
}

/** Runs one scenario at `size` messages; never throws for a failed expectation (see Scenario.check). */
export async function runScenario(s: Scenario, services: Services, opts: RunOptions = {}): Promise<ScenarioResult> {
  const size = opts.size ?? s.ciSize;
  const log = opts.log ?? (() => undefined);
  const brokerLabel = s.broker ? `${s.broker} (own, persistent)` : 'mosquitto';
  const started = Date.now();
  const notes: string[] = [];
  const facts = new Map<string, number>();
  let broker: RestartableBroker | undefined;
  let postgres: PostgresServer | undefined;
  let fleet: Fleet | undefined;
  try {
    if (s.broker) broker = await startRestartableBroker(s.broker);
    if (s.ownPostgres) postgres = await startPostgres();
    const mqttUrl = broker?.url ?? services.mqttUrl;
    const pgUrl = await freshDatabase(postgres?.url ?? services.pgUrl, 'weir_faults');
    if (s.table) await query(pgUrl, s.table.ddl);
    const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);
    const rng = seeded(seed);
    // Unique per run, so a rerun against a long-lived broker never meets an old session.
    const clientId = `faults-${s.name}-${Date.now().toString(36)}`;
    const replicas = s.replicas ?? 1;
    const connections = 2;
    fleet = new Fleet(mqttUrl, connections);
    for (let i = 0; i < replicas; i++) {
      const id = replicas === 1 ? clientId : `${clientId}-${String.fromCharCode(97 + i)}`;
      const files = telemetryFiles({ mqttUrl, pgUrl, clientId: id, shareGroup: clientId, connections, ...s.weir });
      await fleet.start(id, s.table ? { config: files.config, rules: { [`${s.table.name}.yaml`]: s.table.rule } } : files);
    }

    const oracle = s.table && new RowOracle(s.table.name, s.table.columns, s.table);
    const ledger = new Ledger(oracle);
    const seconds = s.streamSeconds(size);
    const rate = size / seconds;
    const clients = Math.min(10, Math.max(2, Math.ceil(rate / 400)));
    const devices = Math.min(500, Math.max(20, Math.round(size / 50)));
    log(`${s.name}: ${size} messages over ~${seconds} s (${clients} publishers, ${devices} devices), seed ${seed}`);
    const f = fleet;
    const ctx: ScenarioContext = {
      size,
      rng,
      fleet: f,
      ledger,
      pgUrl,
      postgres,
      broker,
      untilPublished: async (fraction) => {
        while (ledger.acked.size < fraction * size) await sleep(50);
      },
      fact: (name, value) => void facts.set(name, value),
      note: (text) => {
        notes.push(text);
        log(`${s.name}: ${text}`);
      },
    };
    const custom = s.payloads?.(size);
    const publishing = publishLoad({
      url: mqttUrl,
      clients,
      devices,
      size: 200,
      qos: 1,
      limit: size,
      intervalMs: Math.max(1, Math.round((clients * 1000) / rate)),
      clientIdPrefix: `${clientId}-pub`,
      payloadFor: custom ? ledger.payloadFor(custom) : undefined,
      onAcked: ledger.onAcked,
    });
    const [pub, fault] = await Promise.allSettled([publishing, s.inject(ctx)]);
    if (pub.status === 'rejected') throw pub.reason;
    if (fault.status === 'rejected') throw fault.reason;
    log(`${s.name}: stream done (${ledger.acked.size} acked by the broker) after ${((Date.now() - started) / 1000).toFixed(0)} s; waiting for weir`);

    const table = s.table ?? TELEMETRY;
    const settled = await settle(
      pgUrl,
      table,
      f,
      () => ledger.acked.size,
      opts.settleMs ?? 60_000 + size / 2,
      (line) => log(`${s.name}: ${line}`),
    );
    const accounting = await ledger.account(pgUrl, f.fallbackFiles(), table);
    const content = oracle?.check(await query(pgUrl, oracle.selectSql()));
    if (content)
      notes.push(
        `content: ${content.rows} rows compared with their messages, ${content.compared} values (${content.unpredicted} not predicted), ${content.wrongRows} rows wrong${content.mismatches.length ? `, e.g. ${content.mismatches.slice(0, 3).join(' / ')}` : ''}`,
      );
    // Received (by the running processes, since their last start) tells a broker that stopped
    // delivering from a weir that received and did not store.
    if (accounting.lost) notes.push(`weir received ${await f.sum('weir_ingest_received_total')} messages since its last start`);
    const rec = await reconcile(f, f.member(0), s.sequence ?? true);
    if (accounting.lostSample.length) notes.push(`lost, e.g. ${accounting.lostSample.slice(0, 5).join(', ')}`);
    if (accounting.strays) notes.push(`${accounting.strays} rows or dead letters of no acknowledged message`);
    if (accounting.repeatedDeadLetters) notes.push(`${accounting.repeatedDeadLetters} messages dead-lettered more than once`);
    if (accounting.fallback) notes.push(`${accounting.fallback} dead letters in the fallback file`);
    if (rec.code !== 0) notes.push(reconcileNote(rec, 3));
    return {
      ...accounting,
      scenario: s.name,
      title: s.title,
      broker: brokerLabel,
      size,
      settled,
      reconcile: rec,
      peakRssMb: f.peakRssMb,
      seconds: Math.round((Date.now() - started) / 1000),
      facts,
      notes,
      ledger,
      content,
    };
  } finally {
    await fleet?.dispose();
    await broker?.dispose();
    await postgres?.dispose();
  }
}
