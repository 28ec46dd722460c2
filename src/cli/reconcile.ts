// weir reconcile: prove the counts. Exit 0 when every sink's own count matches what weir stored
// and, with --sequence, when no device's sequence numbers have gaps; 1 for a real difference only,
// so that a script can tell it from 3, a count that could not be read (a database down is an
// outage to report, never a difference of NaN).
import { fetchMetrics, type InstanceMetrics, METRICS_TIMEOUT_MS } from '../reconcile/metrics.js';
import { reconcile, type ReconcileReport } from '../reconcile/reconcile.js';
import { brokerCounts, type BrokerCounts } from '../reconcile/broker-counts.js';
import { DEFAULT_STALE_AFTER, parseSequenceSpec, type SequenceResult, type SequenceSpec } from '../reconcile/sequence.js';
import { prepareSequence, type SequenceTargets } from '../reconcile/sequence-target.js';
import { errorText, WeirError } from '../errors.js';
import { redactUrl } from '../log.js';
import { CONFIG_HELP, CONFIG_OPTION, numberOption, parse, usageError } from './args.js';
import { columns } from './columns.js';
import type { Command } from './command.js';
import { loadOrReport } from './load-or-report.js';

const HELP = `usage: weir reconcile [--config FILE] [--metrics URL ...] [--sequence SPEC ...] [--stale-after N] [--broker] [--json]

For each rule and sink: what weir received, matched, passed, stored and dead-lettered, beside
the sink's own count and the difference. PostgreSQL tables are checked against weir_ledger,
which every batch updates in the same transaction as its rows (all replicas, across restarts).
Kafka topics and Pulsar topics are checked against the success counters of the instances given
with --metrics (valid when only weir writes the topic and no instance restarted).

--sequence also looks for messages that never reached weir: per key (device), the sequence
numbers missing from the table, in the key's time order. A lower seq than the row before
starts a new run (a restart or a wrap-around); gaps are counted inside each run, so a loss at
the start of a run cannot be seen (docs/operations.md).
A loss at the end is seen as silence: per key, the time since its last row (to --until, else
the database's now()) against the key's usual interval (the time per sequence number over its
rows, so that messages lost on the way do not stretch it); a key silent for more than N
intervals is stale, with floor(silence / interval) - 1 sequence numbers estimated missing.
Reported always; with --stale-after given, a stale key exits 1 as a gap does.
With --metrics, what each replica holds per connection (received, not yet settled) and how long
its oldest unacked message has waited; a replica that does not answer within
${METRICS_TIMEOUT_MS / 1000} s (stopped, or its event loop stuck) could not be read: exit 3.
Exits 0 when every difference is 0 and no sequence number is missing, 1 when one is not (the
differing lines and the gaps are listed), 2 on bad usage, 3 when something could not be
compared: a --metrics URL, a sink's database or the broker could not be read (named; the sink's
line says "could not read"), or weir.yaml is invalid. A difference found elsewhere still exits 1.

${CONFIG_HELP}  -m, --metrics URL   a running instance's /metrics (repeat for each replica); with
                      http.basic_auth, http://USER:PASSWORD@host:port/metrics
  --sequence TABLE:KEY_COLUMN:SEQ_COLUMN[:TIME_COLUMN]
                      check a table's sequence numbers (repeatable); without TIME_COLUMN the
                      table's ts column if it has one, else order by seq alone
  --stale-after N     a key silent for more than N of its usual intervals is stale, and
                      exits 1 (default: ${DEFAULT_STALE_AFTER}, reported only)
  --since TIME        only rows with time >= TIME (ISO 8601, or any PostgreSQL timestamptz)
  --until TIME        only rows with time < TIME
  --sink NAME         the postgres sink whose database --sequence reads (default: the one
                      writing the table, else the first)
  --broker            also show the broker's own counts ($SYS: messages received, sent,
                      dropped, still stored), broker-wide since its start (Mosquitto)
  --json              one JSON document instead of the tables
`;

/** Exit code when a count could not be read: distinct from 1, a real difference. */
const UNREAD = 3;

const OPTIONS = {
  ...CONFIG_OPTION,
  metrics: { type: 'string', short: 'm', multiple: true },
  sequence: { type: 'string', multiple: true },
  'stale-after': numberOption({ unit: 'intervals', min: 0, aboveMin: true, fraction: true }),
  since: { type: 'string' },
  until: { type: 'string' },
  sink: { type: 'string' },
  broker: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

export const reconcileCommand: Command = {
  summary: "check every sink's own count against what weir stored",
  async run(args) {
    const p = parse(args, OPTIONS, HELP);
    if ('exit' in p) return p.exit;
    const v = p.values;
    const specs = sequenceSpecs(v.sequence as unknown as string[] | undefined, v);
    if (typeof specs === 'string') return usageError(specs, HELP);
    const staleAfter = v['stale-after'];
    const cfg = loadOrReport(v.config);
    if (!cfg) return UNREAD;
    const urls = (v.metrics as unknown as string[] | undefined) ?? [];
    let metrics: InstanceMetrics | undefined;
    if (urls.length) {
      const read = await fetchMetrics(urls);
      if (!read.ok) {
        // A replica that does not answer may be the one holding messages: nothing is reconciled.
        for (const u of read.unread) process.stderr.write(`error: reading --metrics ${u.url}: ${redactUrl(u.error)}\n`);
        const text = `not reconciled: could not read ${read.unread.map((u) => u.url).join(', ')}`;
        process.stdout.write(v.json ? `${JSON.stringify({ ok: false, metricsUnread: read.unread }, null, 2)}\n` : `${text}\n`);
        return UNREAD;
      }
      metrics = read.metrics;
    }
    let targets: SequenceTargets | undefined;
    try {
      targets = specs.length ? await prepareSequence(cfg, specs, { since: v.since, until: v.until }, v.sink, staleAfter) : undefined;
    } catch (err) {
      // A spec the table contradicts is bad usage; a database that cannot be reached is not.
      if (err instanceof WeirError) return usageError(err.message, HELP);
      process.stderr.write(`error: --sequence: ${redactUrl(errorText(err))}\n`);
      return UNREAD;
    }
    let broker: BrokerCounts | undefined;
    if (v.broker) {
      try {
        broker = await brokerCounts(cfg.broker);
      } catch (err) {
        process.stderr.write(`error: --broker: reading $SYS from ${redactUrl(cfg.broker.url)}: ${errorText(err)}\n`);
        return UNREAD;
      }
    }
    const tty = process.stderr.isTTY;
    const started = Date.now();
    const progress = (text: string) => {
      if (tty) process.stderr.write(`\r${text} (${((Date.now() - started) / 1000).toFixed(0)} s)\x1b[K`);
      else process.stderr.write(`${text}\n`);
    };
    let report: ReconcileReport;
    let sequence: SequenceResult[] = [];
    try {
      report = await reconcile(cfg, metrics, progress);
      if (targets) sequence = await targets.run(progress);
    } catch (err) {
      if (tty) process.stderr.write('\r\x1b[K');
      process.stderr.write(`error: ${redactUrl(errorText(err))}\n`);
      return UNREAD;
    } finally {
      await targets?.close();
    }
    if (tty) process.stderr.write('\r\x1b[K');
    const gaps = sequence.filter((s) => s.missing > 0);
    const stale = sequence.filter((s) => s.staleness && s.staleness.staleKeys > 0);
    // Stale keys are a finding only when asked for: silence may be a device switched off.
    const failStale = staleAfter !== undefined && stale.length > 0;
    const ok = report.ok && gaps.length === 0 && !failStale;
    if (p.values.json)
      process.stdout.write(
        `${JSON.stringify({ ...report, ok, ...(metrics ? { held: metrics.held } : {}), ...(targets ? { sequence } : {}), ...(broker ? { broker: broker.values } : {}) }, null, 2)}\n`,
      );
    else
      process.stdout.write(
        table(report) + (metrics ? heldTable(metrics) : '') + (targets ? sequenceTables(sequence) : '') + (broker ? brokerTable(broker) : ''),
      );
    for (const l of report.lines.filter((x) => x.difference !== undefined && x.difference !== 0)) {
      process.stderr.write(
        `DIFFERENCE rule ${l.rule} → ${l.sink} (${l.target}): sink has ${l.sinkCount ?? '?'}, weir stored ${l.weirCount ?? '?'}, difference ${l.difference}${l.note ? ` — ${redactUrl(l.note)}` : ''}\n`,
      );
    }
    for (const l of report.lines.filter((x) => x.unread !== undefined))
      process.stderr.write(`error: could not read the count of sink ${l.sink}: ${redactUrl(l.unread!)}\n`);
    for (const g of gaps) process.stderr.write(`GAPS: ${g.table}: ${plural(g.missing, 'missing sequence number')} over ${plural(g.keysWithGaps, 'key')}\n`);
    for (const z of stale)
      process.stderr.write(
        `STALE: ${z.table}: ${plural(z.staleness!.staleKeys, 'key')} silent for more than ${z.staleness!.staleAfter} intervals, about ${plural(z.staleness!.missing, 'message')} expected and missing\n`,
      );
    // A difference is a finding whatever else could not be read; an unread count alone is not one.
    if (report.differs || gaps.length || failStale) return 1;
    return report.unread.length ? UNREAD : 0;
  },
};

/** The --sequence specs, or the usage error; --since, --until, --sink and --stale-after only mean something with them. */
function sequenceSpecs(texts: string[] | undefined, v: { since?: string; until?: string; sink?: string; 'stale-after'?: number }): SequenceSpec[] | string {
  const given = (['since', 'until', 'sink', 'stale-after'] as const).filter((o) => v[o] !== undefined);
  if (!texts?.length) return given.length ? `--${given[0]} applies to --sequence, and none was given` : [];
  try {
    return texts.map(parseSequenceSpec);
  } catch (err) {
    return errorText(err);
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function table(r: ReconcileReport): string {
  const head = ['rule', 'sink', 'target', 'matched', 'passed', 'failed', 'success', 'dead-lettered', 'weir stored', 'sink count', 'difference'];
  const fmt = (v: number | undefined) => (v === undefined ? '-' : String(v));
  const rows = r.lines.map((l) => [
    l.rule,
    l.sink,
    l.target,
    fmt(l.matched),
    fmt(l.passed),
    fmt(l.failed),
    fmt(l.success),
    fmt(l.deadLettered),
    fmt(l.weirCount),
    l.unread === undefined ? fmt(l.sinkCount) : 'could not read',
    fmt(l.difference),
  ]);
  const notes = r.lines.flatMap((l) => [
    ...(l.unread === undefined ? [] : [`  ${l.rule} → ${l.sink}: could not read: ${redactUrl(l.unread)}`]),
    ...(l.note ? [`  ${l.rule} → ${l.sink}: ${redactUrl(l.note)}`] : []),
  ]);
  const top = r.received === undefined ? '' : `received ${r.received}, acked ${r.acked}\n`;
  const verdict = r.ok
    ? 'reconciled: every difference is 0'
    : r.differs
      ? 'NOT reconciled'
      : `not reconciled: could not read the count of ${r.unread.map((s) => `sink ${s}`).join(', ')}`;
  return `${top}${columns(head, rows, 'lllrrrrrrrr')}${notes.length ? `${notes.join('\n')}\n` : ''}${verdict}\n`;
}

function sequenceTables(results: SequenceResult[]): string {
  const head = ['table', 'key', 'seq', 'time', 'keys', 'rows', 'missing', 'duplicates', 'runs'];
  const rows = results.map((s) => [s.table, s.key, s.seq, s.time ?? '-', ...[s.keys, s.rows, s.missing, s.duplicates, s.runs].map(String)]);
  let out = `\nsequence numbers, per key in time order (a drop in seq starts a new run):\n${columns(head, rows, 'llllrrrrr')}`;
  for (const s of results) {
    if (s.since || s.until)
      out += `  ${s.table}: rows with ${s.time} ${[s.since && `>= ${s.since}`, s.until && `< ${s.until}`].filter(Boolean).join(' and ')}\n`;
    if (!s.worst.length) continue;
    const ranges = (k: SequenceResult['worst'][number]) =>
      k.firstMissing.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)).join(', ') + (k.ranges > k.firstMissing.length ? ', …' : '');
    const worst = s.worst.map((k) => [k.key ?? 'NULL', String(k.rows), String(k.missing), String(k.duplicates), String(k.runs), ranges(k)]);
    // Named by the whole spec: the same table may be checked in two orders.
    const spec = [s.table, s.key, s.seq, ...(s.time ? [s.time] : [])].join(':');
    out += `worst keys of ${spec} (${plural(s.keysWithGaps, 'key')} with gaps):\n${columns(['key', 'rows', 'missing', 'duplicates', 'runs', 'first missing'], worst, 'lrrrrl', '  ')}`;
  }
  out += stalenessTables(results);
  const gaps = results.filter((s) => s.missing > 0).length;
  return out + (gaps ? 'GAPS in the sequence numbers\n' : 'no gaps in the sequence numbers\n');
}

/** Silence at the tail: per table the keys judged and stale, then the stalest keys. */
function stalenessTables(results: SequenceResult[]): string {
  const judged = results.filter((s) => s.staleness);
  if (!judged.length) return '';
  const z0 = judged[0]!.staleness!;
  const head = ['table', 'keys timed', `stale (> ${z0.staleAfter} intervals)`, 'estimated missing'];
  const rows = judged.map((s) => [s.table, ...[s.staleness!.keysTimed, s.staleness!.staleKeys, s.staleness!.missing].map(String)]);
  let out = `\nsilence at the tail, per key against its usual interval (the time per sequence number over its rows), to ${z0.now}:\n${columns(head, rows, 'lrrr')}`;
  for (const s of judged) {
    const z = s.staleness!;
    if (!z.stalest.length) continue;
    const spec = [s.table, s.key, s.seq, s.time].join(':');
    const keys = z.stalest.map((k) => [
      k.key ?? 'NULL',
      String(k.rows),
      k.lastAt,
      duration(k.silenceS),
      duration(k.intervalS),
      (k.silenceS / k.intervalS).toFixed(1),
      String(k.missing),
    ]);
    out += `stalest keys of ${spec} (${plural(z.staleKeys, 'key')} stale):\n${columns(
      ['key', 'rows', 'last row', 'silent for', 'usual interval', 'intervals', 'estimated missing'],
      keys,
      'lrlrrrr',
      '  ',
    )}`;
  }
  const stale = judged.filter((s) => s.staleness!.staleKeys > 0).length;
  return out + (stale ? 'STALE keys: silent for longer than they usually are\n' : 'no stale keys\n');
}

/** Seconds as a person reads them: 0.5 s, 42 s, 3 min 20 s, 2 h 5 min, 3 d 4 h. */
function duration(s: number): string {
  if (s < 10) return `${Number(s.toFixed(1))} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const units: Array<[string, number]> = [
    ['d', 86_400],
    ['h', 3_600],
    ['min', 60],
    ['s', 1],
  ];
  const i = units.findIndex(([, n]) => s >= n);
  const [[a, an], [b, bn]] = [units[i]!, units[i + 1]!];
  const whole = Math.floor(s / an);
  const rest = Math.floor((s - whole * an) / bn);
  return rest ? `${whole} ${a} ${rest} ${b}` : `${whole} ${a}`;
}

/** What each replica holds, per connection: received and not settled, and the oldest unacked's wait. */
function heldTable(m: InstanceMetrics): string {
  if (!m.held.length) return '';
  const fmt = (v: number | undefined, f: (n: number) => string = String) => (v === undefined ? '-' : f(v));
  const rows = m.held.map((h) => [
    h.instance,
    h.connection,
    h.connected === undefined ? '-' : h.connected ? 'yes' : 'no',
    fmt(h.held),
    fmt(h.oldestUnackedS, (n) => (n === 0 ? '-' : duration(n))),
  ]);
  const total = m.held.reduce((a, h) => a + (h.held ?? 0), 0);
  return `\nheld by weir (received, not yet stored or dead-lettered), per connection:\n${columns(
    ['instance', 'connection', 'connected', 'held', 'oldest unacked waited'],
    rows,
    'lllrr',
    '  ',
  )}  ${plural(total, 'message')} held in all\n`;
}

/** The broker's $SYS values: shown beside weir's counts, never compared (broker-wide, reset at its start). */
function brokerTable(b: BrokerCounts): string {
  const names = Object.keys(b.values);
  if (!names.length) return "\nthe broker's own counts: none (no $SYS answer within 2 s; Mosquitto publishes them, most brokers do not)\n";
  return `\nthe broker's own counts ($SYS, broker-wide since its start):\n${columns(
    ['name', 'value'],
    names.map((n) => [n, b.values[n]!]),
    'lr',
    '  ',
  )}`;
}
