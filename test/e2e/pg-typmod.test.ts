// A value that does not fit its column's length or precision is refused and dead-lettered with the
// server's reason, never cut to fit, in every insert mode; the rows beside it in the batch are
// stored exactly. unnest used to cast its arrays to the column's full type (`varchar(5)[]`), and
// an explicit cast cuts silently: a real server stored 'far t' for 'far too long'. Driven through
// the core's SinkRunner (batch, split, dead-letter) and the PostgreSQL sink, against a real
// PostgreSQL with weir's migrations (dead-letter table and ledger).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../src/log.js';
import { migrate } from '../../src/sinks/postgres/migrate.js';
import { PostgresSink } from '../../src/sinks/postgres/sink.js';
import type { PostgresConfig } from '../../src/sinks/postgres/spec.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { ROOT } from '../harness/weir.js';
import { query } from './fixtures.js';
import { startPgRunner } from './pg-runner.js';

const SCHEMA = `
CREATE DOMAIN short_code AS varchar(5) CHECK (VALUE <> 'nope');
CREATE TABLE sized (
  id    int PRIMARY KEY,
  v     varchar(5),
  c     char(3),
  n     numeric(4,1),
  b     bit(3),
  code  short_code
)`;

type Row = { id: number; v?: string | null; c?: string; n?: number | string; b?: string; code?: string };

// One batch: the rows that fit and the ones that do not, interleaved.
const ROWS: Row[] = [
  { id: 1, v: 'abcde', c: 'ab', n: 123.4, b: '101', code: 'xy' },
  { id: 2, v: 'far too long' },
  { id: 3, v: 'a b,c', c: 'xyz', n: -999.9, b: '000', code: 'abcde' },
  { id: 4, c: 'abcd' },
  { id: 5, n: 1000 },
  { id: 6, n: '12345.6' },
  { id: 7, v: '{"}\\', c: '', n: 0, b: '111' },
  { id: 8, b: '10101' },
  { id: 9, code: 'far too long' },
  { id: 10, code: 'nope' },
  { id: 11, v: 'ünï✓' },
];

/** What the server says of each refused row (its error text), by id. */
const REFUSED: Record<number, RegExp> = {
  2: /value too long for type character varying\(5\)/,
  4: /value too long for type character\(3\)/,
  5: /numeric field overflow/,
  6: /numeric field overflow/,
  8: /bit string length 5 does not match type bit\(3\)/,
  9: /value too long for type character varying\(5\)/,
  10: /violates check constraint/,
};

/** What comes back for each stored row: exactly what went in (char(n) pads with spaces). */
const STORED = [
  { id: 1, v: 'abcde', c: 'ab ', n: '123.4', b: '101', code: 'xy' },
  { id: 3, v: 'a b,c', c: 'xyz', n: '-999.9', b: '000', code: 'abcde' },
  { id: 7, v: '{"}\\', c: '   ', n: '0.0', b: '111', code: null },
  { id: 11, v: 'ünï✓', c: null, n: null, b: null, code: null },
];

for (const mode of ['unnest', 'values'] as const) {
  test(`${mode}: a value too long or out of precision for its column is dead-lettered with the server's reason, not cut to fit; the rest of the batch is stored exactly`, {
    timeout: 60_000,
  }, async () => {
    const url = await freshDatabase((await sharedPostgres()).url);
    await migrate(url, join(ROOT, 'migrations'));
    await query(url, SCHEMA);

    const pg = await startPgRunner(url, { insertMode: mode, instance: 'typmod' });
    try {
      // One batch (max_delay_ms is long): the refused rows are isolated by splitting it.
      const done = await pg.store('sized', { table: 'sized', columns: { id: '${id}', v: '${v}', c: '${c}', n: '${n}', b: '${b}', code: '${code}' } }, ROWS);
      const outcomes = new Map(ROWS.map((r, i) => [r.id, done[i]]));
      const expected = new Map(ROWS.map((r) => [r.id, r.id in REFUSED ? 'dead_lettered' : 'stored']));
      assert.deepEqual(outcomes, expected, 'every row ends once: stored, or dead-lettered (never retried forever)');

      const stored = await query(url, 'SELECT id, v, c, n::text AS n, b::text AS b, code FROM sized ORDER BY id');
      assert.deepEqual(stored, STORED);

      const letters = await query<{ topic: string; reason: string; error: string; record: Record<string, unknown> }>(
        url,
        'SELECT topic, reason, error, record FROM weir_dead_letter ORDER BY id',
      );
      const byId = new Map(letters.map((l) => [Number(l.topic.slice(2)), l]));
      assert.deepEqual(
        [...byId.keys()].sort((a, b) => a - b),
        Object.keys(REFUSED).map(Number),
      );
      assert.equal(letters.length, byId.size, 'one letter per refused row');
      for (const [id, why] of Object.entries(REFUSED)) {
        const l = byId.get(Number(id))!;
        assert.equal(l.reason, 'rejected');
        assert.match(l.error, why, `row ${id}`);
        assert.equal(l.record.id, Number(id), 'the letter shows the row that was sent');
      }
      assert.equal(byId.get(2)!.record.v, 'far too long');

      // The ledger counts what was committed, and nothing of the refused rows.
      const [ledger] = await query<{ rows: string }>(url, 'SELECT sum(rows)::text AS rows FROM weir_ledger');
      assert.equal(ledger!.rows, String(STORED.length));
      const text = await pg.metrics.registry.getSingleMetricAsString('weir_sink_retried_total');
      const retried = text
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
      assert.equal(retried, 0, 'a refused row is not retried');
    } finally {
      await pg.close();
    }
  });
}

test('unnest: a column widened or retyped while weir runs takes the new type; the statement is not stuck with the old one', { timeout: 60_000 }, async () => {
  const url = await freshDatabase((await sharedPostgres()).url);
  await query(url, 'CREATE TABLE changing (id int, v varchar(5), k text)');
  const settings: PostgresConfig = {
    url,
    pool_size: 1,
    insert_mode: 'unnest',
    statement_timeout_ms: 10_000,
    connect_timeout_ms: 2_000,
    dead_letter_table: 'weir_dead_letter',
    ledger: 'off',
    application_name: 'weir-typmod-test',
  };
  const sink = new PostgresSink(settings, { name: 'tsdb', log: silentLogger });
  const stop = new AbortController();
  try {
    await sink.connect(stop.signal);
    const bound = sink.bind({ table: 'changing', columns: { id: '${id}', v: '${v}', k: '${k}' } }, 'r');
    const row = (record: Record<string, unknown>) => bound.encode({ record, event: { topic: 't', payload: '' }, ruleId: 'r' });
    await sink.write([row({ id: 1, v: 'short', k: '1' })]);
    // Wider: the prepared text has no length in it, so the next batch gets the new one.
    await query(url, 'ALTER TABLE changing ALTER COLUMN v TYPE varchar(12)');
    await sink.write([row({ id: 2, v: 'far too long', k: '2' })]);
    // Another type: the first write fails as a schema error (42804), the next looks it up again.
    await query(url, 'ALTER TABLE changing ALTER COLUMN k TYPE int USING k::int');
    await assert.rejects(sink.write([row({ id: 3, v: 'x', k: 3 })]), (err: { code?: string }) => err.code === '42804');
    await sink.write([row({ id: 3, v: 'x', k: 3 })]);
    assert.deepEqual(await query(url, 'SELECT id, v, k FROM changing ORDER BY id'), [
      { id: 1, v: 'short', k: 1 },
      { id: 2, v: 'far too long', k: 2 },
      { id: 3, v: 'x', k: 3 },
    ]);
  } finally {
    stop.abort();
    await sink.close();
  }
});
