// A sink's health as an operator sees it: the log, /readyz, /sinks and weir_sink_up. Two things
// are told apart because they need different people:
//
// - reachability (`starting` → `up` | `down`): can weir talk to the service at all? Connect, probe
//   and every write report it. A down sink is a service outage: its messages stay unacked and the
//   broker queues them until it is back.
// - actions that fail for good (`failing`, per rule): the service answers but refuses this rule's
//   writes until an operator acts (PostgreSQL: a missing table or column, a wrong type, a missing
//   privilege). Its messages are held and retried slowly; the first write that goes through ends
//   it. A successful probe does not: `SELECT 1` answering says nothing about the table.
//
// The log gets the first connection attempt's outcome whatever it is (an unreachable sink at
// start used to be silent: weir said "started" and the stream stalled at max_unacked), every
// change of reachability, and while a problem lasts a reminder at most once per `remindMs`,
// never one line per retry.
import { errorText } from '../../errors.js';
import { redactUrl, type Logger } from '../../log.js';
import type { Tally } from '../../metrics/tally.js';
import { FATAL_MAX_MS } from '../../retry/backoff.js';

/** How often a problem that lasts is logged again. */
export const REMIND_MS = 60_000;

export type Reachability = 'starting' | 'up' | 'down';

/** What /sinks and /readyz show of a sink. */
export interface SinkHealthStatus {
  /** `up` and no action failing: what /readyz and weir_sink_up report. */
  readonly ready: boolean;
  readonly state: Reachability | 'failing';
  /** Why the sink is not ready ('' when it is). */
  readonly reason: string;
  /** When the current state began (ISO 8601). */
  readonly since: string;
  /** Rules whose writes the sink refuses until an operator acts, with the kind and the error. */
  readonly failing: Record<string, { kind: string; error: string; since: string }>;
}

interface Failure {
  kind: string;
  error: string;
  since: number;
  /** When this failure was last logged (0: not yet). */
  logged: number;
}

export class SinkHealth {
  private reach: Reachability = 'starting';
  private reason = '';
  private since = Date.now();
  private downLogged = 0;
  private readonly failures = new Map<string, Failure>();
  /** The last error seen, kept after the sink is up again (the console shows it with its time). */
  lastError: { readonly at: number; readonly message: string } | undefined;

  constructor(
    private readonly sink: string,
    private readonly log: Logger,
    private readonly upGauge: Tally,
    private readonly remindMs = REMIND_MS,
  ) {}

  get ready(): boolean {
    return this.reach === 'up' && this.failures.size === 0;
  }

  /** The service answered (a connect, a probe, or a write it took). */
  reachable(): void {
    if (this.reach !== 'up') {
      const first = this.reach === 'starting';
      this.log.info({ sink: this.sink, ...(first ? {} : { down_s: seconds(Date.now() - this.since) }) }, first ? 'sink up' : 'sink up again');
      this.enter('up', '');
    }
    this.sync();
  }

  /**
   * The service could not be reached, or a write failed in a way worth retrying soon. With `kind`,
   * the connection itself fails in a way an operator must fix (wrong credentials, no such
   * database): logged at error level and named by it.
   */
  unreachable(err: unknown, kind?: string): void {
    const error = `${kind ? `${kind}: ` : ''}${redactUrl(errorText(err))}`;
    const now = Date.now();
    const level = kind ? 'error' : 'warn';
    this.lastError = { at: now, message: error };
    if (this.reach !== 'down') {
      const first = this.reach === 'starting';
      this.log[level](
        { sink: this.sink, err: error },
        first ? 'sink unreachable at start; its messages wait (unacked) until it is up' : 'sink down; its messages wait (unacked) until it is back',
      );
      this.enter('down', error);
      this.downLogged = now;
    } else {
      this.reason = error;
      if (now - this.downLogged >= this.remindMs) {
        this.log[level]({ sink: this.sink, err: error, down_s: seconds(now - this.since) }, 'sink still down');
        this.downLogged = now;
      }
    }
    this.sync();
  }

  /** The sink refuses `rule`'s writes until an operator acts; `kind` names what to fix. */
  failing(rule: string, kind: string, err: unknown): void {
    const error = redactUrl(errorText(err));
    const now = Date.now();
    this.lastError = { at: now, message: `${kind}: ${error}` };
    let f = this.failures.get(rule);
    if (!f) this.failures.set(rule, (f = { kind, error, since: now, logged: 0 }));
    f.kind = kind;
    f.error = error;
    if (now - f.logged >= this.remindMs) {
      this.log.error(
        { sink: this.sink, rule, kind, err: error, failing_s: seconds(now - f.since) },
        `${kind}: the sink refuses this rule's writes; its messages are held (unacked) and retried every ${FATAL_MAX_MS / 1000} s at most until it is fixed`,
      );
      f.logged = now;
    }
    this.sync();
  }

  /** A write of `rule` went through: whatever stopped it is fixed. */
  wrote(rule: string): void {
    const f = this.failures.get(rule);
    if (f) {
      this.failures.delete(rule);
      this.log.info({ sink: this.sink, rule, kind: f.kind, failed_s: seconds(Date.now() - f.since) }, "sink takes this rule's writes again");
    }
    this.reachable();
  }

  status(): SinkHealthStatus {
    const failing = Object.fromEntries([...this.failures].map(([rule, f]) => [rule, { kind: f.kind, error: f.error, since: iso(f.since) }]));
    const first = [...this.failures.values()][0];
    if (this.reach === 'up' && first) {
      return { ready: false, state: 'failing', reason: `${first.kind}: ${first.error}`, since: iso(first.since), failing };
    }
    const reason = this.reach === 'starting' ? this.reason || 'connecting' : this.reason;
    return { ready: this.ready, state: this.reach, reason, since: iso(this.since), failing };
  }

  private enter(reach: Reachability, reason: string): void {
    this.reach = reach;
    this.reason = reason;
    this.since = Date.now();
  }

  private sync(): void {
    this.upGauge.set(this.ready ? 1 : 0);
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 1000);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
