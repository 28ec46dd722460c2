// The PostgreSQL sink's side of `weir reconcile`: each table's row count beside weir_ledger, which
// every batch updates in the same statement as its rows (so it survives restarts and covers every
// replica): the table holding exactly what the ledger says means every row weir committed is
// there and nothing else is.
import pg from 'pg';
import type { ActionOf, CountContext, TargetCount } from '../types.js';
import type { PostgresAction, PostgresConfig } from './spec.js';
import { quoteTable } from '../../sql/quote.js';
import { LEDGER_TABLE } from './statements.js';

export async function countPostgres(cfg: PostgresConfig, actions: ReadonlyArray<ActionOf<PostgresAction>>, ctx: CountContext): Promise<TargetCount[]> {
  // connect_timeout_ms: a database that does not answer (a host gone, a firewall dropping) is
  // reported as unread after that long, not waited on for ever.
  const client = new pg.Client({ connectionString: cfg.url, application_name: 'weir-reconcile', connectionTimeoutMillis: cfg.connect_timeout_ms });
  await client.connect();
  try {
    const ledger = await client.query<{ rule_id: string; table_name: string; rows: string }>(
      `SELECT rule_id, table_name, sum(rows) AS rows FROM ${quoteTable(LEDGER_TABLE)} WHERE sink = $1 GROUP BY rule_id, table_name`,
      [ctx.sink],
    );
    // A database whose dead-letter table is not migrated yet simply has none.
    const dead = await client
      .query<{ rule_id: string; n: string }>(`SELECT rule_id, count(*) AS n FROM ${quoteTable(cfg.dead_letter_table)} GROUP BY rule_id`)
      .then((r) => new Map(r.rows.map((x) => [x.rule_id, Number(x.n)])))
      .catch(() => new Map<string, number>());
    // table → rule → rows the ledger holds (0 for a rule of the rule files that stored nothing yet).
    const tables = new Map<string, Map<string, number>>();
    const rulesOf = (table: string) => tables.get(table) ?? tables.set(table, new Map()).get(table)!;
    for (const a of actions) rulesOf(a.settings.table).set(a.rule, 0);
    for (const l of ledger.rows) rulesOf(l.table_name).set(l.rule_id, Number(l.rows));
    const out: TargetCount[] = [];
    for (const [table, rules] of tables) {
      ctx.progress(`counting rows of ${table}…`);
      const [r] = (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quoteTable(table)}`)).rows;
      out.push({ target: table, rules: [...rules.keys()], held: Number(r!.n), ledger: rules, deadLettered: dead });
    }
    return out;
  } finally {
    await client.end();
  }
}
