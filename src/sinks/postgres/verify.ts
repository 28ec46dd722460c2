// What `weir check --connect` (and `weir run` at start) asks of a PostgreSQL sink: every action's
// table exists, every mapped column exists and takes the values the rule's own test outputs put
// into it, the role may insert, the action's on_conflict has the unique key or constraint it
// names, and the ledger and dead-letter tables are there. Types and conflict targets are checked
// by the server itself: each sample value, shaped as the sink shapes it, is cast to the column's
// type, and the insert with its ON CONFLICT is planned (EXPLAIN, nothing written), so a problem
// means exactly what an insert would refuse.
import pg from 'pg';
import { compileTemplate } from '../../rules/index.js';
import type { ActionToVerify, VerifyProblem } from '../types.js';
import type { PostgresAction, PostgresConfig } from './spec.js';
import { quoteIdent, quoteTable } from '../../sql/quote.js';
import { conflictTarget } from './conflict-target.js';
import { LEDGER_TABLE, toColumnValue, type ColumnType } from './statements.js';

interface Column extends ColumnType {
  /** format_type with typmod, for the suggestion and the message ('character varying(5)'). */
  readonly full: string;
}

async function tableColumns(c: pg.ClientBase, table: string): Promise<Map<string, Column> | undefined> {
  const oid = await c.query<{ oid: string | null }>('SELECT to_regclass($1)::oid AS oid', [table]);
  if (!oid.rows[0]?.oid) return undefined;
  const res = await c.query<{ name: string; type: string; full: string; cat: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, -1) AS type, format_type(a.atttypid, a.atttypmod) AS full, t.typcategory AS cat
       FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
      WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped`,
    [oid.rows[0].oid],
  );
  return new Map(res.rows.map((r) => [r.name, { sql: r.type, category: r.cat, full: r.full }]));
}

/**
 * A CREATE TABLE for an action's columns, with types guessed from their names and sample values,
 * and the key its on_conflict needs: TimescaleDB takes a unique key only when it holds the time
 * column, so create_hypertable is suggested only then.
 */
export function suggestTable(a: PostgresAction, samples: ReadonlyMap<string, unknown[]>): string {
  const names = Object.keys(a.columns);
  const types = new Map(names.map((c) => [c, guessType(c, samples.get(c) ?? [])]));
  const lines = names.map((c) => `  ${quoteIdent(c)} ${types.get(c)}`);
  const time = names.find((c) => types.get(c) === 'timestamptz NOT NULL');
  const target = a.on_conflict ? conflictTarget(a.on_conflict) : ({ kind: 'none' } as const);
  const notes: string[] = [];
  let key: readonly string[] | undefined;
  if (target.kind === 'columns' && target.columns?.every((c) => types.has(c))) {
    key = target.columns;
    lines.push(`  PRIMARY KEY (${key.map(quoteIdent).join(', ')})`);
  } else if (target.kind === 'columns') {
    notes.push(`-- on_conflict ${target.text} needs a unique index on exactly that; add it`);
  } else if (target.kind === 'constraint') {
    notes.push(`-- on_conflict names the constraint ${target.name}: add it, e.g. ALTER TABLE ${a.table} ADD CONSTRAINT ${target.name} UNIQUE (…);`);
  }
  if (time && key && !key.includes(time)) {
    notes.push(`-- not a hypertable: TimescaleDB needs the time column (${time}) in every unique key, and on_conflict's (${key.join(', ')}) lacks it`);
  } else if (time) {
    notes.push(`-- with TimescaleDB:\nSELECT create_hypertable('${a.table}', by_range('${time}', INTERVAL '1 day'));`);
  }
  return [`CREATE TABLE ${a.table} (\n${lines.join(',\n')}\n);`, ...notes].join('\n');
}

function guessType(column: string, values: unknown[]): string {
  if (/^(ts|time|timestamp)$|_at$|_ts$/.test(column)) return 'timestamptz NOT NULL';
  const v = values.find((x) => x !== undefined && x !== null);
  // A measurement that happens to be whole in the sample (temp 31) is still a measurement: only
  // names that count or identify get an integer type.
  if (typeof v === 'number') return /(^|_)(seq|count|id|n|num|number)$/.test(column) ? 'bigint' : 'double precision';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'object' && v !== null) return 'jsonb';
  return 'text';
}

/**
 * Plans the action's insert with its ON CONFLICT (EXPLAIN: nothing is written) and says what the
 * server refuses: a column list no unique index or constraint has exactly (42P10), a constraint
 * that is not there (42704), an UPDATE SET the table cannot take.
 */
async function conflictProblem(c: pg.ClientBase, a: PostgresAction, onConflict: string): Promise<VerifyProblem | undefined> {
  const cols = Object.keys(a.columns);
  try {
    await c.query(
      `EXPLAIN INSERT INTO ${quoteTable(a.table)} (${cols.map(quoteIdent).join(', ')}) VALUES (${cols.map(() => 'NULL').join(', ')}) ON CONFLICT ${onConflict}`,
    );
    return undefined;
  } catch (err) {
    const why = (err as Error).message;
    const code = (err as { code?: unknown }).code;
    const target = conflictTarget(onConflict);
    if (code === '42P10' && target.kind === 'columns') {
      return {
        message: `on_conflict ${target.text}: table ${a.table} has no unique index or constraint on ${target.text}, so every insert would be refused (${why})`,
        suggestion: target.columns ? `ALTER TABLE ${a.table} ADD UNIQUE (${target.columns.map(quoteIdent).join(', ')});` : undefined,
      };
    }
    if (code === '42704' && target.kind === 'constraint') {
      return { message: `on_conflict ${target.text}: table ${a.table} has no constraint ${target.name} (${why})` };
    }
    return { message: `on_conflict ${onConflict}: the server refuses it for table ${a.table} (${why})` };
  }
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

export async function verifyPostgres(cfg: PostgresConfig, actions: readonly ActionToVerify[], opts: { deadLetters: boolean }): Promise<VerifyProblem[]> {
  const c = new pg.Client({ connectionString: cfg.url, connectionTimeoutMillis: cfg.connect_timeout_ms, application_name: `${cfg.application_name}-check` });
  await c.connect();
  const problems: VerifyProblem[] = [];
  try {
    const needInsert = async (table: string, who: string): Promise<boolean> => {
      const ok = await c.query<{ ok: boolean }>("SELECT has_table_privilege($1, 'INSERT') AS ok", [table]);
      if (!ok.rows[0]?.ok)
        problems.push({ message: `${who}: role ${c.user ?? ''} may not insert into ${table}`, suggestion: `GRANT INSERT ON ${table} TO ${c.user ?? 'weir'};` });
      return Boolean(ok.rows[0]?.ok);
    };
    for (const a of actions) {
      const s = a.settings as PostgresAction;
      const templates = Object.entries(s.columns).map(([col, t]) => [col, compileTemplate(t)] as const);
      const samples = new Map<string, unknown[]>(templates.map(([col, t]) => [col, a.samples.map((x) => t(x.record, x.event))]));
      const cols = await tableColumns(c, s.table);
      if (!cols) {
        problems.push({ message: `${a.atKey(['table'])}: rule ${a.ruleId}: table ${s.table} does not exist`, suggestion: suggestTable(s, samples) });
        continue;
      }
      const mayInsert = await needInsert(s.table, `${a.at}: rule ${a.ruleId}`);
      // The conflict target is planned only for an insert that could otherwise be: every column there.
      if (mayInsert && s.on_conflict && [...samples.keys()].every((col) => cols.has(col))) {
        const problem = await conflictProblem(c, s, s.on_conflict);
        if (problem) problems.push({ ...problem, message: `${a.atKey(['on_conflict'])}: rule ${a.ruleId}: ${problem.message}` });
      }
      for (const [col, values] of samples) {
        const type = cols.get(col);
        if (!type) {
          problems.push({
            message: `${a.atKey(['columns', col])}: rule ${a.ruleId}: table ${s.table} has no column ${col}`,
            suggestion: `ALTER TABLE ${s.table} ADD COLUMN ${quoteIdent(col)} ${guessType(col, values).replace(' NOT NULL', '')};`,
          });
          continue;
        }
        for (const v of values) {
          if (v === undefined || v === null) continue;
          const shaped = toColumnValue(v, type);
          try {
            await c.query(`SELECT $1::${type.full}`, [shaped]);
          } catch (err) {
            problems.push({
              message: `${a.atKey(['columns', col])}: rule ${a.ruleId}: column ${s.table}.${col} is ${type.full}, which refuses the rule's ${typeName(v)} ${JSON.stringify(v)} from its tests (${(err as Error).message})`,
            });
            break;
          }
        }
      }
    }
    if (opts.deadLetters) {
      if (!(await tableColumns(c, cfg.dead_letter_table)))
        problems.push({ message: `dead_letter: table ${cfg.dead_letter_table} does not exist: run weir migrate` });
      else await needInsert(cfg.dead_letter_table, 'dead_letter');
    }
    if (cfg.ledger === 'on' && actions.length && !(await tableColumns(c, LEDGER_TABLE))) {
      problems.push({ message: `ledger: table ${LEDGER_TABLE} does not exist (ledger: on): run weir migrate, or set ledger: off` });
    }
  } finally {
    await c.end().catch(() => undefined);
  }
  return problems;
}
