// `weir migrate`, `migrate_on_start` and the demo: every sink whose type can prepare its service
// (its `migrate` hook: PostgreSQL's migrations/ and hypertables) is migrated in turn. The core names
// no sink type; a sink without the hook needs nothing.
import type { SinkConfig, WeirConfig } from '../../config/types.js';
import { errorText } from '../../errors.js';
import { redactUrl, type Logger } from '../../log.js';
import { backoffMs, sleep } from '../../retry/backoff.js';
import type { MigrateReport } from '../../sinks/types.js';
import { REMIND_MS } from '../path/sink-health.js';

export function migratableSinks(cfg: WeirConfig, only?: string): SinkConfig[] {
  return [...cfg.sinks.values()].filter((s) => s.sinkType.migrate !== undefined && (only === undefined || s.name === only));
}

/** Migrates each sink; a failure stops there and is thrown as `<sink>: <why>` without credentials. */
export async function migrateSinks(
  sinks: readonly SinkConfig[],
  opts: { dir?: string; signal?: AbortSignal },
  done: (sink: SinkConfig, r: MigrateReport) => void = () => undefined,
): Promise<void> {
  for (const s of sinks) {
    let r: MigrateReport;
    try {
      r = await s.sinkType.migrate!(s.settings, opts);
    } catch (err) {
      throw new Error(`${s.name}: ${redactUrl(errorText(err))}`, { cause: err });
    }
    done(s, r);
  }
}

/** What /readyz shows while `migrate_on_start` has not succeeded yet. */
export interface MigrationStatus {
  /** migrating: an attempt is under way; waiting: the last one failed, `reason` says why; done. */
  readonly state: 'migrating' | 'waiting' | 'done';
  /** The sink being migrated. */
  readonly sink?: string;
  /** Failed attempts so far (for `sink`). */
  readonly failed_attempts: number;
  /** Why the last attempt failed, without credentials. */
  readonly reason?: string;
  /** When the next attempt starts (ISO 8601), while waiting. */
  readonly next_attempt_at?: string;
}

/**
 * `migrate_on_start` in `weir run`: the migrations of every sink before anything else connects,
 * each sink's retried with its `retry` backoff until it succeeds. A database that is not up yet
 * (an orchestrator starting both at once) is waited for, rather than weir exiting into a crash
 * loop; a migration that fails for good (a changed file, a privilege) is retried the same way,
 * logged and shown on /readyz, until an operator fixes it. The log has the first failure, then a
 * reminder at most once a minute, never one line per attempt.
 */
export class StartupMigration {
  private current: MigrationStatus = { state: 'migrating', failed_attempts: 0 };

  constructor(
    private readonly sinks: readonly SinkConfig[],
    private readonly log: Logger,
  ) {}

  get status(): MigrationStatus {
    return this.current;
  }

  /** Resolves true when every sink is migrated, false when `signal` aborted first. */
  async run(signal: AbortSignal): Promise<boolean> {
    this.log.info({ sinks: this.sinks.map((s) => s.name) }, 'migrating before anything connects (migrate_on_start)');
    for (const s of this.sinks) {
      let logged = 0;
      for (let attempt = 1; ; attempt++) {
        if (signal.aborted) return false;
        this.current = { ...this.current, state: 'migrating', sink: s.name, failed_attempts: attempt - 1 };
        try {
          await migrateSinks([s], { signal }, (_, r) =>
            this.log.info(
              { sink: s.name, applied: r.applied, notes: r.notes.length ? r.notes : undefined, failed_attempts: attempt > 1 ? attempt - 1 : undefined },
              'migrations applied',
            ),
          );
          break;
        } catch (err) {
          if (signal.aborted) return false;
          const wait = backoffMs(s.retry, attempt);
          const reason = errorText(err);
          this.current = { state: 'waiting', sink: s.name, failed_attempts: attempt, reason, next_attempt_at: new Date(Date.now() + wait).toISOString() };
          if (Date.now() - logged >= REMIND_MS) {
            this.log.error(
              { sink: s.name, err: reason, failed_attempts: attempt },
              attempt === 1
                ? 'migrations failed; not ready, nothing is read from the broker, trying again with backoff'
                : 'migrations still failing; not ready, trying again',
            );
            logged = Date.now();
          }
          await sleep(wait, signal);
        }
      }
    }
    this.current = { state: 'done', failed_attempts: 0 };
    return true;
  }
}
