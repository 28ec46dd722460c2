// weir reconcile: prove the counts. Exit 0 when every sink's own count matches what weir stored.
import { fetchMetrics, type InstanceMetrics } from '../reconcile/metrics.js';
import { reconcile, type ReconcileReport } from '../reconcile/reconcile.js';
import { errorText } from '../errors.js';
import { redactUrl } from '../log.js';
import { CONFIG_HELP, CONFIG_OPTION, parse } from './args.js';
import type { Command } from './commands.js';
import { loadOrReport } from './load-or-report.js';

const HELP = `usage: weir reconcile [--config FILE] [--metrics URL ...] [--json]

For each rule and sink: what weir received, matched, passed, stored and dead-lettered, beside
the sink's own count and the difference. PostgreSQL tables are checked against weir_ledger,
which every batch updates in the same transaction as its rows (all replicas, across restarts).
Kafka topics and Pulsar topics are checked against the success counters of the instances given
with --metrics (valid when only weir writes the topic and no instance restarted).
Exits 0 when every difference is 0, 1 otherwise (the differing lines are listed), 2 on bad usage.

${CONFIG_HELP}  -m, --metrics URL   a running instance's /metrics (repeat for each replica)
  --json              one JSON document instead of the table
`;

export const reconcileCommand: Command = {
  summary: "check every sink's own count against what weir stored",
  async run(args) {
    const p = parse(args, { ...CONFIG_OPTION, metrics: { type: 'string', short: 'm', multiple: true }, json: { type: 'boolean' } }, HELP);
    if ('exit' in p) return p.exit;
    const cfg = loadOrReport(p.values.config);
    if (!cfg) return 1;
    const urls = (p.values.metrics as unknown as string[] | undefined) ?? [];
    let metrics: InstanceMetrics | undefined;
    try {
      metrics = urls.length ? await fetchMetrics(urls) : undefined;
    } catch (err) {
      process.stderr.write(`error: reading --metrics: ${errorText(err)}\n`);
      return 1;
    }
    const tty = process.stderr.isTTY;
    const started = Date.now();
    const progress = (text: string) => {
      if (tty) process.stderr.write(`\r${text} (${((Date.now() - started) / 1000).toFixed(0)} s)\x1b[K`);
      else process.stderr.write(`${text}\n`);
    };
    const report = await reconcile(cfg, metrics, progress);
    if (tty) process.stderr.write('\r\x1b[K');
    process.stdout.write(p.values.json ? `${JSON.stringify(report, null, 2)}\n` : table(report));
    if (!report.ok) {
      for (const l of report.lines.filter((x) => x.difference !== undefined && x.difference !== 0)) {
        process.stderr.write(`DIFFERENCE rule ${l.rule} → ${l.sink} (${l.target}): sink has ${l.sinkCount ?? '?'}, weir stored ${l.weirCount ?? '?'}, difference ${l.difference}${l.note ? ` — ${redactUrl(l.note)}` : ''}\n`);
      }
    }
    return report.ok ? 0 : 1;
  },
};

function table(r: ReconcileReport): string {
  const head = ['rule', 'sink', 'target', 'matched', 'passed', 'failed', 'success', 'dead-lettered', 'weir stored', 'sink count', 'difference'];
  const fmt = (v: number | undefined) => (v === undefined ? '-' : Number.isNaN(v) ? '?' : String(v));
  const rows = r.lines.map((l) => [l.rule, l.sink, l.target, fmt(l.matched), fmt(l.passed), fmt(l.failed), fmt(l.success), fmt(l.deadLettered), fmt(l.weirCount), fmt(l.sinkCount), fmt(l.difference)]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join('  ');
  const notes = r.lines.filter((l) => l.note).map((l) => `  ${l.rule} → ${l.sink}: ${redactUrl(l.note!)}`);
  const top = r.received === undefined ? '' : `received ${r.received}, acked ${r.acked}\n`;
  return `${top}${line(head)}\n${rows.map(line).join('\n')}\n${notes.length ? `${notes.join('\n')}\n` : ''}${r.ok ? 'reconciled: every difference is 0' : 'NOT reconciled'}\n`;
}
