// Unit tests of the PostgreSQL sink's pure parts: error classes by SQLSTATE, the insert statements,
// values shaped for their column, the ledger. Against a real server: postgres.int.test.ts, and the
// sink conformance suite (conformance.int.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classifyPgError } from '../../src/sinks/postgres/classify.js';
import { conflictTarget } from '../../src/sinks/postgres/conflict-target.js';
import { arrayLiteral, insertSql, isoTime, toColumnValue, withLedger } from '../../src/sinks/postgres/statements.js';
import { PostgresError } from '../../src/sinks/postgres/errors.js';
import { WholeFloat } from '../../src/rules/values/floats.js';

test('SQLSTATE classes: data and constraint errors reject the row, connection and shutdown errors retry, schema and auth are fatal', () => {
  assert.equal(classifyPgError({ code: '22P02' }), 'reject');
  assert.equal(classifyPgError({ code: '23502' }), 'reject');
  // Too long for varchar(n)/char(n), bit(n) of another length, too large for numeric(p,s).
  assert.equal(classifyPgError({ code: '22001' }), 'reject');
  assert.equal(classifyPgError({ code: '22026' }), 'reject');
  assert.equal(classifyPgError({ code: '22003' }), 'reject');
  // feature_not_supported (TimescaleDB: a write a compressed chunk cannot take) recurs: dead-letter, never retry for ever.
  assert.equal(classifyPgError({ code: '0A000' }), 'reject');
  assert.equal(classifyPgError({ code: '08006' }), 'retry');
  assert.equal(classifyPgError({ code: '57P01' }), 'retry');
  assert.equal(classifyPgError({ code: '40001' }), 'retry');
  assert.equal(classifyPgError({ code: '42P01' }), 'fatal');
  assert.equal(classifyPgError({ code: '28P01' }), 'fatal');
  assert.equal(classifyPgError({ code: 'ECONNREFUSED' }), 'retry');
  assert.equal(classifyPgError(new Error('Connection terminated unexpectedly')), 'retry');
  assert.equal(classifyPgError(new PostgresError('sink.postgres.unknown_column', 'x')), 'fatal');
  assert.equal(classifyPgError(new PostgresError('sink.postgres.not_connected', 'x')), 'retry');
});

test('unnest and VALUES statements', () => {
  const t = { ruleId: 'r1', table: 'public.telemetry', columns: ['ts', 'temp'], onConflict: '(ts) DO NOTHING' };
  const types = new Map([
    ['ts', { sql: 'timestamp with time zone', category: 'D' }],
    ['temp', { sql: 'double precision', category: 'N' }],
  ]);
  assert.equal(
    insertSql('unnest', t, types, 5),
    'INSERT INTO "public"."telemetry" ("ts", "temp") SELECT * FROM unnest($1::timestamp with time zone[], $2::double precision[]) ON CONFLICT (ts) DO NOTHING',
  );
  assert.equal(insertSql('values', t, types, 2), 'INSERT INTO "public"."telemetry" ("ts", "temp") VALUES ($1, $2), ($3, $4) ON CONFLICT (ts) DO NOTHING');
});

test('values shaped for their column: epoch ms into timestamps, objects into json, missing → NULL', () => {
  const ts = { sql: 'timestamp with time zone', category: 'D' };
  assert.equal(toColumnValue(1733140000123, ts), '2024-12-02T11:46:40.123Z');
  assert.equal(toColumnValue('2024-12-02T12:00:00Z', ts), '2024-12-02T12:00:00Z');
  assert.equal(toColumnValue(undefined, ts), null);
  assert.equal(toColumnValue({ a: 1 }, { sql: 'jsonb', category: 'U' }), '{"a":1}');
  assert.equal(toColumnValue(3.5, { sql: 'double precision', category: 'N' }), 3.5);
  // A rule's float with a whole value (2.0, a WholeFloat) goes as its number, into any column.
  assert.equal(toColumnValue(new WholeFloat(2), { sql: 'double precision', category: 'N' }), 2);
  assert.equal(toColumnValue(new WholeFloat(1733140000123), ts), '2024-12-02T11:46:40.123Z');
  assert.equal(toColumnValue({ t: new WholeFloat(20) }, { sql: 'jsonb', category: 'U' }), '{"t":20}');
});

test('epoch milliseconds become the text toISOString writes, and what it refuses is refused the same', () => {
  const samples = [0, 1, 999, 1000, 1001, 1733140000123, 1733140000123.9, 1733140000999, 1733140001000, 951782400000, 253402300799999];
  for (let i = 0; i < 2000; i++) samples.push(Math.floor(Math.random() * 253402300800000), 1733140000000 + i * 7);
  // Out of the fixed-width range: before 1970, six-digit years, fractions of negative ms.
  samples.push(-1, -1.5, -62198755200000, 253402300800000, 8.64e15, -8.64e15);
  for (const ms of samples) assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms));
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) {
    assert.throws(() => isoTime(bad), RangeError);
    assert.throws(() => new Date(bad).toISOString(), RangeError);
  }
});

test('array literals: numbers and plain words bare, NULL and what needs it quoted', () => {
  const text = { sql: 'text', category: 'S' };
  assert.equal(arrayLiteral([1, 2.5, -3], { sql: 'double precision', category: 'N' }), '{1,2.5,-3}');
  assert.equal(
    arrayLiteral(['hall-3', 'null', 'NULL', 'Null', 'nul', 'a b', 'q"', 'b\\', '', undefined], text),
    '{hall-3,"null","NULL","Null",nul,"a b","q\\"","b\\\\","",NULL}',
  );
  assert.equal(arrayLiteral([], text), '{}');
});

test('the ledger rides in the same statement as the rows, counting only rows really inserted, each rule apart', () => {
  const one = withLedger(['INSERT INTO "t" ("a") SELECT * FROM unnest($1::int[]) ON CONFLICT DO NOTHING'], 'weir_ledger', 2);
  assert.match(one, /^WITH i0 AS \(INSERT INTO "t" .* ON CONFLICT DO NOTHING RETURNING 1\)\n/);
  assert.match(one, /SELECT v\.rule_id, \$2::text, \$3::text, \$4::text, v\.rows, now\(\) FROM \(VALUES \(\$5::text, \(SELECT count\(\*\) FROM i0\)\)\)/);
  assert.match(one, /ON CONFLICT \(rule_id, sink, table_name, writer\) DO UPDATE SET rows = "weir_ledger"\.rows \+ EXCLUDED\.rows/);
  // Two rules' rows in one batch: an insert each (their arrays numbered on), a ledger row each.
  const t = { ruleId: 'r1', table: 't', columns: ['a'], onConflict: 'DO NOTHING' };
  const types = new Map([['a', { sql: 'int', category: 'N' }]]);
  const two = withLedger([insertSql('unnest', t, types, 3, 1), insertSql('unnest', t, types, 2, 2)], 'weir_ledger', 3);
  assert.match(
    two,
    /^WITH i0 AS \(INSERT .* unnest\(\$1::int\[\]\) ON CONFLICT DO NOTHING RETURNING 1\), i1 AS \(INSERT .* unnest\(\$2::int\[\]\) ON CONFLICT DO NOTHING RETURNING 1\)\n/,
  );
  assert.match(two, /\(VALUES \(\$6::text, \(SELECT count\(\*\) FROM i0\)\), \(\$7::text, \(SELECT count\(\*\) FROM i1\)\)\)/);
  assert.equal(insertSql('values', t, types, 2, 4), 'INSERT INTO "t" ("a") VALUES ($4), ($5) ON CONFLICT DO NOTHING');
});

test("on_conflict's target read for check's messages: a column list as PostgreSQL folds it, a named constraint, an expression, none", () => {
  assert.deepEqual(conflictTarget('(device_id, ts, seq) DO NOTHING'), { kind: 'columns', text: '(device_id, ts, seq)', columns: ['device_id', 'ts', 'seq'] });
  assert.deepEqual(conflictTarget(' ( Device_ID ,"Ts" )  do update set temp = EXCLUDED.temp'), {
    kind: 'columns',
    text: '( Device_ID ,"Ts" )',
    columns: ['device_id', 'Ts'],
  });
  assert.deepEqual(conflictTarget('(device_id) WHERE (seq > 0) DO NOTHING'), { kind: 'columns', text: '(device_id)', columns: ['device_id'] });
  assert.deepEqual(conflictTarget('(lower(device_id), ts) DO NOTHING'), { kind: 'columns', text: '(lower(device_id), ts)', columns: undefined });
  assert.deepEqual(conflictTarget('ON CONSTRAINT telemetry_pkey DO NOTHING'), {
    kind: 'constraint',
    text: 'ON CONSTRAINT telemetry_pkey',
    name: 'telemetry_pkey',
  });
  assert.deepEqual(conflictTarget('DO NOTHING'), { kind: 'none' });
});
