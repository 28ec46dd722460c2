// weir reconcile --sequence: gaps at the source. The ledger check proves that what weir received
// was stored; it cannot see a message that never reached weir (lost by a broker restart, a
// device's full buffer, a bridge). Devices number their messages, so the table itself shows
// those losses: per key (device), the sequence numbers that should be there and are not.
//
// One statement, in the table's (key, time, seq) order — the telemetry primary key's, so the
// scan is an index-only scan and nothing is sorted:
//
//   rows ──lag(seq) OVER (PARTITION BY key ORDER BY time, seq)──▶ (key, seq, prev)
//        ──GROUP BY key──▶ rows, runs, duplicates, missing, first missing ranges
//        ──▶ totals + the 10 keys with the most missing
//
// A run is a stretch of rows whose seq never goes down. A row whose seq is lower than the row
// before it starts a new run: the device restarted from 0, or its counter wrapped. Inside a run
// the rows are in seq order, so one look at the previous row is enough: seq = prev is a
// duplicate, seq > prev + 1 leaves seq − prev − 1 numbers missing. Summed over a run that is
// max − min + 1 − distinct, without a DISTINCT. What this cannot see: a loss at the start of a
// run (the first messages after a restart: the run starts at whatever arrived first), at the end
// of the last run, or across a wrap; and with --since/--until, a loss at the window's edges.
//
// The end of the last run is what staleness is for: a device whose last messages were lost (a
// replica killed with them in its session, a weir frozen while the broker held them) leaves no
// gap, only silence. With a timestamp column the same aggregate also takes, per key, its last
// row, its silence — now minus its last row ("now" is --until when given, else the database's
// now()) — and its usual interval: the time per sequence number, that is the time from its first
// row to its last over the sequence numbers its runs span (rows − runs − duplicates + missing,
// from the gap counts). That is the device's own count of what it sent in that time, so an outage
// in which it went on counting (messages lost on their way, what this command looks for) does not
// stretch the interval however long it was. What does stretch it is time in which the device did
// not count: asleep with its counter kept, sending only on change, or switched off and restarted
// (the time across a restart is in the span, its numbers are not): such a key is judged against
// its average, those silences included, and found stale later (--since narrows the history).
// It is one pass with no window function added: the median of the gaps between stored rows,
// taken first, needed lag(time) and sorted each key's gaps (10M rows: +45% in one run, and
// lag(time) alone +20%, docs/benchmarks.md), and it measured the stored rows, not the device: a
// key that lost every other message had twice its interval, half its missing went unestimated.
// A key silent for more than N of its intervals (--stale-after, default 10) is stale, and
// floor(silence / interval) − 1 of its messages are estimated expected and missing — sequence
// numbers, the unit the gaps are counted in; the −1 leaves room for the one that may be on its
// way. A key needs two rows at different times, its seq going up, to have an interval; one
// without is not judged.
import type pg from 'pg';
import { WeirError } from '../errors.js';
import { quoteIdent, quoteTable } from '../sql/quote.js';

/** TABLE:KEY_COLUMN:SEQ_COLUMN[:TIME_COLUMN], as given to --sequence. */
export interface SequenceSpec {
  readonly table: string;
  readonly key: string;
  readonly seq: string;
  /** Omitted: the table's `ts` column if it has one, else none (order by seq only). */
  readonly time?: string;
}

/** Bounds on the time column: anything PostgreSQL's timestamptz accepts; until is exclusive. */
export interface TimeRange {
  readonly since?: string;
  readonly until?: string;
}

/** A spec checked against the table: the statement to run and its parameters. */
export interface SequencePlan {
  readonly table: string;
  readonly key: string;
  readonly seq: string;
  readonly time: string | null;
  readonly since?: Date;
  readonly until?: Date;
  /** Silences longer than this many of a key's intervals are stale; null: no timestamp column to judge by. */
  readonly staleAfter: number | null;
  readonly sql: string;
  readonly params: string[];
}

export interface SequenceKey {
  key: string | null;
  rows: number;
  missing: number;
  duplicates: number;
  runs: number;
  /** Holes (ranges of consecutive missing numbers) in the key. */
  ranges: number;
  /** The first holes in the key's order, [first missing, last missing]. */
  firstMissing: Array<[number, number]>;
}

/** A key silent for longer than --stale-after of its usual intervals. */
export interface StaleKey {
  key: string | null;
  rows: number;
  /** Its last row's time (ISO 8601). */
  lastAt: string;
  silenceS: number;
  /** Its usual interval: the time per sequence number over its rows (see the header). */
  intervalS: number;
  /** Messages expected since its last row and not stored: floor(silence / interval) − 1. */
  missing: number;
}

/** Silence at the tail of each key, against the key's own usual interval. */
export interface Staleness {
  /** The time silences are measured to: --until, else the database's now() (ISO 8601). */
  now: string;
  staleAfter: number;
  /** Keys with an interval (two rows or more, at different times): the ones judged. */
  keysTimed: number;
  staleKeys: number;
  /** Summed over the stale keys. */
  missing: number;
  /** Up to WORST_KEYS stale keys, the longest silent (in intervals) first. */
  stalest: StaleKey[];
}

export interface SequenceResult {
  table: string;
  key: string;
  seq: string;
  time: string | null;
  since?: string;
  until?: string;
  keys: number;
  rows: number;
  missing: number;
  duplicates: number;
  runs: number;
  keysWithGaps: number;
  /** Up to WORST_KEYS keys with missing numbers, most missing first. */
  worst: SequenceKey[];
  /** null without a timestamp column (nothing to measure a silence by). */
  staleness: Staleness | null;
}

export const WORST_KEYS = 10;
/** --stale-after's default: silent for more than 10 of its usual intervals. */
export const DEFAULT_STALE_AFTER = 10;
/** Holes listed per worst key: enough to start looking, bounded whatever the table holds. */
const FIRST_RANGES = 3;
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;
const INTEGER_TYPES = new Set(['smallint', 'integer', 'bigint']);

export function parseSequenceSpec(text: string): SequenceSpec {
  const parts = text.split(':');
  if ((parts.length !== 3 && parts.length !== 4) || parts.some((p) => p.trim() === '')) {
    throw new WeirError('reconcile.sequence_spec', `--sequence '${text}': expected TABLE:KEY_COLUMN:SEQ_COLUMN[:TIME_COLUMN], each part non-empty`);
  }
  const [table, key, seq, time] = parts as [string, string, string, string | undefined];
  // The same names an action's `table` accepts (optionally schema-qualified).
  if (!TABLE_NAME.test(table))
    throw new WeirError('reconcile.sequence_spec', `--sequence '${text}': '${table}' is not a table name (letters, digits, _; optionally schema.table)`);
  return time === undefined ? { table, key, seq } : { table, key, seq, time };
}

/**
 * Checks the spec against the table's columns and the range's times; builds the statement.
 * staleAfter: how many of its intervals a key may be silent (DEFAULT_STALE_AFTER when omitted);
 * null leaves staleness out (the statement as it was before, which the benchmark times beside it).
 */
export async function planSequence(
  client: pg.Client,
  spec: SequenceSpec,
  range: TimeRange = {},
  staleAfter: number | null = DEFAULT_STALE_AFTER,
): Promise<SequencePlan> {
  const columns = await tableColumns(client, spec.table);
  const column = (name: string, role: string) => {
    const c = columns.get(name);
    if (!c) throw new WeirError('reconcile.no_column', `table ${spec.table} has no column ${name} (the ${role} column of --sequence)`);
    return c;
  };
  column(spec.key, 'key');
  const seqType = column(spec.seq, 'sequence');
  if (!INTEGER_TYPES.has(seqType.type))
    throw new WeirError(
      'reconcile.column_type',
      `column ${spec.seq} of ${spec.table} is ${seqType.type}: a sequence column must be smallint, integer or bigint`,
    );
  const time = spec.time ?? (columns.has('ts') ? 'ts' : null);
  const timeType = time === null ? undefined : column(time, 'time');
  const bounded = range.since !== undefined || range.until !== undefined;
  if (bounded && !timeType)
    throw new WeirError('reconcile.no_time_column', `table ${spec.table} has no column ts: --since/--until need a time column, given as TABLE:KEY:SEQ:TIME`);
  if (bounded && timeType!.category !== 'D')
    throw new WeirError('reconcile.column_type', `column ${time} of ${spec.table} is ${timeType!.type}: --since/--until need a date/time column`);
  const since = range.since === undefined ? undefined : await parseTime(client, '--since', range.since);
  const until = range.until === undefined ? undefined : await parseTime(client, '--until', range.until);
  if (since && until && since.getTime() >= until.getTime())
    throw new WeirError('reconcile.bad_time', `--since ${range.since} is not before --until ${range.until}`);
  const params: string[] = [];
  const where = [`${quoteIdent(spec.seq)} IS NOT NULL`];
  // The bound in the column's own type, so that an index on the column can serve it.
  if (range.since !== undefined) where.push(`${quoteIdent(time!)} >= CAST($${params.push(range.since)}::timestamptz AS ${timeType!.type})`);
  const untilParam = range.until === undefined ? undefined : `$${params.push(range.until)}::timestamptz`;
  if (untilParam) where.push(`${quoteIdent(time!)} < CAST(${untilParam} AS ${timeType!.type})`);
  // Silence is measured on timestamps only (a date column's difference is days, a number's unknown).
  let stale: StaleSql | null = null;
  if (staleAfter !== null && timeType?.type.startsWith('timestamp')) {
    stale = { now: `CAST(${untilParam ?? 'now()'} AS ${timeType.type})`, after: `$${params.push(String(staleAfter))}::float8` };
  }
  const sql = sequenceSql({ table: spec.table, key: spec.key, seq: spec.seq, time }, where, stale);
  return { table: spec.table, key: spec.key, seq: spec.seq, time, since, until, staleAfter: stale ? staleAfter : null, sql, params };
}

/** The staleness part of the statement: "now" in the time column's type, and N (both SQL expressions). */
export interface StaleSql {
  readonly now: string;
  readonly after: string;
}

/**
 * The statement: the window over the key's order, one aggregate row per key (materialized once,
 * since both the totals and the worst keys read it: one row per key, small), then the totals.
 * `sum(seq - prev - 1)` is bigint arithmetic: fine for any counter narrower than 63 bits.
 * The frame is ROWS, not the default RANGE: lag() ignores the frame, but under RANGE PostgreSQL
 * 15 compares every row with its neighbour to find peers (10M rows: 7.3-8.7 s instead of
 * 8.9-10.3 s). A since/until window filters before the window function: a short one is read
 * through the ts index and sorted (1% of 10M rows: 0.4 s), a long one from the primary key.
 */
export function sequenceSql(c: { table: string; key: string; seq: string; time: string | null }, where: string[], stale: StaleSql | null = null): string {
  const [k, s] = [quoteIdent(c.key), quoteIdent(c.seq)];
  const t = c.time === null ? null : quoteIdent(c.time);
  const order = t ? `${t}, ${s}` : s;
  const gap = 'seq > prev + 1';
  // The aggregates of the gap counts, written once: the interval below reuses them, and PostgreSQL
  // computes identical aggregates of one query once.
  const runs = 'count(*) FILTER (WHERE prev IS NULL OR seq < prev)';
  const duplicates = 'count(*) FILTER (WHERE seq = prev)';
  const missing = `coalesce(sum(seq - prev - 1) FILTER (WHERE ${gap}), 0)`;
  // Staleness (see the header): per key its last row, its silence, and its interval — the time
  // from its first row to its last, per sequence number its runs span. No lag(time): a second
  // window function cost a fifth more on 10M rows (docs/benchmarks.md), for the restarts alone.
  const isStale = stale ? `silence_s > ${stale.after} * interval_s` : '';
  const estimate = 'greatest(floor(silence_s / interval_s) - 1, 0)';
  const numbers = `count(*) - ${runs} - ${duplicates} + ${missing}`;
  const perKeyTime = stale
    ? `,
    max(at)::timestamptz AS last_at,
    extract(epoch FROM ${stale.now} - max(at)) AS silence_s,
    nullif(extract(epoch FROM max(at) - min(at)), 0) / nullif(${numbers}, 0) AS interval_s`
    : '';
  const totalsTime = stale
    ? `,
  CAST(${stale.now} AS timestamptz) AS now_at,
  count(*) FILTER (WHERE interval_s IS NOT NULL) AS keys_timed,
  count(*) FILTER (WHERE ${isStale}) AS stale_keys,
  coalesce(sum(${estimate}) FILTER (WHERE ${isStale}), 0) AS stale_missing,
  (SELECT coalesce(json_agg(z), '[]') FROM (
     SELECT k AS key, rows, last_at, silence_s, interval_s, ${estimate} AS missing
     FROM per_key WHERE ${isStale} ORDER BY silence_s / interval_s DESC, k LIMIT ${WORST_KEYS}) z) AS stalest`
    : '';
  return `WITH ordered AS (
  SELECT ${k} AS key, ${s} AS seq, lag(${s}) OVER w AS prev${t ? `, ${t} AS at` : ''}
  FROM ${quoteTable(c.table)}
  WHERE ${where.join(' AND ')}
  WINDOW w AS (PARTITION BY ${k} ORDER BY ${order} ROWS UNBOUNDED PRECEDING)
), per_key AS MATERIALIZED (
  SELECT key::text AS k,
    count(*) AS rows,
    ${runs} AS runs,
    ${duplicates} AS duplicates,
    ${missing} AS missing,
    count(*) FILTER (WHERE ${gap}) AS ranges,
    (array_agg(json_build_array(prev + 1, seq - 1) ORDER BY ${t ? 'at, seq' : 'seq'}) FILTER (WHERE ${gap}))[1:${FIRST_RANGES}] AS first_missing${perKeyTime}
  FROM ordered
  GROUP BY key
)
SELECT count(*) AS keys,
  coalesce(sum(rows), 0) AS rows,
  coalesce(sum(missing), 0) AS missing,
  coalesce(sum(duplicates), 0) AS duplicates,
  coalesce(sum(runs), 0) AS runs,
  count(*) FILTER (WHERE missing > 0) AS keys_with_gaps,
  (SELECT coalesce(json_agg(w), '[]') FROM (
     SELECT k AS key, rows, missing, duplicates, runs, ranges, to_json(first_missing) AS first_missing
     FROM per_key WHERE missing > 0 ORDER BY missing DESC, k LIMIT ${WORST_KEYS}) w) AS worst${totalsTime}
FROM per_key`;
}

export async function checkSequence(client: pg.Client, plan: SequencePlan): Promise<SequenceResult> {
  type Row = {
    keys: string;
    rows: string;
    missing: string;
    duplicates: string;
    runs: string;
    keys_with_gaps: string;
    worst: Array<Record<string, unknown>>;
    now_at?: Date;
    keys_timed?: string;
    stale_keys?: string;
    stale_missing?: string;
    stalest?: Array<Record<string, unknown>>;
  };
  const [r] = (await client.query<Row>(plan.sql, plan.params)).rows;
  const staleness: Staleness | null =
    plan.staleAfter === null
      ? null
      : {
          now: r!.now_at!.toISOString(),
          staleAfter: plan.staleAfter,
          keysTimed: Number(r!.keys_timed),
          staleKeys: Number(r!.stale_keys),
          missing: Number(r!.stale_missing),
          stalest: r!.stalest!.map((z) => ({
            key: z.key as string | null,
            rows: Number(z.rows),
            lastAt: new Date(z.last_at as string).toISOString(),
            silenceS: Number(z.silence_s),
            intervalS: Number(z.interval_s),
            missing: Number(z.missing),
          })),
        };
  return {
    table: plan.table,
    key: plan.key,
    seq: plan.seq,
    time: plan.time,
    ...(plan.since ? { since: plan.since.toISOString() } : {}),
    ...(plan.until ? { until: plan.until.toISOString() } : {}),
    keys: Number(r!.keys),
    rows: Number(r!.rows),
    missing: Number(r!.missing),
    duplicates: Number(r!.duplicates),
    runs: Number(r!.runs),
    keysWithGaps: Number(r!.keys_with_gaps),
    worst: r!.worst.map((w) => ({
      key: w.key as string | null,
      rows: Number(w.rows),
      missing: Number(w.missing),
      duplicates: Number(w.duplicates),
      runs: Number(w.runs),
      ranges: Number(w.ranges),
      firstMissing: ((w.first_missing as Array<[number, number]> | null) ?? []).map(([a, b]) => [Number(a), Number(b)]),
    })),
    staleness,
  };
}

async function tableColumns(client: pg.Client, table: string): Promise<Map<string, { type: string; category: string }>> {
  // Quoted as the statement will quote it, so the check and the query name the same table.
  const found = await client.query<{ name: string; type: string; category: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, t.typcategory AS category
     FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`,
    [quoteTable(table)],
  );
  if (!found.rows.length) throw new WeirError('reconcile.no_table', `no table ${table} in the database`);
  return new Map(found.rows.map((c) => [c.name, { type: c.type, category: c.category }]));
}

/** The server's reading of a time, so that --since accepts exactly what the column compares. */
async function parseTime(client: pg.Client, option: string, text: string): Promise<Date> {
  try {
    const [r] = (await client.query<{ t: Date | null }>('SELECT $1::timestamptz AS t', [text])).rows;
    // pg reads 'infinity' as a number, not a Date: a bound must be a point in time.
    if (!(r?.t instanceof Date) || Number.isNaN(r.t.getTime())) throw new Error('not a finite time');
    return r.t;
  } catch (err) {
    throw new WeirError(
      'reconcile.bad_time',
      `${option} '${text}' is not a time PostgreSQL accepts (ISO 8601, e.g. 2024-12-04T10:00:00Z): ${(err as Error).message}`,
      { cause: err },
    );
  }
}
