// The dead-letter table read and tended by `weir dlq`: filters become a WHERE clause, a replayed
// letter is marked in the same transaction as the letters its replay wrote, a replay holds an
// advisory lock so that two never send the same letter.
import pg from 'pg';
import type { LetterFilter, LetterStore, LetterSummary, ReplayMark, StoredLetter } from '../../dead-letters/letter-store.js';
import { WeirError } from '../../errors.js';
import type { DeadLetter } from '../../dead-letters/letter.js';
import { classifyPgError } from './classify.js';
import { insertDeadLetters } from './dead-letter-insert.js';
import { quoteTable } from '../../sql/quote.js';

/** "weir" then "dlq": the replay's advisory lock, beside migrate's 0x77656972. */
const REPLAY_LOCK = [0x77656972, 0x646c71] as const;

interface Row {
  id: string;
  rule_id: string;
  sink: string;
  reason: string;
  error: string;
  topic: string;
  payload_bytes: number;
  received_at: Date;
  dead_lettered_at: Date;
  attempts: number;
  replay_of: string | null;
  replayed_at: Date | null;
  replay_outcome: string | null;
  replay_note: string | null;
  payload?: Buffer;
  record?: unknown;
}

const SUMMARY_COLUMNS = `id::text, rule_id, sink, reason, error, topic, octet_length(payload) AS payload_bytes, received_at, dead_lettered_at,
  attempts, replay_of::text, replayed_at, replay_outcome, replay_note`;

export class PgLetterStore implements LetterStore {
  readonly where: string;
  private readonly pool: pg.Pool;
  /** Quoted, for SQL text. */
  private readonly table: string;

  constructor(
    url: string,
    private readonly tableName: string,
    sinkName: string,
  ) {
    const table = tableName;
    this.table = quoteTable(table);
    this.where = `table ${table} of sink ${sinkName}`;
    this.pool = new pg.Pool({ connectionString: url, max: 2, application_name: 'weir-dlq' });
    // An idle connection the server dropped must not crash the command; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  async list(filter: LetterFilter, limit: number): Promise<LetterSummary[]> {
    const params: unknown[] = [];
    const rows = await this.query(
      `SELECT ${SUMMARY_COLUMNS} FROM ${this.table} WHERE ${conditions(filter, params)} ORDER BY ${this.table}.id LIMIT ${Math.floor(limit)}`,
      params,
    );
    return rows.map(summary);
  }

  async count(filter: LetterFilter): Promise<number> {
    const params: unknown[] = [];
    const [row] = await this.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.table} WHERE ${conditions(filter, params)}`, params);
    return Number(row!.n);
  }

  async get(id: string): Promise<StoredLetter | undefined> {
    if (!/^\d{1,18}$/.test(id)) return undefined;
    const [row] = await this.query(`SELECT ${SUMMARY_COLUMNS}, payload, record FROM ${this.table} WHERE id = $1`, [id]);
    return row && stored(row);
  }

  async *pages(filter: LetterFilter, size: number): AsyncIterable<StoredLetter[]> {
    // Keyset pages up to the newest id at the start: letters a replay writes come after it.
    const [top] = await this.query<{ max: string | null }>(`SELECT max(id)::text AS max FROM ${this.table}`);
    if (top?.max == null) return;
    for (let after = '0'; ; ) {
      const params: unknown[] = [after, top.max];
      const rows = await this.query(
        `SELECT ${SUMMARY_COLUMNS}, payload, record FROM ${this.table} WHERE id > $1 AND id <= $2 AND ${conditions(filter, params)} ORDER BY ${this.table}.id LIMIT ${Math.floor(size)}`,
        params,
      );
      if (rows.length === 0) return;
      yield rows.map(stored);
      after = rows.at(-1)!.id;
    }
  }

  async markReplayed(letter: StoredLetter, mark: ReplayMark, written: readonly DeadLetter[]): Promise<boolean> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const marked = await client.query(
        `UPDATE ${this.table} SET replayed_at = $2, replay_outcome = $3, replay_note = $4 WHERE id = $1 AND replayed_at IS NULL`,
        [letter.id, new Date(mark.at), mark.outcome, mark.note ?? null],
      );
      if (marked.rowCount !== 1) {
        await client.query('ROLLBACK');
        return false;
      }
      if (written.length) await insertDeadLetters(client, this.tableName, written, { replayOf: letter.id, attempts: letter.attempts + 1 });
      await client.query('COMMIT');
      return true;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw notMigrated(err) ?? err;
    } finally {
      client.release();
    }
  }

  classify(err: unknown) {
    return classifyPgError(err);
  }

  async purge(filter: LetterFilter): Promise<number> {
    const params: unknown[] = [];
    const client = await this.pool.connect();
    try {
      return (await client.query(`DELETE FROM ${this.table} WHERE ${conditions(filter, params)}`, params)).rowCount ?? 0;
    } catch (err) {
      throw notMigrated(err) ?? err;
    } finally {
      client.release();
    }
  }

  async lockForReplay(): Promise<() => Promise<void>> {
    // A session lock on a connection of its own, held for the whole replay: it goes with the
    // connection if the command dies, so no stale lock is left behind.
    const client = await this.pool.connect();
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [...REPLAY_LOCK]);
    if (!rows[0]!.ok) {
      client.release();
      throw new WeirError('dlq.replay_running', `another weir dlq replay is running on ${this.where}`);
    }
    return async () => {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [...REPLAY_LOCK]).catch(() => undefined);
      client.release();
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async query<T extends pg.QueryResultRow = Row>(sql: string, params: unknown[] = []): Promise<T[]> {
    try {
      return (await this.pool.query<T>(sql, params)).rows;
    } catch (err) {
      throw notMigrated(err) ?? err;
    }
  }
}

/** The filter as SQL conditions, its values appended to `params`. */
function conditions(f: LetterFilter, params: unknown[]): string {
  const p = (v: unknown) => `$${params.push(v)}`;
  const c: string[] = ['true'];
  if (f.rule !== undefined) c.push(`${p(f.rule)} = ANY (string_to_array(rule_id, ','))`);
  if (f.sink !== undefined) c.push(`sink = ${p(f.sink)}`);
  if (f.reason !== undefined) c.push(`reason = ${p(f.reason)}`);
  if (f.since !== undefined) c.push(`received_at >= ${p(new Date(f.since))}`);
  if (f.until !== undefined) c.push(`received_at < ${p(new Date(f.until))}`);
  if (f.state === 'pending') c.push('replayed_at IS NULL');
  if (f.state === 'replayed') c.push('replayed_at IS NOT NULL');
  if (f.ids !== undefined) c.push(`id::text = ANY (${p(f.ids)}::text[])`);
  return c.join(' AND ');
}

/** A missing column of migration 004 (SQLSTATE 42703) means the table predates `weir dlq`. */
function notMigrated(err: unknown): WeirError | undefined {
  if ((err as { code?: string }).code !== '42703') return undefined;
  return new WeirError('dlq.not_migrated', `the dead-letter table has no replay columns yet (${(err as Error).message}): run weir migrate`, { cause: err });
}

function summary(r: Row): LetterSummary {
  return {
    id: r.id,
    ruleId: r.rule_id,
    sink: r.sink,
    reason: r.reason,
    error: r.error,
    topic: r.topic,
    payloadBytes: r.payload_bytes,
    receivedAt: r.received_at.getTime(),
    deadLetteredAt: r.dead_lettered_at.getTime(),
    attempts: r.attempts,
    replayOf: r.replay_of ?? undefined,
    replay: r.replayed_at ? { at: r.replayed_at.getTime(), outcome: r.replay_outcome as ReplayMark['outcome'], note: r.replay_note ?? undefined } : undefined,
  };
}

function stored(r: Row): StoredLetter {
  return { ...summary(r), payload: r.payload!, record: r.record ?? undefined };
}
