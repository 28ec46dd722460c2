// The three bulk insert paths on their own, without MQTT or weir (npm run bench -- pg and
// pg-timescaledb): 100k telemetry rows of about 200 B (a 120-character location) in batches of
// 1000, rows/s for
//   unnest  INSERT … SELECT * FROM unnest($1::timestamptz[], …): weir's shipped path, one
//           parameter per column whatever the batch size;
//   values  INSERT … VALUES ($1,…),(…): six parameters per row;
//   copy    COPY t FROM STDIN (text format): no parameters, but no ON CONFLICT either, so it cannot
//           absorb a redelivered row the way weir's inserts do.
// Into a plain table, a hypertable (1-day chunks), and — late rows — a hypertable whose chunk for
// the rows' time range is already compressed (the rows are compressed once before each timed run).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { freshDatabase } from '../test/harness/postgres.js';

export type InsertTarget = 'plain' | 'hypertable' | 'compressed';

const ROWS = 100_000;
const BATCH = 1000;
const COLUMNS = 'ts timestamptz, device_id text, seq bigint, temp float8, humidity float8, location text';

export async function insertPaths(adminUrl: string, target: InsertTarget = 'plain'): Promise<Record<string, number>> {
  const url = await freshDatabase(adminUrl, 'bench_insert');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`CREATE TABLE t (${COLUMNS})`);
  if (target !== 'plain') {
    await c.query('CREATE EXTENSION IF NOT EXISTS timescaledb');
    await c.query("SELECT create_hypertable('t', by_range('ts', INTERVAL '1 day'))");
  }
  if (target === 'compressed')
    await c.query("ALTER TABLE t SET (timescaledb.compress, timescaledb.compress_segmentby = 'device_id', timescaledb.compress_orderby = 'ts DESC')");
  const loc = 'x'.repeat(120);
  const make = (b: number) =>
    Array.from({ length: BATCH }, (_, i) => [new Date(1733140000000 + b * BATCH + i), `d${i % 1000}`, b * BATCH + i, 21.5, 40.1, loc]);
  const copy = async (rs: unknown[][]) => {
    const text = `${rs.map((r) => [(r[0] as Date).toISOString(), ...r.slice(1)].join('\t')).join('\n')}\n`;
    await pipeline(Readable.from([text]), c.query(copyFrom('COPY t FROM STDIN')));
  };
  const out: Record<string, number> = {};
  const time = async (name: string, write: (rs: unknown[][]) => Promise<unknown>) => {
    await c.query('TRUNCATE t');
    if (target === 'compressed') {
      // The same time range already stored and compressed: every timed row is a late row.
      for (let b = 0; b < ROWS / BATCH; b++) await copy(make(b));
      await c.query("SELECT compress_chunk(ch) FROM show_chunks('t') ch");
    }
    const t0 = performance.now();
    for (let b = 0; b < ROWS / BATCH; b++) await write(make(b));
    out[name] = Math.round(ROWS / ((performance.now() - t0) / 1000));
  };
  await time('unnest', (rs) =>
    c.query(
      'INSERT INTO t SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::bigint[], $4::float8[], $5::float8[], $6::text[])',
      [0, 1, 2, 3, 4, 5].map((j) => rs.map((r) => r[j])),
    ),
  );
  await time('values', (rs) =>
    c.query(`INSERT INTO t VALUES ${rs.map((_, i) => `(${[1, 2, 3, 4, 5, 6].map((k) => `$${i * 6 + k}`).join(',')})`).join(',')}`, rs.flat()),
  );
  await time('copy', copy);
  await c.end();
  return out;
}
