// Runs weir as its own process (so a test can SIGKILL it) with a weir.yaml written from a
// template, and reads its /metrics and /readyz.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePrometheus } from '../../src/metrics/text.js';
import { freePort, startService, tempDir, waitFor, type Service } from './process.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const ENTRY = join(ROOT, 'test/harness/weir-entry.ts');
/** Absolute, so weir can run with its cwd in a temp directory. */
const TSX = import.meta.resolve('tsx');

/**
 * The node flags bin/weir.js's first line runs weir with (`#!/usr/bin/env -S node <flags>`): the
 * shipped settings, which a harness that starts `node bin/weir.js` must pass itself.
 */
export function shippedNodeFlags(): string[] {
  const first = readFileSync(join(ROOT, 'bin/weir.js'), 'utf8').split('\n', 1)[0]!;
  const m = /^#!\/usr\/bin\/env -S node((?: --[\w-]+(?:=\S+)?)*)$/.exec(first);
  if (!m) throw new Error(`bin/weir.js: first line ${JSON.stringify(first)} is not "#!/usr/bin/env -S node [--flag…]"`);
  return m[1]!.split(' ').filter(Boolean);
}

/** Runs the CLI to completion (in `cwd`, default the repository); resolves with its exit code and output. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p: ChildProcess = spawn(process.execPath, ['--import', TSX, ENTRY, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d: Buffer) => (stdout += d));
    p.stderr!.on('data', (d: Buffer) => (stderr += d));
    p.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

export interface WeirProcess {
  readonly dir: string;
  readonly httpPort: number;
  readonly svc: Service;
  metrics(): Promise<Map<string, number>>;
  ready(): Promise<boolean>;
  /** Sum of a metric over all label sets that include `match` (e.g. `rule="r1"`). */
  metric(name: string, match?: string): Promise<number>;
  log(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM and wait for a clean exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface WeirFiles {
  /** weir.yaml text; `{{HTTP_PORT}}` is replaced by a free port. */
  config: string;
  /** Rule files by name. */
  rules: Record<string, string>;
}

/** Sum of a metric over the label sets of one scrape (parseMetrics) that include `match`. */
export function sumMetric(metrics: ReadonlyMap<string, number>, name: string, match?: string): number {
  let sum = 0;
  for (const [k, v] of metrics) {
    const brace = k.indexOf('{');
    const n = brace < 0 ? k : k.slice(0, brace);
    if (n === name && (!match || k.includes(match))) sum += v;
  }
  return sum;
}

export function writeWeirFiles(files: WeirFiles, port: number, dir = tempDir('weir')): string {
  mkdirSync(join(dir, 'rules'), { recursive: true });
  writeFileSync(join(dir, 'weir.yaml'), files.config.replaceAll('{{HTTP_PORT}}', String(port)));
  for (const [name, text] of Object.entries(files.rules)) {
    mkdirSync(dirname(join(dir, 'rules', name)), { recursive: true });
    writeFileSync(join(dir, 'rules', name), text);
  }
  return dir;
}

export async function startWeir(
  files: WeirFiles,
  opts: {
    dir?: string;
    env?: NodeJS.ProcessEnv;
    args?: string[];
    nodeArgs?: string[];
    compiled?: boolean;
    /** A bin/weir.js to run instead of the repository's: a copy of the image's /app (test/dockerfile.test.ts). */
    entry?: string;
    /** Whether weir serves /healthz on this port; default: a plain HTTP GET (http.tls needs its own). */
    healthz?: (port: number) => Promise<boolean>;
  } = {},
): Promise<WeirProcess> {
  const httpPort = await freePort();
  const dir = writeWeirFiles(files, httpPort, opts.dir);
  // compiled: run bin/weir.js on dist/ as production does (benchmarks; `npm run build` first).
  const entry = opts.entry ? [opts.entry] : opts.compiled ? [join(ROOT, 'bin/weir.js')] : ['--import', TSX, ENTRY];
  const svc = startService(
    process.execPath,
    [...(opts.nodeArgs ?? []), ...entry, 'run', '-c', join(dir, 'weir.yaml'), ...(opts.args ?? [])],
    join(dir, 'weir.log'),
    {
      cwd: dir,
      env: { ...process.env, WEIR_LOG_LEVEL: 'info', ...opts.env },
    },
  );
  const base = `http://127.0.0.1:${httpPort}`;
  const metrics = async () => parseMetrics(await (await fetch(`${base}/metrics`)).text());
  const w: WeirProcess = {
    dir,
    httpPort,
    svc,
    metrics,
    async ready() {
      const r = await fetch(`${base}/readyz`);
      return r.status === 200;
    },
    async metric(name, match) {
      return sumMetric(await metrics(), name, match);
    },
    log: () => svc.tail(10_000),
    async kill(signal = 'SIGKILL') {
      svc.proc.kill(signal);
      await new Promise((r) => (svc.proc.exitCode !== null || svc.proc.signalCode !== null ? r(null) : svc.proc.once('exit', r)));
    },
    async stop() {
      await svc.stop(60_000);
      // A part that did not close in time is survivable (weir bounds it) but worth seeing in CI.
      const stuck = svc
        .tail(100_000)
        .split('\n')
        .filter((l) => l.includes('left behind') || l.includes('open handles keep'));
      if (stuck.length) process.stderr.write(`weir in ${dir} stopped with parts left open:\n${stuck.join('\n')}\n`);
      return svc.proc.exitCode;
    },
  };
  // waitFor retries a check that throws, so an exit is a value here: a weir that refused its
  // config fails the start at once rather than after the whole wait.
  const up = await waitFor(
    async () => {
      if (svc.proc.exitCode !== null) return 'exited';
      return (opts.healthz ? await opts.healthz(httpPort) : (await fetch(`${base}/healthz`)).ok) && 'up';
    },
    30_000,
    'weir to serve /healthz',
  );
  if (up === 'exited') throw new Error(`weir exited with ${svc.proc.exitCode}:\n${svc.tail()}`);
  return w;
}

/** Prometheus text format → `name{labels}` (labels as prom-client writes them) → value. */
export function parseMetrics(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of parsePrometheus(text)) {
    const labels = Object.entries(s.labels).map(([k, v]) => `${k}="${v}"`);
    m.set(labels.length ? `${s.name}{${labels.join(',')}}` : s.name, s.value);
  }
  return m;
}
