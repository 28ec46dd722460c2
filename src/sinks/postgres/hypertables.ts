// The `hypertables:` settings of a postgres sink, applied by weir migrate after the SQL files: each
// table made a hypertable, its chunk interval, compression settings and policy, and retention
// policy brought to what weir.yaml says. Every step reads the current state from TimescaleDB's own
// views first and changes only what differs, so a second run changes nothing, and a changed
// setting replaces the policy (TimescaleDB has no "alter policy": remove, then add).
//
// Without a usable extension (plain PostgreSQL, TimescaleDB not preloaded, or a role that may not
// create it) nothing is changed and one note says why: the tables stay plain tables and weir works
// on them the same way.
import type pg from 'pg';
import { WeirError } from '../../errors.js';
import type { HypertableSettings } from './spec.js';
import { quoteIdent, quoteTable } from '../../sql/quote.js';

export interface HypertableReport {
  /** What was changed, one phrase each ('telemetry: compression policy added (compress_after 7 days)'). */
  readonly changed: string[];
  /** Why nothing could be done (no extension). */
  readonly notes: string[];
}

/** Whether TimescaleDB can be used in this database, and if not, why. */
type Timescale = { usable: true } | { usable: false; why: string };

/**
 * Where TimescaleDB stands, from what any role may read: a managed database's role may not read
 * shared_preload_libraries (superuser or pg_read_all_settings only). The preloaded library
 * defines its own settings, which pg_settings lists (a setting only written in postgresql.conf,
 * with no library defining it, is a placeholder pg_settings does not show). CREATE EXTENSION is
 * tried only where the library is preloaded, since elsewhere TimescaleDB ends the session (FATAL);
 * it is a trusted extension, so a role with CREATE on the database may create it, and one without
 * is told so. Runs inside migrate()'s transaction: a refused CREATE is rolled back to a savepoint.
 */
async function timescale(c: pg.ClientBase): Promise<Timescale> {
  const { rows } = await c.query<{ created: boolean; available: boolean; preloaded: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'timescaledb') AS created,
            EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb') AS available,
            EXISTS (SELECT 1 FROM pg_settings WHERE name = 'timescaledb.max_background_workers') AS preloaded`,
  );
  const { created, available, preloaded } = rows[0]!;
  if (!created && !available) return { usable: false, why: 'the timescaledb extension is not installed on this server' };
  if (!preloaded) {
    return {
      usable: false,
      why: `the server does not preload the timescaledb library (shared_preload_libraries)${created ? ', though the extension is created in this database' : ''}; a superuser can add it and restart the server`,
    };
  }
  if (created) return { usable: true };
  await c.query('SAVEPOINT weir_timescaledb');
  try {
    await c.query('CREATE EXTENSION IF NOT EXISTS timescaledb');
    await c.query('RELEASE SAVEPOINT weir_timescaledb');
    return { usable: true };
  } catch (err) {
    // 42501 insufficient_privilege: no CREATE on the database. Anything else is not ours to hide.
    if ((err as { code?: unknown }).code !== '42501') throw err;
    await c.query('ROLLBACK TO SAVEPOINT weir_timescaledb');
    return {
      usable: false,
      why: `the timescaledb extension is available but this role could not create it (${(err as Error).message}); a superuser, or a role with CREATE on this database, can run CREATE EXTENSION timescaledb in it`,
    };
  }
}

function splitName(table: string): { schema: string | null; name: string } {
  const [a, b] = table.split('.');
  return b === undefined ? { schema: null, name: a! } : { schema: a!, name: b };
}

/** Column lists as TimescaleDB prints them back ('device_id', 'ts DESC'), to compare with ours. */
function normalList(cols: readonly string[] | string | null): string {
  const parts = typeof cols === 'string' ? cols.split(',') : (cols ?? []);
  return parts
    .map((c) =>
      c
        .trim()
        .replace(/"/g, '')
        .replace(/\s+/g, ' ')
        .replace(/ asc$/i, '')
        .replace(/ nulls first$/i, '')
        .replace(/ desc nulls first$/i, ' desc')
        .toLowerCase(),
    )
    .filter(Boolean)
    .join(',');
}

export async function applyHypertables(c: pg.ClientBase, tables: Readonly<Record<string, HypertableSettings>>): Promise<HypertableReport> {
  const report: HypertableReport = { changed: [], notes: [] };
  const names = Object.keys(tables);
  if (names.length === 0) return report;
  const tsdb = await timescale(c);
  if (!tsdb.usable) {
    report.notes.push(
      `TimescaleDB is not used: ${tsdb.why}: ${names.join(', ')} ${names.length === 1 ? 'stays a plain table' : 'stay plain tables'}; ${names.length === 1 ? 'its' : 'their'} hypertables settings are not applied`,
    );
    return report;
  }
  for (const table of names) await applyOne(c, table, tables[table]!, report.changed);
  return report;
}

/** The spec's defaults (see HypertableSpec). */
function withDefaults(h: HypertableSettings) {
  const time_column = h.time_column ?? 'ts';
  return {
    time_column,
    chunk_interval: h.chunk_interval ?? '7 days',
    compression: h.compression && {
      segment_by: h.compression.segment_by ?? [],
      order_by: h.compression.order_by?.length ? h.compression.order_by : [`${time_column} DESC`],
      compress_after: h.compression.compress_after,
    },
    retention: h.retention,
  };
}

async function applyOne(c: pg.ClientBase, table: string, settings: HypertableSettings, changed: string[]): Promise<void> {
  const h = withDefaults(settings);
  const exists = await c.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [table]);
  if (!exists.rows[0]?.oid) throw new WeirError('migrate.no_table', `hypertables.${table}: there is no table ${table} (create it in a migration first)`);
  const { schema, name } = splitName(table);
  const where = `hypertable_name = $1 AND ($2::text IS NULL OR hypertable_schema = $2)`;
  const dim = await c.query<{ column_name: string; same: boolean }>(
    `SELECT column_name, time_interval = $3::interval AS same FROM timescaledb_information.dimensions WHERE ${where} AND dimension_number = 1`,
    [name, schema, h.chunk_interval],
  );
  const q = quoteTable(table);
  if (!dim.rowCount) {
    await c.query(`SELECT create_hypertable($1::regclass, by_range($2, $3::interval), migrate_data => true)`, [q, h.time_column, h.chunk_interval]);
    changed.push(`${table}: made a hypertable on ${h.time_column}, chunks of ${h.chunk_interval}`);
  } else if (dim.rows[0]!.column_name !== h.time_column) {
    throw new WeirError(
      'migrate.time_column',
      `hypertables.${table}: the hypertable is partitioned by ${dim.rows[0]!.column_name}, not ${h.time_column}; a hypertable's time column cannot be changed in place`,
    );
  } else if (!dim.rows[0]!.same) {
    await c.query('SELECT set_chunk_time_interval($1::regclass, $2::interval)', [q, h.chunk_interval]);
    changed.push(`${table}: chunk interval set to ${h.chunk_interval} (chunks created from now on)`);
  }

  if (h.compression) {
    const orderBy = h.compression.order_by;
    // The settings view has a row (the defaults) before compression is enabled: ask both.
    const cur = await c.query<{ enabled: boolean; segmentby: string | null; orderby: string | null }>(
      `SELECT t.compression_enabled AS enabled, s.segmentby, s.orderby
         FROM timescaledb_information.hypertables t
         LEFT JOIN timescaledb_information.hypertable_compression_settings s ON s.hypertable = $1::regclass
        WHERE format('%I.%I', t.hypertable_schema, t.hypertable_name)::regclass = $1::regclass`,
      [q],
    );
    const row = cur.rows[0]?.enabled ? cur.rows[0] : undefined;
    if (!row || normalList(row.segmentby) !== normalList(h.compression.segment_by) || normalList(row.orderby) !== normalList(orderBy)) {
      // Chunks compressed before keep the settings they were compressed with; new ones use these.
      const seg = h.compression.segment_by.map(quoteIdent).join(', ');
      const ord = orderBy.map((o) => o.replace(/^(\S+)/, (col) => quoteIdent(col))).join(', ');
      await c.query(`ALTER TABLE ${q} SET (timescaledb.compress, timescaledb.compress_segmentby = '${seg}', timescaledb.compress_orderby = '${ord}')`);
      changed.push(
        `${table}: compression ${row ? 'settings changed' : 'enabled'} (segment_by [${h.compression.segment_by.join(', ')}], order_by [${orderBy.join(', ')}])`,
      );
    }
  }
  await syncPolicy(
    c,
    table,
    q,
    { proc: 'policy_compression', key: 'compress_after', add: 'add_compression_policy', remove: 'remove_compression_policy', what: 'compression policy' },
    h.compression?.compress_after,
    [name, schema],
    changed,
  );
  await syncPolicy(
    c,
    table,
    q,
    { proc: 'policy_retention', key: 'drop_after', add: 'add_retention_policy', remove: 'remove_retention_policy', what: 'retention policy' },
    h.retention?.drop_after,
    [name, schema],
    changed,
  );
}

interface PolicyKind {
  proc: string;
  key: string;
  add: string;
  remove: string;
  what: string;
}

/** One policy job brought to `want` (undefined: no policy). */
async function syncPolicy(
  c: pg.ClientBase,
  table: string,
  q: string,
  p: PolicyKind,
  want: string | undefined,
  at: [string, string | null],
  changed: string[],
): Promise<void> {
  const jobs = await c.query<{ same: boolean | null; current: string | null }>(
    `SELECT config->>'${p.key}' AS current, (config->>'${p.key}')::interval = $3::interval AS same
       FROM timescaledb_information.jobs WHERE proc_name = '${p.proc}' AND hypertable_name = $1 AND ($2::text IS NULL OR hypertable_schema = $2)`,
    [...at, want ?? null],
  );
  const job = jobs.rows[0];
  if (job && want !== undefined && job.same) return;
  if (!job && want === undefined) return;
  if (job) await c.query(`SELECT ${p.remove}($1::regclass)`, [q]);
  if (want !== undefined) await c.query(`SELECT ${p.add}($1::regclass, $2::interval)`, [q, want]);
  changed.push(
    `${table}: ${p.what} ${!job ? 'added' : want === undefined ? 'removed' : 'changed'}${want === undefined ? '' : ` (${p.key} ${want}${job ? `, was ${job.current}` : ''})`}`,
  );
}
