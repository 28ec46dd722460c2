// weir reconcile: the table the benchmark reports show — what weir received, what each rule
// matched and passed, what each action stored or dead-lettered — beside what each sink holds by
// its own count, and the difference.
//
// PostgreSQL: the table's row count against weir_ledger, which every batch updates in the same
// statement as its rows (so it survives restarts and covers every replica): 0 difference means
// every row weir committed is there and nothing else is. Kafka and Pulsar: the broker's own count
// (Σ end − start offsets; partitioned-stats msgInCounter) against the instances' success counters,
// valid when only weir writes the topic and the counters cover the topic's life (no restart).
import pg from 'pg';
import type { SinkConfig, WeirConfig } from '../config/load.js';
import { errorText } from '../errors.js';
import { silentLogger } from '../log.js';
import { countTopic, withKafkaAdmin } from '../sinks/kafka/count.js';
import type { KafkaConfig } from '../sinks/kafka/spec.js';
import { LEDGER_TABLE, quoteTable } from '../sinks/postgres/statements.js';
import { countPulsarMessages } from '../sinks/pulsar/count.js';
import type { PulsarConfig } from '../sinks/pulsar/spec.js';
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
  note?: string;
}

export interface ReconcileReport {
  received?: number;
  acked?: number;
  lines: ReconcileLine[];
  ok: boolean;
}

export type Progress = (text: string) => void;

export async function reconcile(cfg: WeirConfig, metrics: InstanceMetrics | undefined, progress: Progress): Promise<ReconcileReport> {
  const lines: ReconcileLine[] = [];
  for (const sink of cfg.sinks.values()) {
    const actions = cfg.rules.flatMap((r) => r.actions.filter((a) => a.sink === sink.name).map((a) => ({ rule: r.id, settings: a.settings })));
    try {
      if (sink.type.type === 'postgres') lines.push(...(await postgresLines(sink, actions, progress)));
      else if (sink.type.type === 'kafka') lines.push(...(await kafkaLines(sink, actions, metrics)));
      else if (sink.type.type === 'pulsar') lines.push(...(await pulsarLines(sink, actions, metrics)));
    } catch (err) {
      lines.push({ rule: actions.map((a) => a.rule).join(',') || '-', sink: sink.name, target: '-', note: `cannot count: ${errorText(err)}`, difference: Number.NaN });
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
  const ok = lines.every((l) => l.difference === undefined || l.difference === 0);
  return { received: metrics?.received, acked: metrics?.acked, lines, ok };
}

async function postgresLines(sink: SinkConfig, actions: Array<{ rule: string; settings: Record<string, unknown> }>, progress: Progress): Promise<ReconcileLine[]> {
  const client = new pg.Client({ connectionString: String(sink.settings.url), application_name: 'weir-reconcile' });
  await client.connect();
  try {
    const ledger = await client.query<{ rule_id: string; table_name: string; rows: string }>(
      `SELECT rule_id, table_name, sum(rows) AS rows FROM ${quoteTable(LEDGER_TABLE)} WHERE sink = $1 GROUP BY rule_id, table_name`,
      [sink.name],
    );
    const dead = await client
      .query<{ rule_id: string; n: string }>(`SELECT rule_id, count(*) AS n FROM ${quoteTable(String(sink.settings.dead_letter_table ?? 'weir_dead_letter'))} GROUP BY rule_id`)
      .then((r) => new Map(r.rows.map((x) => [x.rule_id, Number(x.n)])))
      .catch(() => new Map<string, number>());
    const pairs = new Map<string, { rule: string; table: string; rows: number }>();
    for (const a of actions) pairs.set(`${a.rule}\u0000${a.settings.table}`, { rule: a.rule, table: String(a.settings.table), rows: 0 });
    for (const l of ledger.rows) {
      const key = `${l.rule_id}\u0000${l.table_name}`;
      const p = pairs.get(key) ?? { rule: l.rule_id, table: l.table_name, rows: 0 };
      p.rows = Number(l.rows);
      pairs.set(key, p);
    }
    const tables = new Map<string, number>();
    for (const table of new Set([...pairs.values()].map((p) => p.table))) {
      progress(`counting rows of ${table}…`);
      const [r] = (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteTable(table)}`)).rows;
      tables.set(table, Number(r!.n));
    }
    const byTable = new Map<string, number>();
    for (const p of pairs.values()) byTable.set(p.table, (byTable.get(p.table) ?? 0) + p.rows);
    return [...pairs.values()].map((p) => ({
      rule: p.rule,
      sink: sink.name,
      target: p.table,
      weirCount: p.rows,
      deadLettered: dead.get(p.rule) ?? 0,
      sinkCount: tables.get(p.table)!,
      difference: tables.get(p.table)! - byTable.get(p.table)!,
      note: [...pairs.values()].filter((q) => q.table === p.table).length > 1 ? 'table shared by several rules: difference is the table\'s' : undefined,
    }));
  } finally {
    await client.end();
  }
}

async function kafkaLines(sink: SinkConfig, actions: Array<{ rule: string; settings: Record<string, unknown> }>, metrics: InstanceMetrics | undefined): Promise<ReconcileLine[]> {
  const out: ReconcileLine[] = [];
  const topics = new Map<string, string[]>();
  for (const a of actions) {
    const topic = String(a.settings.topic);
    if (topic.includes('${')) {
      out.push({ rule: a.rule, sink: sink.name, target: topic, note: 'topic is a template: not counted' });
      continue;
    }
    topics.set(topic, [...(topics.get(topic) ?? []), a.rule]);
  }
  await withKafkaAdmin(sink.settings as unknown as KafkaConfig, silentLogger, async (admin) => {
    for (const [topic, rules] of topics) {
      const c = await countTopic(admin, topic);
      out.push(...brokerLines(sink.name, topic, rules, c.records, metrics));
    }
  });
  return out;
}

async function pulsarLines(sink: SinkConfig, actions: Array<{ rule: string }>, metrics: InstanceMetrics | undefined): Promise<ReconcileLine[]> {
  const cfg = sink.settings as unknown as PulsarConfig;
  const c = await countPulsarMessages(cfg);
  return brokerLines(sink.name, cfg.topic, actions.map((a) => a.rule), c.total, metrics);
}

function brokerLines(sink: string, topic: string, rules: string[], count: number, metrics: InstanceMetrics | undefined): ReconcileLine[] {
  const success = (rule: string) => metrics?.action(sink, rule).success;
  const total = rules.reduce((a, r) => a + (success(r) ?? 0), 0);
  return rules.map((rule) => ({
    rule,
    sink,
    target: topic,
    weirCount: success(rule),
    sinkCount: count,
    difference: metrics ? count - total : undefined,
    note: metrics ? undefined : 'give --metrics to compare with what weir sent',
  }));
}
