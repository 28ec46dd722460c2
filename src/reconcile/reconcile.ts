// weir reconcile: the table the benchmark reports show — what weir received, what each rule
// matched and passed, what each action stored or dead-lettered — beside what each sink holds by
// its own count, and the difference.
//
// Each sink type counts in its own system (SinkType.count): a table's rows beside the ledger its
// sink commits with them (PostgreSQL: every replica, across restarts), or a topic's records beside
// the instances' success counters from --metrics (valid when only weir writes the topic and the
// counters cover the topic's life: no restart).
import type { SinkConfig, WeirConfig } from '../config/types.js';
import { errorText } from '../errors.js';
import type { TargetCount } from '../sinks/types.js';
import type { InstanceMetrics } from './metrics.js';

export interface ReconcileLine {
  rule: string;
  sink: string;
  /** Table or topic. */
  target: string;
  matched?: number;
  passed?: number;
  failed?: number;
  success?: number;
  deadLettered?: number;
  /** What weir says it stored there: ledger rows (PostgreSQL) or success counters (brokers). */
  weirCount?: number;
  /** What the sink holds: rows in the table (all rules writing it), messages on the topic. */
  sinkCount?: number;
  /** sinkCount − weirCount, summed over the rules writing the same target. */
  difference?: number;
  /**
   * Why the sink's own count could not be read (its database unreachable, a table it cannot
   * read): an outage, not a difference, so the line has neither counts nor a difference.
   */
  unread?: string;
  note?: string;
}

export interface ReconcileReport {
  received?: number;
  acked?: number;
  lines: ReconcileLine[];
  /** Every count was read and every difference is 0. */
  ok: boolean;
  /** Some difference is not 0: what weir stored and what a sink holds disagree. */
  differs: boolean;
  /** The sinks whose own count could not be read (their lines say why). */
  unread: string[];
}

export type Progress = (text: string) => void;

export async function reconcile(cfg: WeirConfig, metrics: InstanceMetrics | undefined, progress: Progress): Promise<ReconcileReport> {
  const lines: ReconcileLine[] = [];
  for (const sink of cfg.sinks.values()) {
    const actions = cfg.rules.flatMap((r) => r.actions.filter((a) => a.sink === sink.name).map((a) => ({ rule: r.id, settings: a.settings })));
    const rules = actions.map((a) => a.rule).join(',') || '-';
    if (!sink.sinkType.count) {
      // A broker or a webhook keeps no count weir could read: a line per rule with what weir sent
      // and dead-lettered (from --metrics), to compare with the receiver's own count by hand.
      const note = `a ${sink.sinkType.type} sink has no count of its own: ${
        metrics
          ? 'compare success (what weir sent) with what the receiver counted'
          : 'give --metrics for what weir sent (success) and dead-lettered, and compare that with what the receiver counted'
      }`;
      const ruleIds = [...new Set(actions.map((a) => a.rule))];
      for (const rule of ruleIds.length ? ruleIds : ['-']) lines.push({ rule, sink: sink.name, target: '-', note });
      continue;
    }
    try {
      for (const t of await sink.sinkType.count(sink.settings, actions, { sink: sink.name, progress })) lines.push(...targetLines(sink, t, metrics));
    } catch (err) {
      lines.push({ rule: rules, sink: sink.name, target: '-', unread: errorText(err) });
    }
  }
  for (const l of lines) {
    if (!metrics) continue;
    const r = metrics.rule(l.rule);
    l.matched = r.matched;
    l.passed = r.passed;
    l.failed = r.failed;
    l.success = metrics.action(l.sink, l.rule).success;
    l.deadLettered ??= metrics.action(l.sink, l.rule).deadLettered;
  }
  const differs = lines.some((l) => l.difference !== undefined && l.difference !== 0);
  const unread = [...new Set(lines.filter((l) => l.unread !== undefined).map((l) => l.sink))];
  return { received: metrics?.received, acked: metrics?.acked, lines, ok: !differs && unread.length === 0, differs, unread };
}

/**
 * One line per rule writing the target. What weir stored is the sink's ledger where it keeps one,
 * else the success counters; the difference is the target's, so a target that several rules
 * write shows the same difference on each of their lines.
 */
function targetLines(sink: SinkConfig, t: TargetCount, metrics: InstanceMetrics | undefined): ReconcileLine[] {
  const stored = (rule: string) => (t.ledger ? (t.ledger.get(rule) ?? 0) : metrics?.action(sink.name, rule).success);
  const comparable = t.held !== undefined && (t.ledger !== undefined || metrics !== undefined);
  const total = t.rules.reduce((sum, r) => sum + (stored(r) ?? 0), 0);
  const note =
    t.note ??
    (t.ledger === undefined && metrics === undefined ? 'give --metrics to compare with what weir sent' : undefined) ??
    (t.rules.length > 1 ? "written by several rules: the difference is the target's" : undefined);
  return t.rules.map((rule) => ({
    rule,
    sink: sink.name,
    target: t.target,
    weirCount: stored(rule),
    sinkCount: t.held,
    deadLettered: t.deadLettered ? (t.deadLettered.get(rule) ?? 0) : undefined,
    difference: comparable ? t.held! - total : undefined,
    note,
  }));
}
