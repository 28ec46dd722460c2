// Start HTTP → migrations (migrate_on_start) → sinks → rules → broker connections; stop in reverse.
// Shutdown stops reading, writes what was read, acks what was written, and disconnects: nothing is
// acked that was not stored.
import type http from 'node:http';
import { loadRules, loadSchemas } from '../../config/load.js';
import type { SinkConfig, WeirConfig } from '../../config/types.js';
import { type ConfigError, errorText } from '../../errors.js';
import type { Logger } from '../../log.js';
import { DEAD_LETTER_POLICY } from '../../retry/backoff.js';
import { createMetrics, registerProcessMetrics, type Metrics } from '../../metrics/names.js';
import { VERSION } from '../../version.js';
import { besideConfig, deadLetterPlace } from './dead-letter-place.js';
import { fileDeadLetterWriter, type DeadLetterStore } from '../../dead-letters/letter.js';
import { DeadLetterQueue, sinkDeadLetterWriter } from '../path/dead-letter-queue.js';
import { boundPort, startHttp } from './http.js';
import { BrokerConnections } from '../ingest/connections.js';
import type { SessionMode } from '../ingest/mqtt-session.js';
import { Pipeline } from '../path/pipeline.js';
import { ruleStatus, type ReloadFailure } from './rule-status.js';
import { SinkRunner } from '../path/sink-runner.js';
import type { Sink } from '../../sinks/types.js';
import type { SchemaRegistry } from '../../schemas/registry.js';
import { StartupMigration } from './migrate-sinks.js';
import { Fleet, fleetOff, type LeaveMode } from '../fleet/fleet.js';
import { Tracer } from '../path/trace.js';
import { History } from './console/history.js';
import { ConsoleApi } from './console/routes.js';
import type { SequenceCheck } from './console/api.js';

export interface StopOptions {
  /** How long to wait for in-flight messages to be stored and acked. */
  graceMs?: number;
  /** Leave the share group for good: unsubscribe, finish, and end the session (MQTT 5 expiry 0). */
  endSession?: boolean;
  /** At SIGTERM: let the fleet decide whether to end the sessions (auto), or force it; overrides endSession when the fleet runs. */
  leave?: LeaveMode;
}

export interface RuntimeOptions {
  /** The broker sessions' lifetime (`weir run --transient`); default persistent. */
  session?: SessionMode;
  /**
   * Sinks to migrate before any sink connects or the broker is subscribed (`migrate_on_start`),
   * retried with backoff until they are; /readyz is not ready meanwhile and says why.
   */
  migrate?: readonly SinkConfig[];
  /** weir.yaml's `console.sequence` checks, for the console's Reconcile view (`weir run` builds it from src/reconcile/). */
  sequenceCheck?: () => Promise<SequenceCheck[]>;
}

export class Runtime {
  readonly metrics: Metrics;
  readonly runners = new Map<string, SinkRunner>();
  readonly pipeline: Pipeline;
  readonly connections: BrokerConnections;
  /** Presence, the leave decision and adoption (src/core/fleet/); undefined when off (fleetOff, or --transient). */
  readonly fleet: Fleet | undefined;
  private readonly abort = new AbortController();
  /** Aborted as soon as stop() is called: ends the wait for migrations. */
  private readonly startup = new AbortController();
  private readonly migration: StartupMigration | undefined;
  private preparing: Promise<boolean> | undefined;
  private server: http.Server | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private reloadFailure: ReloadFailure | undefined;
  /** weir.yaml's schemas as the running rules have them: read again at each reload that succeeds. */
  private schemas: SchemaRegistry;
  /** The parts stop() gave up closing (a peer that did not answer): their sockets stay open. */
  readonly leftBehind: string[] = [];
  /** The console's trace of a rule's next messages (core/path/trace.ts): nothing is traced until asked. */
  readonly tracer = new Tracer();
  /** The console's last 15 minutes (console/history.ts), sampled from start() on. */
  readonly history: History;
  readonly consoleApi: ConsoleApi;
  readonly startedAt = Date.now();

  constructor(
    readonly cfg: WeirConfig,
    private readonly log: Logger,
    opts: RuntimeOptions = {},
  ) {
    this.metrics = createMetrics();
    registerProcessMetrics(this.metrics.registry, VERSION);
    this.schemas = cfg.schemas;
    const aliases = cfg.schemas.sparkplugAliases;
    this.metrics.sparkplugEdgeNodes.sample([], () => aliases.edgeNodes);
    this.metrics.sparkplugEdgeNodesEvicted.sample([], () => aliases.evicted);
    // Sinks first, since one of them may keep the dead letters; then the queue of dead letters
    // that the runners and the pipeline write to.
    const sinks = new Map(
      [...cfg.sinks.values()].map((sc) => [
        sc.name,
        sc.sinkType.create(sc.settings, { name: sc.name, log: log.child({ sink: sc.name }), instance: cfg.broker.client_id, broker: cfg.broker }),
      ]),
    );
    const fallback = besideConfig(cfg, cfg.deadLetter.fallback_file);
    const dlq = new DeadLetterQueue(deadLetterStore(cfg, sinks), DEAD_LETTER_POLICY, this.metrics, log, this.abort.signal, fallback);
    for (const sc of cfg.sinks.values())
      this.runners.set(sc.name, new SinkRunner(sc, sinks.get(sc.name)!, dlq, this.metrics, log, this.abort.signal, this.tracer));
    this.pipeline = new Pipeline(cfg.broker, cfg.node, this.runners, dlq, this.metrics, log, this.tracer);
    this.connections = new BrokerConnections(cfg.broker, (msg, settlement) => this.pipeline.handle(msg, settlement), this.metrics, log, opts.session);
    const off = opts.session === 'transient' ? 'weir run --transient' : fleetOff(cfg.broker);
    if (off) log.info({ why: off }, 'fleet presence off: SIGTERM keeps the sessions unless --drain');
    const filters = () => this.connections.subscriptionFilters(this.pipeline.filters());
    this.fleet = off ? undefined : new Fleet(cfg.broker, (msg, settlement) => this.pipeline.handle(msg, settlement), filters, this.metrics, log);
    if (opts.migrate?.length) this.migration = new StartupMigration(opts.migrate, log);
    const m = this.metrics;
    this.history = new History({
      messagesIn: () => m.ingestReceived.total(),
      rowsOut: () => m.sinkSuccess.total(),
      deadLetters: () => m.deadLetters.total(),
      ruleMatched: () => this.pipeline.liveRules.map((r) => [r.cfg.id, r.counters.matched.value] as const),
    });
    this.consoleApi = new ConsoleApi(
      {
        cfg,
        metrics: m,
        pipeline: this.pipeline,
        runners: this.runners,
        connections: this.connections,
        tracer: this.tracer,
        history: this.history,
        startedAt: this.startedAt,
        log,
        reloadFailure: () => this.reloadFailure,
        schemas: () => this.schemas,
        sequenceCheck: opts.sequenceCheck,
      },
      log.child({ part: 'console' }),
    );
  }

  get httpPort(): number | undefined {
    return this.server ? boundPort(this.server) : undefined;
  }

  /**
   * Serves HTTP (/healthz answers, /readyz says what weir waits for), then runs the migrations,
   * retried until they succeed. Resolves false when stop() came first; start() then does nothing.
   */
  prepare(): Promise<boolean> {
    this.preparing ??= this.doPrepare();
    return this.preparing;
  }

  private async doPrepare(): Promise<boolean> {
    this.server = await startHttp(this.cfg.http, this.metrics.registry, {
      readiness: () => this.readiness(),
      rules: () => ruleStatus(this.pipeline.liveRules, this.reloadFailure),
      sinks: () => [...this.runners.values()].map((r) => ({ name: r.name, type: r.cfg.sinkType.type, ...r.status })),
      consoleApi: (req, res, url, authed) => this.consoleApi.handle(req, res, url, authed),
    });
    this.history.start();
    if (this.migration) return this.migration.run(this.startup.signal);
    return !this.stopping;
  }

  async start(): Promise<void> {
    // Nothing connects, and the broker is not subscribed, before the migrations succeeded.
    if (!(await this.prepare()) || this.stopping) return;
    // Sinks connect in the background: while one is down its messages stay unacked, the connections
    // stops reading at max_unacked, and the broker queues. Nothing waits on a sink to start.
    for (const r of this.runners.values()) void r.connect();
    this.probeTimer = setInterval(() => {
      for (const r of this.runners.values()) void r.probe();
    }, 5000);
    this.probeTimer.unref();
    this.logRuleWarnings(this.cfg.rules);
    this.pipeline.setRules(this.cfg.rules);
    await this.connections.start(this.pipeline.filters());
    this.fleet?.start();
    this.log.info({ http_port: this.httpPort, rules: this.cfg.rules.length, sinks: this.runners.size }, 'weir started');
  }

  /** Reloads the rule files; an invalid set is rejected whole and the running rules stay. */
  async reloadRules(): Promise<ConfigError[]> {
    const errors: ConfigError[] = [];
    // The schema files are read again with the rules; the Sparkplug aliases learnt so far stay.
    const schemas = loadSchemas(this.cfg.schemaEntries, this.cfg.file, this.cfg.schemas.sparkplugAliases, errors);
    const rules = loadRules(this.cfg.rulesDir, this.cfg.sinks, errors, { schemas, broker: this.cfg.broker });
    if (errors.length) {
      for (const e of errors) this.log.error({ code: e.code, err: e.message }, 'rule rejected; the running rules stay');
      this.metrics.rulesReloadFailures.inc();
      this.reloadFailure = { at: Date.now(), errors };
      return errors;
    }
    this.reloadFailure = undefined;
    this.schemas = schemas;
    this.logRuleWarnings(rules);
    this.pipeline.setRules(rules);
    await this.connections.setFilters(this.pipeline.filters());
    this.log.info({ rules: rules.map((r) => r.id) }, 'rules reloaded');
    return [];
  }

  /** What `weir check` shows as warnings (a JSONata rule's template naming a key it may not make), said once per load. */
  private logRuleWarnings(rules: WeirConfig['rules']): void {
    for (const w of rules.flatMap((r) => r.warnings)) this.log.warn({ code: w.code, err: w.message }, 'rule warning');
  }

  readiness(): { ready: boolean; detail: Record<string, unknown> } {
    const runners = [...this.runners.values()];
    // Each sink with its state and, when not ready, why: a typo in a URL or a missing column shows here.
    const sinks = Object.fromEntries(
      runners.map((r) => {
        const { ready, state, reason } = r.status;
        return [r.name, ready ? { ready, state } : { ready, state, reason }];
      }),
    );
    const broker = this.connections.connected;
    const migration = this.migration?.status;
    const migrated = !migration || migration.state === 'done';
    // Connected is not enough while another process keeps taking the session (session-takeover.ts).
    const takenOver = this.connections.takenOver;
    const ready = migrated && broker && takenOver === undefined && runners.every((r) => r.ready) && !this.stopping;
    const detail: Record<string, unknown> = { broker };
    if (takenOver !== undefined) detail.broker_reason = takenOver;
    detail.sinks = sinks;
    if (!migrated) detail.migration = migration;
    return { ready, detail };
  }

  stop(opts: StopOptions = {}): Promise<void> {
    this.startup.abort();
    this.stopping ??= this.doStop(opts);
    return this.stopping;
  }

  private async doStop({ graceMs: asked, endSession: asEndSession = false, leave }: StopOptions): Promise<void> {
    // The grace period is what bounds the wait for held messages: one that is not a number would
    // make every deadline below NaN, and a comparison with NaN never ends the wait (`weir run
    // --grace-ms abc` once waited for ever; the CLI refuses it now, this keeps any caller safe).
    const graceMs = asked !== undefined && Number.isFinite(asked) && asked >= 0 ? asked : DEFAULT_GRACE_MS;
    // Whether this replica leaves the share group for good: the fleet decides (src/core/fleet/fleet.ts).
    const endSession = this.fleet && leave ? await this.fleet.leave(leave) : leave ? leave === 'drain' : asEndSession;
    this.log.info({ grace_ms: graceMs, end_session: endSession }, endSession ? 'draining: leaving the share group' : 'stopping');
    const deadline = Date.now() + graceMs;
    if (endSession) {
      // Unsubscribe first so the broker stops dealing this member messages, then finish the rest;
      // a broker that does not answer the UNSUBSCRIBE gets the grace period, no more.
      const unsubscribed = this.connections.setFilters([]).catch((err: unknown) => this.log.warn({ err: errorText(err) }, 'unsubscribe failed'));
      await withDeadline(unsubscribed, deadline);
    } else {
      this.connections.pauseReading();
    }
    for (const r of this.runners.values()) await withDeadline(r.flush(), deadline);
    // Leaving for good: wait for a quiet second too, since what the broker dealt before the
    // UNSUBSCRIBE may still be arriving, and ending the session would drop it.
    const drained = await this.connections.drained(Math.max(0, deadline - Date.now()), endSession ? 1000 : 0);
    if (!drained) this.log.warn('grace period over with messages unacked; the broker will redeliver them');
    this.abort.abort();
    clearInterval(this.probeTimer);
    this.history.stop();
    await this.consoleApi.close();
    // Closing waits on peers (DISCONNECT written, producers closed on the broker, HTTP clients
    // gone); a peer that does not answer must not hold the process past the grace period, so
    // each step is bounded, with a few seconds of its own when the grace is already spent.
    const closeBy = Math.max(deadline, Date.now() + CLOSE_FLOOR_MS);
    await this.closeStep('mqtt', this.connections.close(endSession && drained), closeBy);
    if (this.fleet) await this.closeStep('fleet presence', this.fleet.finish(endSession && drained), closeBy);
    await Promise.all([...this.runners.values()].map((r) => this.closeStep(`sink ${r.name}`, r.close(), closeBy)));
    const server = this.server;
    if (server) {
      server.closeAllConnections();
      await this.closeStep('http', new Promise<void>((res) => server.close(() => res())), closeBy);
    }
    this.log.info('stopped');
  }

  private async closeStep(what: string, p: Promise<unknown>, deadline: number): Promise<void> {
    const done = await withDeadline(
      p.then(
        () => true,
        (err: unknown) => {
          this.log.warn({ part: what, err: errorText(err) }, 'closing failed');
          return true;
        },
      ),
      deadline,
    );
    if (!done) {
      this.log.warn({ part: what }, 'closing did not finish in time; left behind');
      this.leftBehind.push(what);
    }
  }
}

/** Where `weir run` writes dead letters: the place dead-letter-place.ts decides, as `weir dlq` reads it. */
function deadLetterStore(cfg: WeirConfig, sinks: ReadonlyMap<string, Sink>): DeadLetterStore {
  const place = deadLetterPlace(cfg);
  return 'sink' in place ? sinkDeadLetterWriter(sinks.get(place.sink.name)!) : fileDeadLetterWriter(place.file);
}

/** How long stop() waits for in-flight messages unless told otherwise. */
export const DEFAULT_GRACE_MS = 30_000;

/** Time each closing step gets when the grace period is already spent. */
export const CLOSE_FLOOR_MS = 5_000;

/** Waits for `p`, or until `deadline` (epoch ms), whichever comes first; leaves no timer behind. */
async function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([p, new Promise<undefined>((res) => (timer = setTimeout(() => res(undefined), Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
  return result;
}
