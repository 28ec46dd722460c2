// The live proof (GET /api/reconcile): per rule × sink, hits = stored + dead-lettered + in flight
// from the action's counters (weir_sink_matched = success + dead_lettered + failed + queuing +
// inflight, docs/metrics.md; failed, abandoned at shutdown, counts as not stored), beside what the
// sink's own system holds where its type can count (SinkType.count, as `weir reconcile` asks it).
//
// A sink's count covers its whole history (a table, its ledger), so the console takes the first
// count it makes as its baseline: sink_count is what the sink gained since then plus what weir had
// stored by then, and a difference that appears afterwards shows. `weir reconcile` checks the whole
// history. Rows the console's replay stores of a letter a sink refused (one row each) are taken
// out (credit()); what a replay of a rule's failure stores, or a `weir dlq replay` run beside,
// shows as a surplus (a negative sink_difference is more stored than this runtime counted).
// Counts are asked at most every COUNT_EVERY_MS, in the background, and only while
// someone reads this view; so are the sequence checks of weir.yaml's console.sequence, at most every
// console.sequence_every_s (each reads a whole table), and a gap or a stale key there turns the
// verdict red as `weir reconcile --sequence` exits 1.
import { errorText } from '../../../errors.js';
import { redactUrl } from '../../../log.js';
import type { ReconcileRow, Reconcile, SequenceCheck } from './api.js';
import type { ConsoleDeps } from './deps.js';

export const COUNT_EVERY_MS = 10_000;

interface SinkCount {
  /** rule → what the sink holds for it (its ledger, or a target only that rule writes). */
  readonly byRule: ReadonlyMap<string, number>;
  readonly at: number;
}

export class ReconcileView {
  private counts = new Map<string, SinkCount>();
  /** (sink, rule) → the sink's count at the first count minus what weir had stored then. */
  private readonly baseline = new Map<string, number>();
  private counting: Promise<void> | undefined;
  private lastCount = 0;
  private lastError: string | undefined;
  private sequence: SequenceCheck[] = [];
  private sequenceAt: number | undefined;
  private sequenceError: string | undefined;
  private checking: Promise<void> | undefined;
  private lastCheck = 0;

  constructor(private readonly d: ConsoleDeps) {}

  view(): Reconcile {
    this.refresh();
    const m = this.d.metrics;
    const rows: ReconcileRow[] = [];
    for (const rule of this.d.pipeline.liveRules) {
      for (const sink of new Set(rule.cfg.actions.map((a) => a.sink))) {
        const id = rule.cfg.id;
        const hits = m.sinkMatched.labels(sink, id).value;
        const stored = m.sinkSuccess.labels(sink, id).value;
        const deadLettered = m.sinkDeadLettered.labels(sink, id).value;
        const inFlight = m.sinkInflight.labels(sink, id).value + m.sinkQueuing.labels(sink, id).value;
        const row: ReconcileRow = {
          rule: id,
          sink,
          hits,
          stored,
          dead_lettered: deadLettered,
          in_flight: inFlight,
          difference: hits - stored - deadLettered - inFlight,
        };
        const held = this.counts.get(sink)?.byRule.get(id);
        const key = `${sink}\u0000${id}`;
        if (held !== undefined) {
          if (!this.baseline.has(key)) this.baseline.set(key, held - stored);
          const sinkCount = held - this.baseline.get(key)!;
          rows.push({ ...row, sink_count: sinkCount, sink_difference: sinkCount - stored });
        } else rows.push(row);
      }
    }
    const sequence = this.d.sequenceCheck ? { at: this.sequenceAt, checks: this.sequence, error: this.sequenceError } : undefined;
    // Before the first check has ended the verdict is the counters' (the page says the check is pending).
    const sequenceOk =
      sequence?.at === undefined || (sequence.error === undefined && sequence.checks.every((c) => c.missing === 0 && (c.stale?.keys ?? 0) === 0));
    const ok = sequenceOk && rows.every((r) => r.difference === 0 && (r.sink_difference ?? 0) === 0);
    return { at: Date.now(), rows, ok, ...(sequence ? { sequence } : {}) };
  }

  /**
   * Rows a replay from the console stored for (sink, rule): written by the replay's own sinks, so
   * in the sink's count but not in the runtime's stored counter; taken out of sink_count.
   */
  credit(sink: string, rule: string, rows: number): void {
    const key = `${sink}\u0000${rule}`;
    const b = this.baseline.get(key);
    // Before the first count the baseline, taken then, absorbs them.
    if (b !== undefined) this.baseline.set(key, b + rows);
  }

  /** The last count's error, if the last count failed (for the log and tests). */
  get countError(): string | undefined {
    return this.lastError;
  }

  /**
   * Starts a count when the last one is older than COUNT_EVERY_MS, and the sequence checks when
   * theirs is older than console.sequence_every_s; never waits for either.
   */
  private refresh(): void {
    if (!this.counting && Date.now() - this.lastCount >= COUNT_EVERY_MS) {
      this.lastCount = Date.now();
      this.counting = this.countAll().finally(() => {
        this.counting = undefined;
      });
    }
    const check = this.d.sequenceCheck;
    if (check && !this.checking && Date.now() - this.lastCheck >= this.d.cfg.console.sequence_every_s * 1000) {
      this.lastCheck = Date.now();
      this.checking = check()
        .then(
          (checks) => {
            this.sequence = checks;
            this.sequenceError = undefined;
          },
          (err: unknown) => {
            this.sequenceError = redactUrl(errorText(err));
            this.d.log.debug({ err: this.sequenceError }, 'console: the sequence checks failed');
          },
        )
        .finally(() => {
          this.sequenceAt = Date.now();
          this.checking = undefined;
        });
    }
  }

  /** Waits for the count and the sequence checks in progress (tests: a view after it shows their results). */
  async settled(): Promise<void> {
    this.refresh();
    await Promise.all([this.counting, this.checking]);
  }

  private async countAll(): Promise<void> {
    const next = new Map<string, SinkCount>();
    this.lastError = undefined;
    for (const r of this.d.runners.values()) {
      const type = r.cfg.sinkType;
      if (!type.count) continue;
      const actions = this.d.pipeline.liveRules.flatMap((rule) =>
        rule.cfg.actions.filter((a) => a.sink === r.name).map((a) => ({ rule: rule.cfg.id, settings: a.settings })),
      );
      if (!actions.length) continue;
      try {
        const targets = await type.count(r.cfg.settings, actions, { sink: r.name, progress: () => undefined });
        const byRule = new Map<string, number>();
        for (const t of targets) {
          if (t.ledger) for (const [rule, n] of t.ledger) byRule.set(rule, (byRule.get(rule) ?? 0) + n);
          else if (t.held !== undefined && t.rules.length === 1) byRule.set(t.rules[0]!, (byRule.get(t.rules[0]!) ?? 0) + t.held);
        }
        next.set(r.name, { byRule, at: Date.now() });
      } catch (err) {
        this.lastError = `sink ${r.name}: ${redactUrl(errorText(err))}`;
        this.d.log.debug({ sink: r.name, err: this.lastError }, 'console: could not count the sink');
      }
    }
    this.counts = next;
  }
}
