// The TimescaleDB extension for the harness's PostgreSQL. No package registry reachable here serves
// it, so it comes, in this order, from:
//   1. the machine: already installed into the server's directories (Timescale's packages, an
//      earlier run) — used as it is;
//   2. the cache .it/timescaledb-<version>/pg<major>/ (lib/*.so, extension/*.sql|.control) left by
//      an earlier build — copied into `pg_config --pkglibdir` and `--sharedir`/extension;
//   3. a source archive, WEIR_TIMESCALEDB_SOURCE or ../shared/vendor/timescaledb-2.28.3.tar.gz —
//      built once (cmake; about 100 s on 2 cores, under `flock /tmp/cpu.lock` so it takes turns
//      with other heavy jobs), staged with `make install DESTDIR=`, cached, then copied as in 2.
// Where none of these works (no source, no build tools, not allowed to write the server's
// directories) the result says why, and the TimescaleDB tests report themselves as not run.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const TIMESCALEDB_VERSION = '2.28.3';
const DEFAULT_SOURCE = resolve(ROOT, '..', 'shared/vendor', `timescaledb-${TIMESCALEDB_VERSION}.tar.gz`);

export type TimescaledbAvailability = { available: true; version: string; from: 'installed' | 'cache' | 'built' } | { available: false; reason: string };

interface PgDirs {
  major: string;
  pgConfig: string;
  serverIncludes: string;
  pkglibdir: string;
  extensiondir: string;
}

/** The server's own directories, from the pg_config beside its binaries (Debian's layout). */
function pgDirs(bin: string): PgDirs {
  const pgConfig = join(bin, 'pg_config');
  const ask = (flag: string) => execFileSync(pgConfig, [flag]).toString().trim();
  const major = /(\d+)/.exec(ask('--version'))?.[1] ?? 'unknown';
  return { major, pgConfig, serverIncludes: ask('--includedir-server'), pkglibdir: ask('--pkglibdir'), extensiondir: join(ask('--sharedir'), 'extension') };
}

function installed(d: PgDirs): boolean {
  return existsSync(join(d.pkglibdir, 'timescaledb.so')) && existsSync(join(d.extensiondir, 'timescaledb.control'));
}

/** Copies every timescaledb* file of `from` into `to` that is not there yet. */
function copyMissing(from: string, to: string): void {
  for (const f of readdirSync(from)) {
    if (!f.startsWith('timescaledb')) continue;
    if (!existsSync(join(to, f))) copyFileSync(join(from, f), join(to, f));
  }
}

/** Builds the archive into a staging root and moves the built files into `cache`. */
function build(source: string, d: PgDirs, cache: string): void {
  const work = tempDir('tsdb-build');
  try {
    execFileSync('tar', ['xzf', source, '-C', work]);
    const top = readdirSync(work).find((f) => f.startsWith('timescaledb'));
    if (!top) throw new Error(`${source}: no timescaledb-* directory inside`);
    const src = join(work, top);
    const stage = join(work, 'stage');
    // One shell under the CPU lock: configure, compile on both cores, stage the install.
    // A build that waited for the lock behind another run's build of the same version uses that one.
    const script = [
      'set -e',
      `if [ -d '${cache}' ]; then exit 0; fi`,
      `cd '${src}'`,
      `./bootstrap -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF -DWARNINGS_AS_ERRORS=OFF -DLINTER=OFF -DCMAKE_BUILD_TYPE=Release -DPG_CONFIG='${d.pgConfig}' >/dev/null`,
      'cd build',
      'make -j2 >/dev/null',
      `make install DESTDIR='${stage}' >/dev/null`,
    ].join('\n');
    process.stderr.write(`# building TimescaleDB ${TIMESCALEDB_VERSION} from ${source} (once; cached in ${cache})\n`);
    execFileSync('flock', ['/tmp/cpu.lock', 'bash', '-c', script], { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
    if (existsSync(cache)) return;
    const partial = `${cache}.partial-${process.pid}`;
    mkdirSync(join(partial, 'lib'), { recursive: true });
    mkdirSync(join(partial, 'extension'), { recursive: true });
    copyMissing(join(stage, d.pkglibdir), join(partial, 'lib'));
    copyMissing(join(stage, d.extensiondir), join(partial, 'extension'));
    // A cache directory appears whole or not at all, so a killed build never leaves half of one.
    mkdirSync(dirname(cache), { recursive: true });
    try {
      renameSync(partial, cache);
    } catch (err) {
      // Another run finished the same build first: keep its copy.
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(cache)) throw err;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function describe(err: unknown): string {
  const e = err as { stderr?: Buffer | string; message?: string };
  const tail = e.stderr ? String(e.stderr).trim().split('\n').slice(-5).join(' | ') : '';
  return `${e.message ?? String(err)}${tail ? `: ${tail}` : ''}`;
}

/** Makes the extension loadable by the server whose binaries are in `bin`, or says why not. */
export function ensureTimescaledb(bin: string): TimescaledbAvailability {
  let d: PgDirs;
  try {
    d = pgDirs(bin);
  } catch (err) {
    return { available: false, reason: `pg_config not found beside ${bin} (${describe(err)})` };
  }
  if (installed(d)) return { available: true, version: 'installed', from: 'installed' };
  const cache = join(ROOT, '.it', `timescaledb-${TIMESCALEDB_VERSION}`, `pg${d.major}`);
  let from: 'cache' | 'built' = 'cache';
  if (!existsSync(cache)) {
    const source = process.env.WEIR_TIMESCALEDB_SOURCE ?? DEFAULT_SOURCE;
    if (!existsSync(source)) return { available: false, reason: `not installed, no cache in ${cache}, no source at ${source} (set WEIR_TIMESCALEDB_SOURCE)` };
    if (!existsSync(join(d.serverIncludes, 'postgres.h'))) {
      return { available: false, reason: `building it needs postgresql-server-dev-${d.major} (and cmake, libssl-dev): .ci/run installs them` };
    }
    try {
      build(source, d, cache);
    } catch (err) {
      return { available: false, reason: `building ${source} failed: ${describe(err)}` };
    }
    from = 'built';
  }
  try {
    copyMissing(join(cache, 'lib'), d.pkglibdir);
    copyMissing(join(cache, 'extension'), d.extensiondir);
  } catch (err) {
    return {
      available: false,
      reason: `cannot install the cached build into ${d.pkglibdir} and ${d.extensiondir} (${describe(err)}); run the tests as root once`,
    };
  }
  return installed(d)
    ? { available: true, version: TIMESCALEDB_VERSION, from }
    : { available: false, reason: `copied ${cache} but ${d.pkglibdir}/timescaledb.so is still missing` };
}
