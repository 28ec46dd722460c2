// Start sinks → rules → broker connections; stop in reverse. Shutdown stops reading, writes what was read,
// acks what was written, and disconnects: nothing is acked that was not stored.
import type http from 'node:http';
import { loadRules, type WeirConfig } from '../config/load.js';
import { type ConfigError, errorText } from '../errors.js';
import type { Logger } from '../log.js';
import { createMetrics, registerProcessMetrics, type Metrics } from '../metrics/names.js';
import { VERSION } from '../version.js';
import { besideConfig, deadLetterPlace } from './dead-letter-place.js';
import { DeadLetterQueue, fileDeadLetterWriter, sinkDeadLetterWriter, type DeadLetterStore } from './dead-letter.js';
import { boundPort, startHttp } from './http.js';
import { BrokerConnections } from './connections.js';
import type { SessionMode } from './mqtt-session.js';
import { Pipeline } from './pipeline.js';
import { ruleStatus, type ReloadFailure } from './rule-status.js';
import { SinkRunner } from './sink-runner.js';
import type { Sink } from '../sinks/types.js';

export interface StopOptions {
  /** How long to wait for in-flight messages to be stored and acked. */
  graceMs?: number;
  /** Leave the share group for good: unsubscribe, finish, and end the session (MQTT 5 expiry 0). */
  endSession?: boolean;
}

export interface RuntimeOptions {
  /** The broker sessions' lifetime (`weir run --transient`); default persistent. */
  session?: SessionMode;
}

export class Runtime {
  readonly metrics: Metrics;
  readonly runners = new Map<string, SinkRunner>();
  readonly pipeline: Pipeline;
  readonly connections: BrokerConnections;
  private readonly abort = new AbortController();
  private server: http.Server | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private reloadFailure: ReloadFailure | undefined;

  constructor(
    readonly cfg: WeirConfig,
    private readonly log: Logger,
    opts: RuntimeOptions = {},
  ) {
    this.metrics = createMetrics();
    registerProcessMetrics(this.metrics.registry, VERSION);
    // Sinks first, since one of them may keep the dead letters; then the queue of dead letters
    // that the runners and the pipeline write to.
    const sinks = new Map(
      [...cfg.sinks.values()].map((sc) => [
        sc.name,
        sc.type.create(sc.settings, { name: sc.name, log: log.child({ sink: sc.name }), instance: cfg.broker.client_id }),
      ]),
    );
    const fallback = besideConfig(cfg, cfg.deadLetter.fallback_file);
    const dlq = new DeadLetterQueue(
      deadLetterStore(cfg, sinks),
      { initial_ms: 200, max_ms: 10_000, multiplier: 2, max_attempts: 0 },
      this.metrics,
      log,
      this.abort.signal,
      fallback,
    );
    for (const sc of cfg.sinks.values()) this.runners.set(sc.name, new SinkRunner(sc, sinks.get(sc.name)!, dlq, this.metrics, log, this.abort.signal));
    this.pipeline = new Pipeline(cfg.broker, cfg.node, this.runners, dlq, this.metrics, log);
    this.connections = new BrokerConnections(cfg.broker, (msg, settlement) => this.pipeline.handle(msg, settlement), this.metrics, log, opts.session);
  }

  get httpPort(): number | undefined {
    return this.server ? boundPort(this.server) : undefined;
  }

  async start(): Promise<void> {
    this.server = await startHttp(this.cfg.http, this.metrics.registry, {
      readiness: () => this.readiness(),
      rules: () => ruleStatus(this.pipeline.liveRules, this.reloadFailure),
      sinks: () => [...this.runners.values()].map((r) => ({ name: r.name, type: r.cfg.type.type, ...r.status })),
    });
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
    this.log.info({ http_port: this.httpPort, rules: this.cfg.rules.length, sinks: this.runners.size }, 'weir started');
  }

  /** Reloads the rule files; an invalid set is rejected whole and the running rules stay. */
  async reloadRules(): Promise<ConfigError[]> {
    const errors: ConfigError[] = [];
    const rules = loadRules(this.cfg.rulesDir, this.cfg.sinks, errors);
    if (errors.length) {
      for (const e of errors) this.log.error({ code: e.code, err: e.message }, 'rule rejected; the running rules stay');
      this.metrics.rulesReloadFailures.inc();
      this.reloadFailure = { at: Date.now(), errors };
      return errors;
    }
    this.reloadFailure = undefined;
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
    return { ready: broker && runners.every((r) => r.ready) && !this.stopping, detail: { broker, sinks } };
  }

  stop(opts: StopOptions = {}): Promise<void> {
    this.stopping ??= this.doStop(opts);
    return this.stopping;
  }

  private async doStop({ graceMs = 30_000, endSession = false }: StopOptions): Promise<void> {
    this.log.info({ grace_ms: graceMs, end_session: endSession }, endSession ? 'draining: leaving the share group' : 'stopping');
    if (endSession) {
      // Unsubscribe first so the broker stops dealing this member messages, then finish the rest.
      await this.connections.setFilters([]).catch((err: unknown) => this.log.warn({ err: errorText(err) }, 'unsubscribe failed'));
    } else {
      this.connections.pauseReading();
    }
    const deadline = Date.now() + graceMs;
    for (const r of this.runners.values()) await withDeadline(r.flush(), deadline);
    // Leaving for good: wait for a quiet second too, since what the broker dealt before the
    // UNSUBSCRIBE may still be arriving, and ending the session would drop it.
    const drained = await this.connections.drained(Math.max(0, deadline - Date.now()), endSession ? 1000 : 0);
    if (!drained) this.log.warn('grace period over with messages unacked; the broker will redeliver them');
    this.abort.abort();
    clearInterval(this.probeTimer);
    // Closing waits on peers (DISCONNECT written, producers closed on the broker, HTTP clients
    // gone); a peer that does not answer must not hold the process past the grace period, so
    // each step is bounded, with a few seconds of its own when the grace is already spent.
    const closeBy = Math.max(deadline, Date.now() + CLOSE_FLOOR_MS);
    await this.closeStep('mqtt', this.connections.close(endSession && drained), closeBy);
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
    if (!done) this.log.warn({ part: what }, 'closing did not finish in time; left behind');
  }
}

/** Where `weir run` writes dead letters: the place dead-letter-place.ts decides, as `weir dlq` reads it. */
function deadLetterStore(cfg: WeirConfig, sinks: ReadonlyMap<string, Sink>): DeadLetterStore {
  const place = deadLetterPlace(cfg);
  return 'sink' in place ? sinkDeadLetterWriter(sinks.get(place.sink.name)!) : fileDeadLetterWriter(place.file);
}

/** Time each closing step gets when the grace period is already spent. */
const CLOSE_FLOOR_MS = 5_000;

/** Waits for `p`, or until `deadline` (epoch ms), whichever comes first; leaves no timer behind. */
async function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([p, new Promise<undefined>((res) => (timer = setTimeout(() => res(undefined), Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
  return result;
}
