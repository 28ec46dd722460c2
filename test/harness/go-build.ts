// Go programs the tests run, built once and cached in ~/.cache/weir/go/<name>-<key>/ (WEIR_GO_CACHE
// names another place): Prometheus's promtool (promtool.ts), Helm (helm.ts), and weir's own
// test/deploy/kube-validate. Outside the checkout, like the Node .ci/run installs beside it, so a
// fresh clone (CI's) and every worktree use the same binaries. One mechanism for all:
// the build runs under `nice -n 19` (the machine's two cores are shared) with GOTOOLCHAIN=local, so
// a go.mod asking for a newer Go fails here rather than fetching a toolchain; its output goes to
// `<cache>.partial-<pid>` and is renamed into place whole (build-cache.ts). Go's module cache
// (~/go/pkg/mod) and build cache (~/.cache/go-build) keep the sources and objects, so a second build
// of the same program, e.g. after its cache directory was removed, takes seconds. Needs Go (1.26 is
// at /usr/local/go/bin/go on these machines; GO=… names another). The first builds are heavy
// (minutes of both cores): run them under `flock /tmp/weir-heavy.lock` where others share the
// machine (the harness does not take the lock itself: a suite run already holding it would wait
// for itself).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publishBuild } from './build-cache.js';
import { ROOT } from './weir.js';

/** Where the binaries are kept: WEIR_GO_CACHE, else weir's directory in the user's cache. */
export function goCacheDir(): string {
  return process.env.WEIR_GO_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'weir', 'go');
}

export function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

export interface GoBuild {
  /** The program's name: its binary's file name, and the cache directory's prefix. */
  readonly name: string;
  /** What the cache is keyed by: a version, or a hash of the sources. */
  readonly key: string;
  /** What is built, for the line on stderr. */
  readonly what: string;
  /** `go` arguments; `{out}` stands for the directory the binary must land in. */
  readonly args: readonly string[];
  /** Where go runs (a module's directory for `go build`). */
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** The program's binary: from the cache, or built now (minutes the first time; said on stderr). */
export async function builtGoProgram(b: GoBuild): Promise<string> {
  const cache = join(goCacheDir(), `${b.name}-${b.key}`);
  const bin = join(cache, b.name);
  if (existsSync(bin)) return bin;
  const go = goBinary();
  const partial = `${cache}.partial-${process.pid}`;
  mkdirSync(partial, { recursive: true });
  process.stderr.write(`# building ${b.name} (${b.what}) with ${go}, once; cached in ${cache}\n`);
  const started = Date.now();
  try {
    await promisify(execFile)('nice', ['-n', '19', go, ...b.args.map((a) => a.replaceAll('{out}', partial))], {
      cwd: b.cwd ?? ROOT,
      env: { ...process.env, GOBIN: partial, GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false', ...b.env },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    const e = err as { stderr?: string; message: string };
    throw new Error(`building ${b.name} with ${go} failed: ${e.stderr?.trim().split('\n').slice(-20).join('\n') || e.message}`);
  }
  if (!existsSync(join(partial, b.name))) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`building ${b.name}: go finished but left no ${b.name} binary`);
  }
  process.stderr.write(`# ${b.name} built in ${Math.round((Date.now() - started) / 1000)} s\n`);
  publishBuild(partial, cache, bin);
  return bin;
}
