// Adoption of an orphaned member's sessions. A member that died (its will said gone) or stopped as
// the last one (stopped), and has not come back for fleet.adopt_after_s, leaves sessions that a
// share group keeps dealing messages to. One live member (member.ts, adopterOf: the lowest client
// id, every member computes the same) connects under each of those client ids with clean start
// false, stores what arrives through its own pipeline (same sinks, ack after commit),
// unsubscribes, waits until nothing more arrives and nothing is held, and ends the session
// (DISCONNECT with session expiry 0). Then it clears the member's presence record.
//
// The owner coming back wins without a fight: as soon as its record says live, or the broker ends
// an adopted connection (a takeover: DISCONNECT 0x8E, or Mosquitto 2.0.11's silent close), the
// adopter lets go of that session, keeping it (no reconnect, no session expiry 0); what it held
// unacked is redelivered to the owner (at-least-once). An orphan still orphaned adopt_after_s
// later is tried again, so an adopter that dies is replaced the same way.
import type { BrokerConfig } from '../../config/schema.js';
import { sessionEvents } from '../ingest/connections.js';
import { type MessageHandler, MqttSession } from '../ingest/mqtt-session.js';
import type { Logger } from '../../log.js';
import type { Metrics } from '../../metrics/names.js';
import { sleep } from '../../retry/backoff.js';
import { adopterOf, type MemberRecord, orphans } from './member.js';
import type { Presence } from './presence.js';

/** Nothing received for this long, and nothing held, after the UNSUBSCRIBE: the queue is stored. */
const QUIET_MS = 2_000;

/** How often the view is checked for orphans whose time has come. */
const CHECK_MS = 1_000;

type Outcome = { ended: true; messages: number } | { ended: false; why: string; messages: number };

interface Run {
  readonly stop: AbortController;
  /** Settles when every session of the run is ended or let go of. */
  done?: Promise<void>;
}

/** At SIGTERM, how long the adoptions under way get to let go of their sessions. */
const LET_GO_MS = 5_000;

export class Adoption {
  /** Orphan → when this replica first saw it orphaned while live. */
  private readonly since = new Map<string, number>();
  private readonly runs = new Map<string, Run>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly cfg: BrokerConfig,
    private readonly presence: Presence,
    private readonly handler: MessageHandler,
    /** The share group's subscriptions, as this replica's own sessions have them. */
    private readonly filters: () => string[],
    private readonly metrics: Metrics,
    private readonly log: Logger,
  ) {}

  /** Members being adopted now. */
  get adopting(): string[] {
    return [...this.runs.keys()];
  }

  start(): void {
    if (this.cfg.fleet.adopt_after_s <= 0) return;
    this.timer = setInterval(() => this.check(), CHECK_MS);
    this.timer.unref();
  }

  /** Lets go of every adoption under way, keeping the sessions (SIGTERM: another member adopts them later). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const run of this.runs.values()) run.stop.abort();
    // Each run closes its own connections (letGo); a broker that does not answer gets LET_GO_MS.
    if (!this.runs.size) return;
    const all = Promise.all([...this.runs.values()].map((r) => r.done));
    // The timer is cleared once the runs are done: it must not keep a stopped weir alive.
    const timeout = new AbortController();
    await Promise.race([all, sleep(LET_GO_MS, timeout.signal)]);
    timeout.abort();
  }

  private check(now = Date.now()): void {
    if (this.stopped || !this.presence.connected) return;
    const view = this.presence.view;
    const self = this.presence.clientId;
    if (view.get(self)?.state !== 'live') return;
    const orphaned = new Map(orphans(view).map((r) => [r.client_id, r]));
    for (const id of this.since.keys()) if (!orphaned.has(id)) this.since.delete(id);
    for (const [id, record] of orphaned) {
      if (id === self) continue;
      const since = this.since.get(id) ?? now;
      this.since.set(id, since);
      if (this.runs.has(id) || now - since < this.cfg.fleet.adopt_after_s * 1000 || adopterOf(view, id) !== self) continue;
      void this.adopt(record);
    }
    // The owner is back: let go at once rather than wait for the broker to hand its session over.
    for (const [id, run] of this.runs) if (view.get(id)?.state === 'live') run.stop.abort();
  }

  private async adopt(orphan: MemberRecord): Promise<void> {
    const id = orphan.client_id;
    const run: Run = { stop: new AbortController() };
    this.runs.set(id, run);
    let settle = () => {};
    run.done = new Promise((r) => (settle = r));
    try {
      await this.adoptAll(orphan, run);
    } finally {
      this.runs.delete(id);
      settle();
    }
    if (!this.stopped) await this.presence.announce('live', { adopting: this.adopting });
  }

  private async adoptAll(orphan: MemberRecord, run: Run): Promise<void> {
    const id = orphan.client_id;
    await this.presence.announce('live', { adopting: this.adopting });
    const started = Date.now();
    this.log.info(
      { member: id, state: orphan.state, sessions: orphan.connections, adopt_after_s: this.cfg.fleet.adopt_after_s },
      'adopting the sessions of an orphaned member',
    );
    const outcomes = await Promise.all(Array.from({ length: orphan.connections }, (_, i) => this.adoptSession(id, i, run)));
    const messages = outcomes.reduce((n, o) => n + o.messages, 0);
    const ended = outcomes.filter((o) => o.ended).length;
    this.metrics.sessionsAdopted.inc(ended);
    this.metrics.sessionsAdoptionAbandoned.inc(outcomes.length - ended);
    if (ended === outcomes.length) {
      this.since.delete(id);
      // Only if the member is still orphaned: a record it wrote since (it came back) stays.
      const now = this.presence.view.get(id);
      if (now && now.incarnation === orphan.incarnation && now.state === orphan.state) await this.presence.clear(id);
      this.log.info({ member: id, sessions: ended, messages, ms: Date.now() - started }, 'adopted the sessions of an orphaned member: stored and ended');
    } else {
      // Tried again adopt_after_s from now if still orphaned.
      this.since.set(id, Date.now());
      const why = outcomes.flatMap((o) => (o.ended ? [] : [o.why]));
      this.log.warn({ member: id, sessions_ended: ended, messages, why: [...new Set(why)] }, 'adoption given up; the sessions stay');
    }
  }

  private async adoptSession(member: string, index: number, run: Run): Promise<Outcome> {
    const clientId = `${member}-${index}`;
    const base = sessionEvents(this.metrics, clientId);
    let messages = 0;
    let dropped: string | undefined;
    const session: MqttSession = new MqttSession(
      { ...this.cfg, client_id: member },
      index,
      this.handler,
      this.log,
      {
        ...base,
        onReceived: () => {
          messages++;
          this.metrics.sessionsAdoptedMessages.inc();
          base.onReceived?.();
        },
        onState: (up) => {
          base.onState?.(up);
          // The broker ended the connection (the owner took its session back, or the broker went):
          // no reconnect (pauseReading stops it); the session stays as it is.
          if (!up && !run.stop.signal.aborted) {
            dropped = 'the broker ended the connection (the owner took its session back, or a broker restart)';
            session.pauseReading();
            run.stop.abort();
          }
        },
      },
      'persistent',
    );
    const signal = run.stop.signal;
    const gaveUp = (): Outcome => ({ ended: false, why: dropped ?? (this.stopped ? 'this replica is stopping' : 'the owner is live again'), messages });
    // Subscribing again on connect is harmless (the session has the same subscription); it is
    // what lets the UNSUBSCRIBE below name the filters.
    await session.setFilters(this.filters());
    session.start();
    await Promise.race([session.whenConnected(), new Promise((r) => signal.addEventListener('abort', r, { once: true }))]);
    if (signal.aborted) return this.letGo(session, gaveUp());
    await session.setFilters([]).catch((err: unknown) => this.log.warn({ client_id: clientId, err: String(err) }, 'adoption: unsubscribe failed'));
    // What the session queued arrives after the CONNACK; wait a quiet spell before the first check.
    await sleep(QUIET_MS, signal);
    while (!signal.aborted && !(await session.drained(QUIET_MS * 5, QUIET_MS))) {
      /* still storing what arrives */
    }
    if (signal.aborted) return this.letGo(session, gaveUp());
    await session.close(true);
    return { ended: true, messages };
  }

  /** Closes an adopted connection without ending its session: the owner, or the next adopter, gets it whole. */
  private async letGo(session: MqttSession, outcome: Outcome): Promise<Outcome> {
    await session.close(false);
    return outcome;
  }
}
