// A real PostgreSQL for the integration tests: a throwaway cluster (initdb) in a temp directory,
// on a free loopback port, trust auth for user `weir`. As root (CI), the server runs as the
// `postgres` system user, since PostgreSQL refuses to run as root.
//
//   const pg = await startPostgres();          // pg.url = 'postgres://weir@127.0.0.1:PORT/postgres'
//   await pg.stop(); await pg.start();         // an outage on the same port and data
//   const url = await freshDatabase(pg.url);   // a new empty database for one test
//
// With `timescaledb: true` (the run's shared server) the TimescaleDB extension is made loadable
// first (test/harness/timescaledb.ts) and preloaded; a database that never runs
// `CREATE EXTENSION timescaledb` behaves as plain PostgreSQL, so the plain tests share the server.
// `timescaledb` on the server says whether it is there or why not: TimescaleDB tests read it
// (timescaleTest) and report themselves as not run without it.
//
// Started as a program it starts one such cluster, prints {"url": ..., "timescaledb": ...} and
// runs until SIGTERM.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ensureDebianPackage } from './apt.js';
import { runAsProgram } from './broker-process.js';
import { ensureTimescaledb, type TimescaledbAvailability } from './timescaledb.js';
import { freePort, startService, tempDir, waitFor, type Service } from './process.js';

export interface PostgresServer {
  readonly url: string;
  readonly port: number;
  readonly timescaledb: TimescaledbAvailability;
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
  /** Lets the calling process exit while the server runs. */
  unref(): void;
}

function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

export interface StartPostgresOptions {
  /** Keep fsync on (benchmarks); tests turn it off, since they never crash the machine. */
  fsync?: boolean;
  /** Preload TimescaleDB, building or installing it first when it is missing. */
  timescaledb?: boolean;
}

const NOT_ASKED: TimescaledbAvailability = { available: false, reason: 'this server was started without timescaledb: true' };

export async function startPostgres(opts: StartPostgresOptions = {}): Promise<PostgresServer> {
  if (!binDir()) await ensureDebianPackage('postgresql', ['/usr/lib/postgresql']);
  const bin = binDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin');
  const dir = tempDir('pg');
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  let ids: { uid: number; gid: number } | undefined;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    ids = { uid, gid };
    chownSync(dir, uid, gid);
  }
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'weir', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--locale=C'], { stdio: 'pipe', ...ids });
  const timescaledb = opts.timescaledb ? ensureTimescaledb(bin) : NOT_ASKED;
  // telemetry_level=off: the extension would otherwise try to phone home from the test machine.
  const preload = timescaledb.available ? ['-c', 'shared_preload_libraries=timescaledb', '-c', 'timescaledb.telemetry_level=off'] : [];
  const port = await freePort();
  let svc: Service | undefined;
  const url = `postgres://weir@127.0.0.1:${port}/postgres`;
  const server: PostgresServer = {
    url,
    port,
    timescaledb,
    async start() {
      svc = startService(
        join(bin, 'postgres'),
        [
          '-D',
          data,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          `unix_socket_directories=${dir}`,
          '-c',
          `fsync=${opts.fsync ? 'on' : 'off'}`,
          '-c',
          'max_connections=200',
          '-c',
          'shared_buffers=128MB',
          ...preload,
        ],
        join(dir, 'postgres.log'),
        ids,
      );
      await waitFor(
        async () => {
          if (svc!.proc.exitCode !== null) throw new Error(`postgres exited:\n${svc!.tail()}`);
          const c = new pg.Client({ connectionString: url });
          try {
            await c.connect();
            await c.query('SELECT 1');
            return true;
          } finally {
            await c.end().catch(() => undefined);
          }
        },
        30_000,
        'PostgreSQL to accept connections',
      );
    },
    async stop() {
      // SIGINT = fast shutdown: clients are disconnected at once, as in a real outage.
      if (svc && svc.proc.exitCode === null) {
        svc.proc.kill('SIGINT');
        await svc.stop(15_000);
      }
    },
    unref() {
      svc?.unref();
    },
    async dispose() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

export interface SharedPostgres {
  readonly url: string;
  readonly timescaledb: TimescaledbAvailability;
}

let shared: Promise<SharedPostgres> | undefined;

/** The run's PostgreSQL (WEIR_TEST_POSTGRES), or one started for this process; TimescaleDB preloaded where it can be. */
export function sharedPostgres(): Promise<SharedPostgres> {
  const env = process.env.WEIR_TEST_POSTGRES;
  if (env) {
    const info = JSON.parse(env) as Partial<SharedPostgres> & { url: string };
    return Promise.resolve({ url: info.url, timescaledb: info.timescaledb ?? { available: false, reason: 'WEIR_TEST_POSTGRES names no timescaledb' } });
  }
  shared ??= startPostgres({ timescaledb: true }).then((s) => {
    // The test process must be able to end; on its exit the server is stopped (the kill is sync).
    s.unref();
    process.once('exit', () => void s.stop());
    return { url: s.url, timescaledb: s.timescaledb };
  });
  return shared;
}

let dbSeq = 0;

/** Creates an empty database on the server of `adminUrl` and returns its URL. */
export async function freshDatabase(adminUrl: string, prefix = 'weir_test'): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${dbSeq++}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A login role that is not superuser and a new database for it, as a managed service gives one
 * (`create role weir login; create database weir owner weir`), on the server of `adminUrl`; returns
 * the role's URL (the harness's trust auth: no password). `owner: false` leaves the database the
 * admin's, the role allowed to connect and to create tables in schema public only: it may not
 * create an extension there, not even a trusted one.
 */
export async function ordinaryRoleDatabase(adminUrl: string, opts: { owner?: boolean; prefix?: string } = {}): Promise<string> {
  const owner = opts.owner ?? true;
  const role = `${opts.prefix ?? 'weir_role'}_${process.pid}_${Date.now().toString(36)}_${dbSeq++}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
    await admin.query(owner ? `CREATE DATABASE ${role} OWNER ${role}` : `CREATE DATABASE ${role}`);
    if (!owner) await admin.query(`GRANT CONNECT ON DATABASE ${role} TO ${role}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${role}`;
  if (!owner) {
    // PostgreSQL 15 gives PUBLIC no CREATE on schema public: grant it, as the database's admin.
    const inDb = new pg.Client({ connectionString: u.toString() });
    await inDb.connect();
    try {
      await inDb.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
    } finally {
      await inDb.end();
    }
  }
  u.username = role;
  return u.toString();
}

await runAsProgram(
  import.meta.url,
  () => startPostgres({ timescaledb: true }),
  (s) => ({ url: s.url, timescaledb: s.timescaledb }),
  (s) => (s.timescaledb.available ? undefined : `# TimescaleDB not available, its tests will not run: ${s.timescaledb.reason}`),
);
