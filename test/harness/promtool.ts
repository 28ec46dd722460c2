// Prometheus's promtool, built once from the Go module proxy, for the tests of the shipped alert
// rules (deploy/prometheus/alerts.yml): `promtool check rules` and `promtool test rules` use
// Prometheus's own rule loader and PromQL engine, so what passes here loads and evaluates the same
// in a Prometheus of that version.
//
// Prometheus v3.16.0 is the Go module version v0.316.0 (its tags v3.x.y are published as
// v0.3xx.y). The build is `go install` with GOBIN at the cache, under `nice -n 19` (the machine's
// two cores are shared); GOTOOLCHAIN=local, so a go.mod asking for a newer Go fails here rather
// than fetching a toolchain. `-tags remove_all_sd` leaves out the service-discovery plugins
// (Prometheus's own build tag, plugins/*.go): the cloud SDKs they pull in (AWS, Azure, GCE,
// Kubernetes, …) were most of the build and play no part in checking or testing rules. Measured
// with an empty build cache (modules already downloaded), on the 2-core machine at load average
// 10-17: 660 s wall, 228 s of CPU. The binary is cached in .it/promtool-<version>/ and Go's
// module cache keeps the sources. Needs Go (1.26 is at /usr/local/go/bin/go on these machines).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publishBuild } from './build-cache.js';
import { ROOT } from './weir.js';

export const PROMETHEUS_VERSION = '3.16.0';
const MODULE_VERSION = 'v0.316.0';
const PACKAGE = 'github.com/prometheus/prometheus/cmd/promtool';

function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/** The promtool binary: from the cache, or built now (minutes; said on stderr). */
export async function builtPromtool(): Promise<string> {
  const cache = join(ROOT, '.it', `promtool-${PROMETHEUS_VERSION}`);
  const bin = join(cache, 'promtool');
  if (existsSync(bin)) return bin;
  const go = goBinary();
  const partial = `${cache}.partial-${process.pid}`;
  mkdirSync(partial, { recursive: true });
  process.stderr.write(`# building promtool ${PROMETHEUS_VERSION} (${PACKAGE}@${MODULE_VERSION}) with ${go}, once; cached in ${cache}\n`);
  const started = Date.now();
  try {
    await promisify(execFile)('nice', ['-n', '19', go, 'install', '-tags', 'remove_all_sd', `${PACKAGE}@${MODULE_VERSION}`], {
      env: { ...process.env, GOBIN: partial, GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    const e = err as { stderr?: string; message: string };
    throw new Error(`building promtool with ${go} failed: ${e.stderr?.trim().split('\n').slice(-20).join('\n') || e.message}`);
  }
  process.stderr.write(`# promtool built in ${Math.round((Date.now() - started) / 1000)} s\n`);
  publishBuild(partial, cache, bin);
  return bin;
}
