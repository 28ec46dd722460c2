// The postgres sink in the conformance suite: a table in a database of its own on the run's
// PostgreSQL (with weir's migrations, for the ledger the sink writes by default).
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from '../../../src/sinks/postgres/migrate.js';
import { freshDatabase, sharedPostgres, startPostgres } from '../../harness/postgres.js';
import { goodRecord, type SinkAdapter, type Target } from './adapter.js';

const MIGRATIONS = fileURLToPath(new URL('../../../migrations', import.meta.url));

async function target(serverUrl: string): Promise<Target> {
  const url = await freshDatabase(serverUrl, 'conformance');
  await migrate(url, MIGRATIONS);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('CREATE TABLE conformance (seq bigint NOT NULL, dev text, temp double precision)');
  await client.end();
  return {
    settings: { url, connect_timeout_ms: 2_000 },
    action: { table: 'conformance', columns: { seq: '${seq}', dev: '${dev}', temp: '${temp}' } },
    async stored() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query<{ seq: string }>('SELECT seq FROM conformance')).rows.map((r) => Number(r.seq));
      } finally {
        await c.end();
      }
    },
  };
}

export const postgresAdapter: SinkAdapter = {
  target: async () => target((await sharedPostgres()).url),
  async ownService() {
    const server = await startPostgres();
    return { service: server, target: await target(server.url) };
  },
  // "hot" cannot go into a double precision column: the server refuses this row only.
  rejectable: (seq) => ({ ...goodRecord(seq), temp: 'hot' }),
  rejection: /invalid input syntax for type double precision/,
};
