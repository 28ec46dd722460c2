// Values weir writes through unnest array literals come back from a real PostgreSQL as they
// went in: quotes, backslashes, braces, commas, spaces, the word NULL, empty strings, unicode,
// numbers, booleans, JSON and bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { arrayLiteral, type ColumnType } from '../../src/sinks/postgres/statements.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';

const TEXT: ColumnType = { sql: 'text', category: 'S' };

test('array literals round-trip through PostgreSQL', { timeout: 60_000 }, async () => {
  const url = await freshDatabase((await sharedPostgres()).url);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('CREATE TABLE v (t text, n double precision, b boolean, j jsonb, y bytea, ts timestamptz)');
    const texts = [
      'plain',
      'with space',
      'a,b',
      '{braces}',
      'quote"inside',
      'back\\slash',
      'NULL',
      'null',
      '',
      'ünïcødé ✓',
      ' lead',
      'tab\there',
      'nl\nhere',
      null,
    ];
    const n = texts.length;
    const nums = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? null : i * 1.5 - 7));
    const bools = Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : i % 2 === 0));
    const json = Array.from({ length: n }, (_, i) => ({ i, s: texts[i] ?? 'x', nested: [1, { q: '"\\' }] }));
    const bytes = Array.from({ length: n }, (_, i) => Buffer.from([0, i, 255, 92, 34]));
    const times = Array.from({ length: n }, (_, i) => 1733140000000 + i);
    await c.query('INSERT INTO v SELECT * FROM unnest($1::text[], $2::double precision[], $3::boolean[], $4::jsonb[], $5::bytea[], $6::timestamptz[])', [
      arrayLiteral(texts, TEXT),
      arrayLiteral(nums, { sql: 'double precision', category: 'N' }),
      arrayLiteral(bools, { sql: 'boolean', category: 'B' }),
      arrayLiteral(json, { sql: 'jsonb', category: 'U' }),
      arrayLiteral(bytes, { sql: 'bytea', category: 'U' }),
      arrayLiteral(times, { sql: 'timestamp with time zone', category: 'D' }),
    ]);
    const rows = (await c.query('SELECT * FROM v')).rows as Array<{ t: string | null; n: number | null; b: boolean | null; j: unknown; y: Buffer; ts: Date }>;
    assert.deepEqual(
      rows.map((r) => r.t),
      texts,
    );
    assert.deepEqual(
      rows.map((r) => r.n),
      nums,
    );
    assert.deepEqual(
      rows.map((r) => r.b),
      bools,
    );
    assert.deepEqual(
      rows.map((r) => r.j),
      json,
    );
    assert.deepEqual(
      rows.map((r) => r.y.toString('hex')),
      bytes.map((b) => b.toString('hex')),
    );
    assert.deepEqual(
      rows.map((r) => r.ts.getTime()),
      times,
    );
  } finally {
    await c.end();
  }
});
