// Hostile payloads for the shipped telemetry rule (rules/telemetry.yaml): bytes a device, a broken
// gateway or an attacker may publish on device/<id>/telemetry. Each is built around a unique
// (device, seq), so a test can account for every message: stored as a row, or dead-lettered.
// Used by the poison-message tests and the fault suite; `fast-check` arbitraries in
// hostileArbitrary() generate variations of the same families.
import fc from 'fast-check';

/** What the shipped rule and table should make of a payload. */
export type HostileEnd = 'stored' | 'dead_lettered' | 'either';

export interface HostileKind {
  readonly name: string;
  readonly end: HostileEnd;
  /** The dead letter's reason when it is dead-lettered (undefined: any). */
  readonly reason?: string;
  payload(device: string, seq: number, ts: number): Buffer;
}

const sample = (device: string, seq: number, ts: number, extra: Record<string, unknown> = {}) => ({
  device,
  seq,
  ts,
  temp: 21.5,
  hum: 40,
  location: 'hall-3',
  ...extra,
});
const json = (v: unknown) => Buffer.from(JSON.stringify(v));
/** A sample's JSON text with `fragment` spliced in as the value of `location`. */
const withRawLocation = (device: string, seq: number, ts: number, fragment: string) =>
  Buffer.from(`{"device":${JSON.stringify(device)},"seq":${seq},"ts":${ts},"temp":21.5,"hum":40,"location":${fragment}}`);

export const HOSTILE: readonly HostileKind[] = [
  // The message that stalled a replica: text columns cannot hold NUL, and jsonb refuses \u0000.
  { name: 'nul escape in a stored text value', end: 'dead_lettered', reason: 'rejected', payload: (d, s, t) => withRawLocation(d, s, t, '"a\\u0000b"') },
  { name: 'nul escape in an unused field', end: 'stored', payload: (d, s, t) => json(sample(d, s, t, { note: 'a\u0000b' })) },
  { name: 'nul escape in a key', end: 'stored', payload: (d, s, t) => json(sample(d, s, t, { 'k\u0000': 1 })) },
  { name: 'nul escape and no timestamp', end: 'dead_lettered', reason: 'rejected', payload: (_d, s) => json({ seq: s, note: 'a\u0000b' }) },
  // Bytes that are not UTF-8 inside a JSON string: never silently rewritten with U+FFFD.
  {
    name: 'invalid UTF-8 in a string',
    end: 'dead_lettered',
    reason: 'invalid_payload',
    payload: (d, s, t) =>
      Buffer.concat([Buffer.from(`{"device":"${d}","seq":${s},"ts":${t},"location":"`), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]),
  },
  { name: 'lone surrogate escape', end: 'either', payload: (d, s, t) => withRawLocation(d, s, t, '"\\ud800"') },
  {
    name: '10,000-deep nesting in an unused field',
    end: 'stored',
    payload: (d, s, t) => Buffer.from(`${JSON.stringify(sample(d, s, t)).slice(0, -1)},"deep":${'['.repeat(10_000)}${']'.repeat(10_000)}}`),
  },
  {
    name: '10,000-deep nesting in a stored value',
    end: 'either',
    payload: (d, s, t) => withRawLocation(d, s, t, `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`),
  },
  {
    name: 'a number too big for bigint',
    end: 'dead_lettered',
    reason: 'rejected',
    payload: (d, _s, t) => Buffer.from(`{"device":"${d}","seq":123456789012345678901234567890,"ts":${t}}`),
  },
  { name: 'a number beyond double', end: 'either', payload: (d, s, t) => Buffer.from(`{"device":"${d}","seq":${s},"ts":${t},"temp":1e400}`) },
  { name: 'duplicate keys', end: 'stored', payload: (d, s, t) => Buffer.from(`{"device":"${d}","seq":${s},"ts":${t},"temp":1,"temp":2}`) },
  { name: 'empty payload', end: 'dead_lettered', reason: 'invalid_payload', payload: () => Buffer.alloc(0) },
  { name: 'JSON that is not an object', end: 'dead_lettered', reason: 'rejected', payload: (_d, s) => Buffer.from(`[${s}]`) },
  { name: 'truncated JSON', end: 'dead_lettered', reason: 'invalid_payload', payload: (d, s, t) => json(sample(d, s, t)).subarray(0, 20) },
  { name: 'a string where a number goes', end: 'dead_lettered', reason: 'rejected', payload: (d, s, t) => json(sample(d, s, t, { temp: 'hot' })) },
  // Valid JSON with no `seq` (issue 28): a root array or scalar has no fields at all, an object
  // may lack it. The row's seq is NULL, which the table refuses; weir's own event counter, once
  // stored in its place, must never stand in for it.
  ...['[1,2,3]', '[5]', '[10,20,30,40,50]', '7', '"s"', 'true', 'null', '{}', '{"temp":4}'].map(
    (text): HostileKind => ({ name: `valid JSON without seq: ${text}`, end: 'dead_lettered', reason: 'rejected', payload: () => Buffer.from(text) }),
  ),
];

/** A payload larger than `limit`: dead-lettered as payload_too_large before any rule. */
export function oversizePayload(device: string, seq: number, ts: number, limit: number): Buffer {
  return json(sample(device, seq, ts, { location: 'x'.repeat(limit) }));
}

/**
 * Generated hostile payloads: a valid sample whose fields are replaced by strings with control
 * characters, NULs, lone surrogates and invalid UTF-8, deep or wide structures, extreme numbers,
 * or bytes cut short. Any of them may be stored or dead-lettered; none may stall the stream.
 */
export function hostileArbitrary(): fc.Arbitrary<(device: string, seq: number, ts: number) => Buffer> {
  const nasty = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '\udfff x', '\u0000\u0000', '\\u0000', '"', '\u2028'),
    fc.double(),
    fc.constantFrom(1e308, -1e308, 2 ** 63, -(2 ** 63), Number.MAX_SAFE_INTEGER + 2),
    fc.integer({ min: 1, max: 3000 }).map((n) => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`) as unknown),
    fc.dictionary(fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 8 }), { maxKeys: 5 }),
    fc.constant(null),
  );
  const field = fc.constantFrom('temp', 'hum', 'location', 'device', 'extra', '\u0000');
  const mangle = fc.constantFrom('none', 'invalid_utf8', 'truncate');
  return fc.tuple(field, nasty, mangle, fc.nat()).map(([f, v, how, cut]) => (device: string, seq: number, ts: number) => {
    const bytes = json(sample(device, seq, ts, { [f]: v }));
    if (how === 'invalid_utf8') {
      const at = bytes.indexOf(0x3a) + 1; // after the first ':' → inside the document, before a value
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([0x22, 0xff, 0xfe, 0x22, 0x2c, 0x22, 0x7a, 0x22, 0x3a]), bytes.subarray(at)]);
    }
    if (how === 'truncate') return bytes.subarray(0, cut % Math.max(1, bytes.length));
    return bytes;
  });
}

// What a stored row should hold --------------------------------------------------------------

/** A column a rule fills from the message (the publisher's client id or a top-level payload field), and the column's type. */
export interface ColumnSource {
  readonly from: 'clientid' | `payload.${string}`;
  readonly type: 'text' | 'bigint' | 'float8' | 'timestamptz';
}

/** rules/telemetry.yaml's columns, and where each comes from. */
export const TELEMETRY_COLUMNS = {
  ts: { from: 'payload.ts', type: 'timestamptz' },
  device_id: { from: 'clientid', type: 'text' },
  seq: { from: 'payload.seq', type: 'bigint' },
  temp: { from: 'payload.temp', type: 'float8' },
  humidity: { from: 'payload.hum', type: 'float8' },
  location: { from: 'payload.location', type: 'text' },
} as const satisfies Record<string, ColumnSource>;

/**
 * A column's value as RowOracle reads it back: text as text, bigint as its decimal text, float8 as
 * a number, timestamptz as epoch milliseconds. undefined: a payload value this oracle does not
 * predict (see expectedRow), not compared.
 */
export type Cell = string | number | null | undefined;

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A payload value as a column of `type` holds it: null for null, undefined where not predicted. */
function cellOf(v: unknown, type: ColumnSource['type']): Cell {
  if (v === null) return null;
  switch (type) {
    case 'text':
      return typeof v === 'string' && !LONE_SURROGATE.test(v) ? v : undefined;
    case 'bigint':
      return Number.isSafeInteger(v) ? String(v) : undefined;
    case 'float8':
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
    case 'timestamptz':
      return Number.isSafeInteger(v) ? (v as number) : undefined;
  }
}

/**
 * The row a message should become, from its bytes alone and with none of weir's code: the
 * payload decoded as strict UTF-8 and JSON.parse, each column the named top-level field of a
 * root object, NULL where the field is missing or the root is no object (an array, a scalar):
 * issue 28, never a value of the event or of weir's own. Returns undefined for a payload that is
 * not JSON (no row may come of it). A value of a type the column does not hold as it is (a number
 * into text, an object, a lone surrogate, a fraction into bigint) is undefined: not predicted.
 */
export function expectedRow(columns: Readonly<Record<string, ColumnSource>>, device: string, payload: Buffer): Record<string, Cell> | undefined {
  let root: unknown;
  try {
    root = JSON.parse(UTF8.decode(payload));
  } catch {
    return undefined;
  }
  const fields = typeof root === 'object' && root !== null && !Array.isArray(root) ? (root as Record<string, unknown>) : {};
  const row: Record<string, Cell> = {};
  for (const [column, c] of Object.entries(columns)) {
    const field = c.from.slice('payload.'.length);
    row[column] = c.from === 'clientid' ? device : cellOf(Object.hasOwn(fields, field) ? fields[field] : null, c.type);
  }
  return row;
}

/** What RowOracle.check found. */
export interface ContentReport {
  rows: number;
  /** Values compared (predicted), and those not predicted. */
  compared: number;
  unpredicted: number;
  /** `device/seq (label): column stored X, published Y`, at most `limit` of them. */
  mismatches: string[];
  /** Rows with any difference, or no message behind them. */
  wrongRows: number;
}

/**
 * Every published message's expected row (expectedRow), by (device, seq), and the comparison of
 * a table's rows with them: each stored row must be the row of the message with its (device, seq),
 * value for value. A row no message of that (device, seq) was published for, or one from a
 * payload that is not JSON, is wrong too.
 */
export class RowOracle {
  private readonly expected = new Map<string, Record<string, Cell> | undefined>();
  private readonly labels = new Map<string, string>();

  constructor(
    readonly table: string,
    readonly columns: Readonly<Record<string, ColumnSource>>,
    /** The columns holding the message's device (from the client id) and its seq. */
    readonly key: { readonly device: string; readonly seq: string },
  ) {}

  /** Records what message (device, seq) should become; `label` (its hostile family) names it in mismatches. */
  publish(device: string, seq: number, payload: Buffer, label?: string): void {
    const id = `${device}/${seq}`;
    this.expected.set(id, expectedRow(this.columns, device, payload));
    if (label !== undefined) this.labels.set(id, label);
  }

  /** The query that reads every row in the form the cells take. */
  selectSql(): string {
    const q = (c: string) => `"${c.replaceAll('"', '""')}"`;
    const read = (c: string, type: ColumnSource['type']) =>
      type === 'bigint' ? `${q(c)}::text` : type === 'timestamptz' ? `(extract(epoch from ${q(c)}) * 1000)::float8` : q(c);
    return `SELECT ${Object.entries(this.columns)
      .map(([c, s]) => `${read(c, s.type)} AS ${q(c)}`)
      .join(', ')} FROM ${q(this.table)}`;
  }

  /** Compares the rows selectSql() read with what their messages carried. */
  check(rows: ReadonlyArray<Record<string, unknown>>, limit = 20): ContentReport {
    const report: ContentReport = { rows: rows.length, compared: 0, unpredicted: 0, mismatches: [], wrongRows: 0 };
    const wrong = (line: string) => {
      report.wrongRows++;
      if (report.mismatches.length < limit) report.mismatches.push(line);
    };
    for (const row of rows) {
      const id = `${row[this.key.device]}/${row[this.key.seq]}`;
      const name = this.labels.has(id) ? `${id} (${this.labels.get(id)})` : id;
      if (!this.expected.has(id)) {
        wrong(`${id}: a row of no published message: ${JSON.stringify(row)}`);
        continue;
      }
      const want = this.expected.get(id);
      if (want === undefined) {
        wrong(`${name}: stored, but its payload is not JSON: ${JSON.stringify(row)}`);
        continue;
      }
      const diffs: string[] = [];
      for (const column of Object.keys(this.columns)) {
        const w = want[column];
        if (w === undefined) {
          report.unpredicted++;
          continue;
        }
        report.compared++;
        if (row[column] !== w) diffs.push(`${column} stored ${JSON.stringify(row[column])}, published ${JSON.stringify(w)}`);
      }
      if (diffs.length) wrong(`${name}: ${diffs.join('; ')}`);
    }
    return report;
  }
}
