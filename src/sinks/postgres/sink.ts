// Batched inserts into PostgreSQL/TimescaleDB. A batch is one statement in one implicit
// transaction: when write() resolves, its rows are committed. Rows the server rejects make the
// statement fail as a whole; the core then splits the batch to isolate them (core/path/sink-runner.ts).
import pg from 'pg';
import { PostgresError } from './errors.js';
import { redactUrl } from '../../log.js';
import { compileTemplate } from '../../rules/index.js';
import type { DeadLetter } from '../../dead-letters/letter.js';
import { ALL_WRITTEN, type BoundAction, type Sink, type SinkDeps, type WriteResult } from '../types.js';
import { classifyPgError, pgFatalKind } from './classify.js';
import { insertDeadLetters } from './dead-letter-insert.js';
import type { PostgresAction, PostgresConfig } from './spec.js';
import { arrayLiteral, insertSql, LEDGER_TABLE, toColumnValue, withLedger, type ColumnType, type PgTarget } from './statements.js';

/** A class, not an object literal, so that V8 does not start allocating rows in the old generation (see eventClass in core/ingest/event.ts). */
export class PgRow {
  constructor(
    readonly target: PgTarget,
    readonly values: unknown[],
  ) {}
}

export class PostgresSink implements Sink<PostgresAction, PgRow> {
  private pool: pg.Pool | undefined;
  private readonly types = new Map<string, Promise<Map<string, ColumnType>>>();
  private readonly statements = new Map<PgTarget, string>();
  private readonly freeSlots: number[] = [];
  private nextSlot = 0;

  constructor(
    private readonly cfg: PostgresConfig,
    private readonly deps: SinkDeps,
  ) {}

  bind(action: PostgresAction, ruleId: string): BoundAction<PgRow> {
    const columns = Object.keys(action.columns);
    const templates = columns.map((c) => compileTemplate(action.columns[c]!));
    const target: PgTarget = { ruleId, table: action.table, columns, onConflict: action.on_conflict };
    return {
      // Rows of every action with this table, these columns in this order and this on_conflict
      // go in one statement, whichever rule they came from (write()).
      batchKey: JSON.stringify([action.table, columns, action.on_conflict ?? null]),
      encode: ({ record, event }) => {
        // A loop, not templates.map(closure): the closure over record and event was allocated
        // for every row (docs/benchmarks.md, memory). A PgRow, not a literal (see event.ts).
        const values = new Array<unknown>(templates.length);
        for (let i = 0; i < templates.length; i++) values[i] = templates[i]!(record, event);
        return new PgRow(target, values);
      },
      describe: (row) => Object.fromEntries(columns.map((c, i) => [c, row.values[i]])),
    };
  }

  async connect(signal: AbortSignal): Promise<void> {
    if (!this.pool) {
      const pool = new pg.Pool({
        connectionString: this.cfg.url,
        max: this.cfg.pool_size,
        connectionTimeoutMillis: this.cfg.connect_timeout_ms,
        statement_timeout: this.cfg.statement_timeout_ms || undefined,
        application_name: this.cfg.application_name,
      });
      // An idle client whose server went away emits 'error' on the pool; without a listener
      // that would crash the process. The next query reconnects.
      pool.on('error', (err) => this.deps.log.warn({ err: redactUrl(err.message) }, 'idle PostgreSQL connection lost'));
      this.pool = pool;
    }
    await this.probe(signal);
  }

  async probe(_signal: AbortSignal): Promise<void> {
    await this.requirePool().query('SELECT 1');
  }

  classify(err: unknown) {
    return classifyPgError(err);
  }

  fatalKind(err: unknown): string {
    return pgFatalKind(err);
  }

  async write(rows: PgRow[]): Promise<WriteResult> {
    if (rows.length === 0) return ALL_WRITTEN;
    // Every row of a batch has the same table, columns and on_conflict (bind's batchKey), so
    // the first row's target says how to insert them all.
    const target = rows[0]!.target;
    const ledger = this.cfg.ledger === 'on';
    const types = await this.columnTypes(target);
    const colTypes = target.columns.map((c) => types.get(c)!);
    // With the ledger, each rule's rows are inserted apart so that it counts each rule's (withLedger).
    const groups = ledger ? byRule(rows) : [rows];
    const params: unknown[] = [];
    const firsts: number[] = [];
    for (const g of groups) {
      firsts.push(params.length + 1);
      if (this.cfg.insert_mode === 'unnest') {
        for (let j = 0; j < colTypes.length; j++)
          params.push(
            arrayLiteral(
              g.map((r) => r.values[j]),
              colTypes[j],
            ),
          );
      } else {
        for (const r of g) for (let j = 0; j < colTypes.length; j++) params.push(toColumnValue(r.values[j], colTypes[j]!));
      }
    }
    // One rule's batch (the usual case) has a statement text that unnest can reuse.
    let sql = groups.length === 1 ? this.statements.get(target) : undefined;
    if (!sql) {
      const inserts = groups.map((g, i) => insertSql(this.cfg.insert_mode, target, types, g.length, firsts[i]));
      sql = ledger ? withLedger(inserts, LEDGER_TABLE, params.length + 1) : inserts[0]!;
      if (groups.length === 1 && this.cfg.insert_mode === 'unnest') this.statements.set(target, sql);
    }
    // Concurrent batches each take a writer slot of their own, so their ledger rows never lock
    // each other.
    const slot = this.freeSlots.pop() ?? this.nextSlot++;
    if (ledger) params.push(this.deps.name, target.table, `${this.deps.instance ?? 'weir'}/${slot}`, ...groups.map((g) => g[0]!.target.ruleId));
    try {
      await this.requirePool().query(sql, params);
    } catch (err) {
      // A changed table (42xxx) may have new column types: look them up again next time, and
      // build the statements, whose casts name them, again.
      if (classifyPgError(err) === 'fatal') {
        this.types.delete(target.table);
        for (const t of this.statements.keys()) if (t.table === target.table) this.statements.delete(t);
      }
      throw err;
    } finally {
      this.freeSlots.push(slot);
    }
    return ALL_WRITTEN;
  }

  async deadLetter(letters: DeadLetter[]): Promise<void> {
    await insertDeadLetters(this.requirePool(), this.cfg.dead_letter_table, letters);
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  private requirePool(): pg.Pool {
    if (!this.pool) throw new PostgresError('sink.postgres.not_connected', 'the PostgreSQL sink is not connected');
    return this.pool;
  }

  /**
   * Column name → type of a table, looked up once (and again after a schema error). The type is
   * the one unnest's array parameter is cast to, so it carries no length or precision:
   * format_type(…, -1) names it without its typmod, in the parser's own spelling (`bpchar` and
   * `"bit"`; format_type(…, NULL) says `character` and `bit`, which read as char(1) and bit(1)).
   * An explicit cast of a parameter to `varchar(5)[]`, `char(3)[]` or `bit(3)[]` silently cuts a
   * value to fit (SQL standard); the INSERT's assignment to the column refuses it instead (22001,
   * 22026; numeric(p,s): 22003), as VALUES does. A domain keeps its name: its input applies the
   * base type's typmod and refuses too. See statements.ts.
   */
  private columnTypes(target: PgTarget): Promise<Map<string, ColumnType>> {
    let p = this.types.get(target.table);
    if (!p) {
      p = this.requirePool()
        .query<{ name: string; type: string; elem: string }>(
          `SELECT a.attname AS name, format_type(a.atttypid, -1) AS type, t.typcategory AS elem
             FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
            WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped`,
          [target.table],
        )
        .then((res) => {
          const m = new Map<string, ColumnType>(res.rows.map((r) => [r.name, { sql: r.type, category: r.elem }]));
          const missing = target.columns.filter((c) => !m.has(c));
          if (missing.length) {
            throw new PostgresError('sink.postgres.unknown_column', `table ${target.table} has no column ${missing.join(', ')}`);
          }
          return m;
        });
      p.catch(() => this.types.delete(target.table));
      this.types.set(target.table, p);
    }
    return p;
  }
}

/** A batch's rows by rule, in the order each rule first appears; the batch itself when it holds one rule's. */
function byRule(rows: PgRow[]): PgRow[][] {
  const first = rows[0]!.target.ruleId;
  if (rows.every((r) => r.target.ruleId === first)) return [rows];
  const groups = new Map<string, PgRow[]>();
  for (const r of rows) {
    const g = groups.get(r.target.ruleId);
    if (g) g.push(r);
    else groups.set(r.target.ruleId, [r]);
  }
  return [...groups.values()];
}
