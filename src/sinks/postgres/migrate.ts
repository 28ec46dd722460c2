// Versioned SQL files (migrations/NNN_name.sql) applied in order, each in its own transaction,
// recorded in weir_migrations, then the sink's `hypertables:` settings (hypertables.ts). An
// advisory lock keeps two replicas from migrating at once.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { WeirError } from '../../errors.js';
import { applyHypertables } from './hypertables.js';
import type { HypertableSettings } from './spec.js';

export interface MigrationResult {
  readonly applied: string[];
  readonly alreadyApplied: string[];
  /** What the hypertables settings changed. */
  readonly changed: string[];
  readonly notes: string[];
}

const LOCK_KEY = 0x77656972; // "weir"

/**
 * Shipped migrations whose text was changed after release without changing what they make where
 * the earlier text ran, with the checksums they had: a database that applied an earlier text is
 * not refused as "changed". 002_telemetry.sql read current_setting('shared_preload_libraries'),
 * which a role that is not superuser may not, so it failed for such roles; where it ran (a
 * superuser), the new text makes the same table, hypertable or index.
 */
const EARLIER_CHECKSUMS: Readonly<Record<string, readonly string[]>> = {
  '002_telemetry.sql': ['78099c463f88f54e7b9e2270f7a149fb921ec06dfa4951a0a8622d5f73fe6211'],
};

export function listMigrations(dir: string): Array<{ version: number; name: string; sql: string; checksum: string }> {
  return readdirSync(dir)
    .filter((f) => /^\d+_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(dir, f), 'utf8');
      return { version: Number(f.split('_')[0]), name: f, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export interface MigrateOptions {
  readonly hypertables?: Readonly<Record<string, HypertableSettings>>;
  /** How long connecting may take (the sink's connect_timeout_ms); 0 = no limit. */
  readonly connectTimeoutMs?: number;
  /** Ends the connection, and so the migration (rolled back), when aborted: weir run's SIGTERM. */
  readonly signal?: AbortSignal;
}

export async function migrate(url: string, dir: string, opts: MigrateOptions = {}): Promise<MigrationResult> {
  const client = new pg.Client({ connectionString: url, application_name: 'weir-migrate', connectionTimeoutMillis: opts.connectTimeoutMs ?? 0 });
  // pg may emit 'error' on a client whose server goes away; the failing call reports it.
  client.on('error', () => undefined);
  const stop = () => void client.end().catch(() => undefined);
  opts.signal?.addEventListener('abort', stop, { once: true });
  try {
    if (opts.signal?.aborted) throw new Error('migration stopped');
    await client.connect();
  } catch (err) {
    opts.signal?.removeEventListener('abort', stop);
    throw err;
  }
  const result: MigrationResult = { applied: [], alreadyApplied: [], changed: [], notes: [] };
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS weir_migrations (
      version int PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Map(
      (await client.query<{ version: number; checksum: string }>('SELECT version, checksum FROM weir_migrations')).rows.map((r) => [r.version, r.checksum]),
    );
    for (const m of listMigrations(dir)) {
      const seen = done.get(m.version);
      if (seen !== undefined) {
        if (seen !== m.checksum && !EARLIER_CHECKSUMS[m.name]?.includes(seen))
          throw new WeirError('migrate.changed', `migration ${m.name} was changed after it was applied; add a new migration instead`);
        result.alreadyApplied.push(m.name);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO weir_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new WeirError('migrate.failed', `migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      result.applied.push(m.name);
    }
    await client.query('BEGIN');
    try {
      const h = await applyHypertables(client, opts.hypertables ?? {});
      await client.query('COMMIT');
      result.changed.push(...h.changed);
      result.notes.push(...h.notes);
    } catch (err) {
      await client.query('ROLLBACK');
      throw err instanceof WeirError ? err : new WeirError('migrate.failed', `hypertables settings failed: ${(err as Error).message}`, { cause: err });
    }
  } finally {
    opts.signal?.removeEventListener('abort', stop);
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
  return result;
}
