// Rules writing the same table share one batch (the action's batchKey), and the ledger still
// counts what each rule really inserted: with ON CONFLICT DO NOTHING some rows of a batch are
// skipped, and only an insert per rule inside the one statement can tell whose. Driven through
// the core's SinkRunner and the PostgreSQL sink, in both insert modes, against a real PostgreSQL
// with weir's migrations (ledger, dead-letter table).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Outcome } from '../../src/core/ingest/ack-path.js';
import { ruleCounters } from '../../src/metrics/names.js';
import { migrate } from '../../src/sinks/postgres/migrate.js';
import { freshDatabase, sharedPostgres } from '../harness/postgres.js';
import { ROOT } from '../harness/weir.js';
import { query } from './fixtures.js';
import { startPgRunner } from './pg-runner.js';

const ACTION = { table: 'shared', columns: { id: '${id}', v: '${v}' }, on_conflict: '(id) DO NOTHING' };

type Row = { id: number; v: number | string };

for (const insertMode of ['unnest', 'values'] as const) {
  test(`${insertMode}: three rules in one batch, a duplicate across rules skipped, a refused row dead-lettered; the ledger counts each rule's inserted rows`, {
    timeout: 60_000,
  }, async () => {
    const url = await freshDatabase((await sharedPostgres()).url, `shared_${insertMode}`);
    await migrate(url, join(ROOT, 'migrations'));
    await query(url, 'CREATE TABLE shared (id int PRIMARY KEY, v int)');
    await query(url, 'INSERT INTO shared VALUES (2, 0)');
    const pg = await startPgRunner(url, { insertMode, instance: `shared-${insertMode}` });
    try {
      const handles = ['ra', 'rb', 'rc'].map((rule) => pg.runner.bind(rule, ACTION, ruleCounters(pg.metrics, rule)));
      /** Enqueues [rule index, row] pairs as one batch and resolves with each one's outcome. */
      const batch = async (rows: Array<[number, Row]>): Promise<Array<Outcome | undefined>> => {
        const outcomes: Array<Outcome | undefined> = rows.map(() => undefined);
        for (const [i, [h, row]] of rows.entries()) {
          pg.runner.enqueue(handles[h]!, row, { topic: `t/${row.id}`, payload: JSON.stringify(row) }, 10, { itemDone: (out) => (outcomes[i] = out) });
        }
        await pg.runner.flush();
        const deadline = Date.now() + 30_000;
        while (outcomes.includes(undefined) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        return outcomes;
      };
      // One statement: ra writes 1, 2 (already in the table) and 3; rb writes 3 too (v 2) and 4;
      // rc writes 6. Interleaved, as messages of three rules arrive.
      const first = await batch([
        [0, { id: 1, v: 1 }],
        [1, { id: 3, v: 2 }],
        [0, { id: 2, v: 1 }],
        [2, { id: 6, v: 1 }],
        [1, { id: 4, v: 2 }],
        [0, { id: 3, v: 1 }],
      ]);
      assert.deepEqual(first, ['stored', 'stored', 'stored', 'stored', 'stored', 'stored'], 'a skipped duplicate is stored as far as weir knows');
      // Then a batch with a value an int refuses: split around it, the rest committed.
      const second = await batch([
        [1, { id: 5, v: 'x' }],
        [2, { id: 7, v: 1 }],
      ]);
      assert.deepEqual(second, ['dead_lettered', 'stored']);
      const table = await query<{ id: number; v: number }>(url, 'SELECT id, v FROM shared ORDER BY id');
      assert.deepEqual(
        table.map((r) => r.id),
        [1, 2, 3, 4, 6, 7],
      );
      // Which rule's 3 went in is the server's choice (the inserts of one statement run in no
      // promised order); the ledger must say the same as the table.
      const v3 = table.find((r) => r.id === 3)!.v;
      const ledger = Object.fromEntries(
        (
          await query<{ rule_id: string; rows: string }>(url, "SELECT rule_id, sum(rows) AS rows FROM weir_ledger WHERE table_name = 'shared' GROUP BY rule_id")
        ).map((l) => [l.rule_id, Number(l.rows)]),
      );
      assert.deepEqual(ledger, v3 === 1 ? { ra: 2, rb: 1, rc: 2 } : { ra: 1, rb: 2, rc: 2 }, `row 3 holds v ${v3}`);
      const letters = await query<{ rule_id: string; reason: string }>(url, 'SELECT rule_id, reason FROM weir_dead_letter');
      assert.deepEqual(letters, [{ rule_id: 'rb', reason: 'rejected' }]);
      assert.deepEqual(
        handles.map((h) => [h.ruleId, h.counters.success.value, h.counters.deadLettered.value]),
        [
          ['ra', 3, 0],
          ['rb', 2, 1],
          ['rc', 2, 0],
        ],
        'counted per rule',
      );
    } finally {
      await pg.close();
    }
  });
}
