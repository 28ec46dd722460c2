// Python's `protobuf` package (Google's implementation) with grpcio-tools (protoc as a Python
// package), for tests that hold weir's Protobuf decoding against an independent implementation.
// Installed once with pip into a virtual environment cached in ~/.cache/weir/python-protobuf-<key>/
// (WEIR_PY_CACHE names another place), built under `<cache>.partial-<pid>` and renamed into place
// whole (build-cache.ts). Needs python3 with venv and PyPI (pip); the first install takes about a
// minute. protobuf-codec.py beside the tests does the encoding and decoding.
import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { publishBuild } from './build-cache.js';

const PACKAGES = ['protobuf==7.36.2', 'grpcio-tools==1.85.1'];
const KEY = 'pb7.36.2-grpc1.85.1';

function cacheDir(): string {
  return process.env.WEIR_PY_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'weir', `python-protobuf-${KEY}`);
}

/** The python of the environment: from the cache, or installed now (said on stderr). */
export async function pythonWithProtobuf(): Promise<string> {
  const cache = cacheDir();
  const python = join(cache, 'bin', 'python');
  if (existsSync(python)) return python;
  const partial = `${cache}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  process.stderr.write(`# installing ${PACKAGES.join(' ')} into ${cache}, once\n`);
  const run = promisify(execFile);
  try {
    await run('python3', ['-m', 'venv', partial]);
    await run(join(partial, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...PACKAGES], { maxBuffer: 16 << 20 });
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  publishBuild(partial, cache, python);
  return python;
}
