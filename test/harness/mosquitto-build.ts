// A current Mosquitto, built once from Debian's source package, for the end-to-end benchmarks.
//
// The harness's broker is Debian 12's package, Mosquitto 2.0.11 (June 2021), and the tests keep
// using it: it is what a Debian 12 host runs. But 2.0.11's handling of a client's outgoing
// messages (its inflight and queued accounting, rewritten in 2.0.12–2.0.16) made it spend more CPU
// per message delivered to weir with every run of a benchmark: 14.3 → 32.4 µs over five runs of
// 1,000,000 into Kafka, while its cost for the counting subscriber between them stayed at 11.5–14.4
// (docs/benchmarks.md, "Mosquitto 2.0.11's cost per message rises run by run"). With 2.0.21 the
// same benchmark's broker cost stayed at 13.3–14.7 µs. The benchmarks measure weir against a
// broker, not one broker's old bug, so they run this build (BENCH_MOSQUITTO=debian runs the package).
//
// The source is Debian's own (its next release, trixie, ships 2.0.21), from the same apt mirror
// the package comes from, checked against the checksum its Sources index gives. Building the
// broker alone takes about 15 s of CPU; the binary is cached in .it/mosquitto-<version>/.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishBuild } from './build-cache.js';
import { tempDir } from './process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const MOSQUITTO_BUILD_VERSION = '2.0.21';
const SOURCE_URL = `http://deb.debian.org/debian/pool/main/m/mosquitto/mosquitto_${MOSQUITTO_BUILD_VERSION}.orig.tar.gz`;
/** From trixie's Sources index (Checksums-Sha256 of mosquitto_2.0.21.orig.tar.gz). */
const SOURCE_SHA256 = '551daff96cd0675faf888f8881536177934424ecc45924fecf94cffe207f6e81';
/** The broker only: no clients' JSON output, docs, websockets, systemd or DLT (none is packaged here). */
const MAKE_FLAGS = ['WITH_CJSON=no', 'WITH_DOCS=no', 'WITH_WEBSOCKETS=no', 'WITH_SRV=no', 'WITH_SYSTEMD=no', 'WITH_WRAP=no', 'WITH_DLT=no'];

/** The built broker's binary: from the cache, or downloaded, checked and built now. */
export async function builtMosquitto(): Promise<string> {
  const cache = join(ROOT, '.it', `mosquitto-${MOSQUITTO_BUILD_VERSION}`);
  const bin = join(cache, 'mosquitto');
  if (existsSync(bin)) return bin;
  const res = await fetch(SOURCE_URL);
  if (!res.ok) throw new Error(`downloading ${SOURCE_URL}: HTTP ${res.status}`);
  const archive = Buffer.from(await res.arrayBuffer());
  const sum = createHash('sha256').update(archive).digest('hex');
  if (sum !== SOURCE_SHA256) throw new Error(`${SOURCE_URL}: sha256 ${sum}, expected ${SOURCE_SHA256}`);
  const work = tempDir('mosquitto-build');
  try {
    writeFileSync(join(work, 'src.tar.gz'), archive);
    execFileSync('tar', ['xzf', 'src.tar.gz'], { cwd: work });
    const top = readdirSync(work).find((f) => f.startsWith('mosquitto-'));
    if (!top) throw new Error(`${SOURCE_URL}: no mosquitto-* directory inside`);
    process.stderr.write(`# building Mosquitto ${MOSQUITTO_BUILD_VERSION} from Debian's source (once; cached in ${cache})\n`);
    // Not under /tmp/cpu.lock as TimescaleDB's build is: a benchmark run under that lock would
    // wait for itself. The build is about 15 s of CPU, before anything is measured.
    execFileSync('make', ['-C', join(work, top), '-j2', ...MAKE_FLAGS, 'binary'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      maxBuffer: 64 * 1024 * 1024,
    });
    // The cache appears whole or not at all; a run that built the same first keeps its copy.
    const partial = `${cache}.partial-${process.pid}`;
    mkdirSync(partial, { recursive: true });
    renameSync(join(work, top, 'src', 'mosquitto'), join(partial, 'mosquitto'));
    publishBuild(partial, cache, bin);
    return bin;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The broker's own version line (`mosquitto version 2.0.21`), for a benchmark's results. */
export function mosquittoVersion(bin: string): string {
  try {
    execFileSync(bin, ['-h'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    // `mosquitto -h` prints its usage and exits 3.
    const out = String((err as { stdout?: Buffer }).stdout ?? '');
    return /mosquitto version \S+/.exec(out)?.[0] ?? 'unknown';
  }
  return 'unknown';
}
