// SQL text for the insert modes, and JS values shaped for the column they go into.
import { WholeFloat } from '../../rules/values/floats.js';
import { quoteIdent, quoteTable } from '../../sql/quote.js';

/** One action's compiled mapping, shared by all of its rows. */
export interface PgTarget {
  readonly ruleId: string;
  readonly table: string;
  readonly columns: readonly string[];
  readonly onConflict: string | undefined;
}

/** Created by migrations/003_ledger.sql. */
export const LEDGER_TABLE = 'weir_ledger';

export interface ColumnType {
  /**
   * format_type(atttypid, -1) of the column: its type without typmod (length, precision), e.g.
   * `timestamp with time zone`, `character varying` for varchar(5), `numeric` for numeric(4,1).
   */
  readonly sql: string;
  /** pg_type.typcategory: D date/time, N numeric, S string, U user (json), B boolean… */
  readonly category: string;
}

/**
 * unnest: `INSERT … SELECT * FROM unnest($1::t1[], $2::t2[] …)` — one parameter per column,
 * whatever the batch size, so one prepared text serves every batch.
 * values: `INSERT … VALUES ($1,$2),($3,$4)…` — text depends on the row count.
 * Placeholders start at `$first` (an insert after another's parameters, see withLedger).
 *
 * The unnest casts name the type without typmod (`character varying[]`, not
 * `character varying(5)[]`): an explicit cast to varchar(n), char(n), bit(n) or varbit(n) cuts a
 * value that is too long without a word, while the INSERT's assignment to the column refuses it
 * (22001; bit(n): 22026), so the row is dead-lettered as with VALUES. numeric(p,s) refuses an overflow
 * either way (22003) and rounds to its scale either way. The typmod check costs the same per
 * value whichever does it; the cast stays one per array, not one per row.
 */
export function insertSql(mode: 'unnest' | 'values', t: PgTarget, types: ReadonlyMap<string, ColumnType>, rows: number, first = 1): string {
  const cols = t.columns.map(quoteIdent).join(', ');
  const conflict = t.onConflict ? ` ON CONFLICT ${t.onConflict}` : '';
  if (mode === 'unnest') {
    const arrays = t.columns.map((c, i) => `$${first + i}::${types.get(c)!.sql}[]`).join(', ');
    return `INSERT INTO ${quoteTable(t.table)} (${cols}) SELECT * FROM unnest(${arrays})${conflict}`;
  }
  const n = t.columns.length;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) {
    tuples.push(`(${t.columns.map((_, j) => `$${first + r * n + j}`).join(', ')})`);
  }
  return `INSERT INTO ${quoteTable(t.table)} (${cols}) VALUES ${tuples.join(', ')}${conflict}`;
}

/**
 * Wraps inserts, one per rule, so that the same statement — one transaction — also adds to the
 * ledger the number of rows each rule really inserted (ON CONFLICT may skip some). A batch holds
 * the rows of every rule writing the same table and columns (the action's batchKey); RETURNING
 * cannot tell whose a row was, so each rule's rows have an insert of their own. The parameters
 * after the inserts' own `first - 1`: sink, table, writer, then each insert's rule.
 */
export function withLedger(inserts: readonly string[], ledgerTable: string, first: number): string {
  const p = (i: number) => `$${first + i}`;
  const ledger = quoteTable(ledgerTable);
  const ctes = inserts.map((sql, i) => `i${i} AS (${sql} RETURNING 1)`).join(', ');
  const counts = inserts.map((_, i) => `(${p(3 + i)}::text, (SELECT count(*) FROM i${i}))`).join(', ');
  return `WITH ${ctes}
INSERT INTO ${ledger} (rule_id, sink, table_name, writer, rows, updated_at)
SELECT v.rule_id, ${p(0)}::text, ${p(1)}::text, ${p(2)}::text, v.rows, now() FROM (VALUES ${counts}) AS v(rule_id, rows)
ON CONFLICT (rule_id, sink, table_name, writer) DO UPDATE SET rows = ${ledger}.rows + EXCLUDED.rows, updated_at = EXCLUDED.updated_at`;
}

/**
 * Shapes a template's value for its column: undefined → NULL; a number into a timestamp column is
 * taken as epoch milliseconds (EMQX's `timestamp`); objects and arrays into json/jsonb are JSON
 * text; anything else goes as is and the server converts it (or rejects the row).
 */
export function toColumnValue(v: unknown, type: ColumnType): unknown {
  if (v === undefined || v === null) return null;
  // A rule's float with a whole value (2.0): the number, for any column type.
  if (v instanceof WholeFloat) v = v.value;
  // ISO text, not a Date: pg's own Date formatting costs more than the rest of the row.
  if (type.category === 'D' && typeof v === 'number') return isoTime(v);
  if (typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v)) {
    if (type.sql === 'json' || type.sql === 'jsonb' || type.category === 'S') return JSON.stringify(v);
  }
  return v;
}

/** Characters that force an array element into quotes (PostgreSQL arrays, §8.15.6). */
const NEEDS_QUOTES = /[\s{},"\\]/;

/**
 * One column's values as a PostgreSQL array literal, for an unnest parameter. Written here, not
 * by pg, because numbers and plain words go unquoted and unescaped: less CPU per row and fewer
 * bytes on the wire than pg's generic arrayString, which quotes and regex-escapes every element.
 * The elements are joined once rather than appended one by one: each `+=` made a cons string
 * (two per element), garbage the size of the batch again before pg flattened the result.
 */
export function arrayLiteral(values: readonly unknown[], type?: ColumnType): string {
  const n = values.length;
  if (n === 0) return '{}';
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = element(type ? toColumnValue(values[i], type) : values[i]);
  // The braces go onto the end elements, so that join's flat result is the literal itself (around
  // it, they would make a cons string that pg's write copies flat again).
  parts[0] = `{${parts[0]}`;
  parts[n - 1] = `${parts[n - 1]}}`;
  return parts.join(',');
}

/** Epoch milliseconds as `Date.prototype.toISOString` writes them; out of its range it throws the same RangeError. */
export function isoTime(ms: number): string {
  // A Date keeps whole milliseconds, truncated (ECMA-262 TimeClip).
  const t = Math.trunc(ms);
  // The fast path covers 1970 to 9999, where the text is fixed-width; the rest is rare.
  if (!(t >= 0 && t < MAX_FIXED_WIDTH_MS)) return new Date(ms).toISOString();
  // A batch's rows are mostly of the same second: format it once (Date and its text were 160
  // bytes and 0.5 µs a row), then only its milliseconds.
  const second = Math.floor(t / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const frac = t - second * 1000;
  return `${lastSecondText}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
}

/** 10000-01-01T00:00:00Z: from there toISOString writes a six-digit year. */
const MAX_FIXED_WIDTH_MS = 253_402_300_800_000;
let lastSecond = Number.NaN;
/** `YYYY-MM-DDTHH:MM:SS.` of lastSecond. */
let lastSecondText = '';

function element(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Buffer.isBuffer(v)) return `"\\\\x${v.toString('hex')}"`;
  const s = typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : typeof v === 'bigint' ? v.toString() : JSON.stringify(v);
  // Only a four-letter word can be NULL: testing every string with toUpperCase copied each one.
  if (s !== '' && !NEEDS_QUOTES.test(s) && !(s.length === 4 && s.toUpperCase() === 'NULL')) return s;
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
