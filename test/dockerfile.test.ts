// The Docker image, checked without a Docker engine (none runs where weir is developed): the
// Dockerfile is read as text; its base image is the exact Node version of .node-version, the one CI
// runs the suite on; .dockerignore sends only what the build COPYs; the runtime dependencies hold
// no demo package; the image's /app is rebuilt from the Dockerfile's COPY lines (node_modules as
// `npm prune --omit=dev` leaves it), weir runs there, and the HEALTHCHECK command answers for it
// over HTTP and HTTPS; the configs the image and the compose replicas run go through weir's own
// loader with the environment the container would have; and the node flags it runs weir with are
// checked on the node that runs these tests.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, posix } from 'node:path';
import { after, test } from 'node:test';
import { get as httpsGetRaw } from 'node:https';
import { parse as parseYaml } from 'yaml';
import { demoPackagesMissing } from '../src/cli/demo.js';
import { httpSection } from '../src/cli/health.js';
import { loadConfig } from '../src/config/load.js';
import type { WeirConfig } from '../src/config/types.js';
import { besideConfig, deadLetterPlace } from '../src/core/app/dead-letter-place.js';
import { certificates } from './harness/certificates.js';
import { tempDir } from './harness/process.js';
import { ROOT, shippedNodeFlags, startWeir, type WeirProcess } from './harness/weir.js';

interface Instruction {
  op: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(): Instruction[] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return text
    .split('\n')
    .map((l) => /^\s*([A-Z]+)\s+(.*)$/.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ op: m[1]!, args: m[2]!.trim() }));
}

/** The runtime stage (after the last FROM). */
function runtimeStage(): Instruction[] {
  const all = instructions();
  const from = all.map((i) => i.op).lastIndexOf('FROM');
  return all.slice(from + 1);
}

/** ENV lines in `KEY=value` form (several per line). */
function envOf(stage: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of stage.filter((x) => x.op === 'ENV')) for (const m of i.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S+)/g)) env[m[1]!] = m[2]!;
  return env;
}

/** The files the stored dead letters of a config would be written to. */
function letterFiles(cfg: WeirConfig): string[] {
  const place = deadLetterPlace(cfg);
  return [besideConfig(cfg, cfg.deadLetter.fallback_file), ...('file' in place ? [place.file] : [])];
}

test('Dockerfile (read as text, no Docker engine here): a data directory owned by the runtime user, declared a volume, named by WEIR_DATA_DIR', () => {
  const stage = runtimeStage();
  const user = stage.filter((i) => i.op === 'USER').at(-1)?.args;
  assert.ok(user && user !== 'root' && user !== '0', 'the image runs as a user other than root');
  const dataDir = envOf(stage).WEIR_DATA_DIR;
  assert.ok(dataDir && posix.isAbsolute(dataDir), 'ENV WEIR_DATA_DIR=<absolute directory>');
  const run = stage.filter((i) => i.op === 'RUN').map((i) => i.args);
  assert.ok(
    run.some((r) => r.includes(`mkdir -p ${dataDir}`) && new RegExp(`chown ${user}(:${user})? ${dataDir}(\\s|$)`).test(r)),
    `a RUN creates ${dataDir} and gives it to ${user}`,
  );
  assert.ok(
    stage.findIndex((i) => i.op === 'RUN' && i.args.includes(dataDir)) < stage.findIndex((i) => i.op === 'USER'),
    'the directory is made while still root',
  );
  const volumes = stage.filter((i) => i.op === 'VOLUME').flatMap((i) => (i.args.startsWith('[') ? (JSON.parse(i.args) as string[]) : i.args.split(/\s+/)));
  assert.ok(volumes.includes(dataDir), `VOLUME ${dataDir}`);
  // weir.yaml's own directory is not the runtime user's: nothing is copied there with --chown.
  const workdir = stage.filter((i) => i.op === 'WORKDIR').at(-1)?.args;
  assert.equal(workdir, '/app');
  assert.ok(!stage.some((i) => i.op === 'COPY' && i.args.includes('--chown')), 'the app directory stays read-only to weir');
});

test("the image's default config (no Docker engine here: loaded from the repo with the image's environment) writes dead letters only under WEIR_DATA_DIR", () => {
  const stage = runtimeStage();
  const env = envOf(stage);
  const cmd = JSON.parse(stage.filter((i) => i.op === 'CMD').at(-1)!.args) as string[];
  const configInImage = cmd[cmd.indexOf('--config') + 1]!;
  assert.equal(configInImage, '/app/weir.yaml');
  assert.ok(
    stage.some((i) => i.op === 'COPY' && i.args === 'weir.yaml ./weir.yaml'),
    'the image holds the repo weir.yaml at /app/weir.yaml',
  );
  // The repo's weir.yaml at its place in the image, with its rules beside it.
  const image = mkdtempSync(join(tmpdir(), 'weir-image-'));
  try {
    mkdirSync(join(image, 'app'));
    copyFileSync(join(ROOT, 'weir.yaml'), join(image, 'app/weir.yaml'));
    const cfg = loadConfig(join(image, 'app/weir.yaml'), env, join(ROOT, 'rules'));
    for (const f of letterFiles(cfg)) assert.equal(dirname(f), env.WEIR_DATA_DIR, `${f}: in the writable data directory`);
  } finally {
    rmSync(image, { recursive: true, force: true });
  }
});

test("the compose replicas (config at /etc/weir, root-owned) write dead letters under the image's WEIR_DATA_DIR", () => {
  const env: Record<string, string> = { ...envOf(runtimeStage()), WEIR_CLIENT_ID: 'weir-a', WEIR_PG_URL: 'postgres://weir@timescaledb:5432/weir' };
  const cfg = loadConfig(join(ROOT, 'deploy/weir.compose.yaml'), env, join(ROOT, 'deploy/rules'));
  for (const f of letterFiles(cfg)) assert.equal(dirname(f), env.WEIR_DATA_DIR, `${f}: in the writable data directory`);
});

test('outside the image (no WEIR_DATA_DIR) the shipped weir.yaml keeps its fallback file beside weir.yaml, whatever the working directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weir-beside-'));
  try {
    copyFileSync(join(ROOT, 'weir.yaml'), join(dir, 'weir.yaml'));
    const cfg = loadConfig(join(dir, 'weir.yaml'), {}, join(ROOT, 'rules'));
    assert.notEqual(process.cwd(), dir);
    assert.deepEqual(letterFiles(cfg), [join(dir, 'weir-dead-letter-fallback.jsonl')]);
    // Without fallback_file (the schema's default) and with a dead_letter.file: both beside weir.yaml.
    const nested = join(dir, 'sub/weir.yaml');
    mkdirSync(join(dir, 'sub/rules'), { recursive: true });
    writeFileSync(nested, 'dead_letter:\n  file: letters/dead.jsonl\n');
    const cfg2 = loadConfig(nested, {});
    assert.deepEqual(letterFiles(cfg2), [join(dir, 'sub/weir-dead-letter-fallback.jsonl'), join(dir, 'sub/letters/dead.jsonl')]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The young generation's size (MB) after a burst of short-lived objects, in a node started with `argv`. */
function youngGenerationMb(argv: string[], env: NodeJS.ProcessEnv = process.env): number {
  const dir = mkdtempSync(join(tmpdir(), 'weir-flags-'));
  try {
    const probe = join(dir, 'probe.mjs');
    writeFileSync(
      probe,
      "import v8 from 'node:v8';\n" +
        'let keep = [];\n' +
        'for (let i = 0; i < 2e6; i++) { keep.push({ i, s: `x${i}` }); if (keep.length > 20000) keep = []; }\n' +
        "console.log(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576);\n",
    );
    return Number(execFileSync(argv[0]!, [...argv.slice(1), probe], { encoding: 'utf8', env }).trim());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("bin/weir.js's shebang and the image's ENTRYPOINT run node with the same V8 flags, which this node (CI's: the image's) accepts and which cap the young generation", () => {
  const flags = shippedNodeFlags();
  assert.ok(
    flags.some((f) => f.startsWith('--max-semi-space-size=')),
    'bin/weir.js caps the semi-spaces',
  );
  const entry = JSON.parse(
    runtimeStage()
      .filter((i) => i.op === 'ENTRYPOINT')
      .at(-1)!.args,
  ) as string[];
  assert.deepEqual(entry, ['node', ...flags, 'bin/weir.js']);
  // As the kernel runs the shebang: /usr/bin/env with the rest of the line as one argument, finding
  // `node` on PATH, where the node running these tests comes first (in CI, .node-version's).
  const shebang = readFileSync(join(ROOT, 'bin/weir.js'), 'utf8').split('\n', 1)[0]!;
  const path = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  const shipped = youngGenerationMb(['/usr/bin/env', shebang.slice('#!/usr/bin/env '.length)], { ...process.env, PATH: path });
  const plain = youngGenerationMb([process.execPath]);
  const cap = Number(flags.find((f) => f.startsWith('--max-semi-space-size='))!.split('=')[1]);
  assert.ok(shipped <= 2 * cap + 1, `young generation ${shipped} MB with the shipped flags: at most two ${cap} MB semi-spaces`);
  assert.ok(plain > shipped, `and smaller than Node's default (${plain} MB)`);
});

/** The Node version the image and CI run (.node-version: one line, major.minor.patch). */
function nodeVersion(): string {
  const v = readFileSync(join(ROOT, '.node-version'), 'utf8').trim();
  assert.match(v, /^\d+\.\d+\.\d+$/, '.node-version: an exact major.minor.patch');
  return v;
}

test('every FROM is node:<.node-version>-bookworm(-slim), an exact version, and CI runs the suite on that version', () => {
  const version = nodeVersion();
  const froms = instructions().filter((i) => i.op === 'FROM');
  assert.equal(froms.length, 2, 'a build stage and a runtime stage');
  for (const f of froms) {
    const image = f.args.split(/\s+/)[0]!;
    assert.match(image, /^node:\d+\.\d+\.\d+-bookworm(-slim)?(@sha256:[0-9a-f]{64})?$/, `${image}: an exact version, no floating tag`);
    assert.equal(image.slice('node:'.length).split('-')[0], version, `${image}: the version of .node-version`);
  }
  assert.match(froms.at(-1)!.args, /-slim\b/, 'the runtime stage is the slim image');
  // .ci/run installs and runs that version; when CI runs these tests, this node is it.
  const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
  assert.match(ci, /< \.node-version\)/, '.ci/run reads .node-version');
  assert.match(ci, /npm pack[^\n]*"\$node_pkg@\$node_version"/, '.ci/run installs node-linux-<cpu>@<that version>');
  assert.match(
    ci,
    /export PATH="\$node_home\/bin:\$PATH"\n(?:.*\n)*npm run typecheck\n(?:.*\n)*npm test/,
    'and puts it first on PATH before typecheck, lint and test',
  );
  if (process.env.CI) assert.equal(process.version, `v${version}`, 'CI runs the tests on the Node version of the image');
  // No other node image anywhere the image or compose stack is described.
  const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
  assert.doesNotMatch(composeText, /image:\s*node:/, 'docker-compose.yml builds weir from the Dockerfile, naming no node image of its own');
});

/**
 * .dockerignore as Docker reads it (moby's patternmatcher): each pattern, cleaned, is matched
 * against the path and each of its parent directories (`*` and `?` within one segment, `**` across
 * them); the last pattern that matches decides, one with `!` keeping the path.
 */
function dockerignore(): { excluded(path: string): boolean; mayKeepUnder(dir: string): boolean } {
  const toRegExp = (pattern: string) => {
    let re = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (pattern.startsWith('**/', i)) {
        re += '(?:.*/)?';
        i += 2;
      } else if (pattern.startsWith('**', i)) {
        re += '.*';
        i += 1;
      } else if (c === '*') re += '[^/]*';
      else if (c === '?') re += '[^/]';
      else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
    }
    return new RegExp(`^${re}$`);
  };
  const rules = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const keep = l.startsWith('!');
      const pattern = posix.normalize(keep ? l.slice(1).trim() : l).replace(/^\/+|\/+$/g, '');
      return { keep, pattern, re: toRegExp(pattern) };
    });
  return {
    excluded(path) {
      const parts = path.split('/');
      const paths = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
      let excluded = false;
      for (const r of rules) if (paths.some((p) => r.re.test(p))) excluded = !r.keep;
      return excluded;
    },
    mayKeepUnder: (dir) => rules.some((r) => r.keep && (r.pattern.startsWith('**') || r.pattern.startsWith(`${dir}/`))),
  };
}

test('.dockerignore: the build context is what the Dockerfile copies (not node_modules, .git, .it, tests, docs, benchmarks) and small', () => {
  const ignore = dockerignore();
  for (const p of [
    'node_modules',
    'node_modules/pg/package.json',
    '.git',
    '.git/HEAD',
    '.it',
    '.it/x',
    'dist/main.js',
    'test/dockerfile.test.ts',
    'docs/operations.md',
    'bench/results/x.json',
    'deploy/weir.compose.yaml',
  ])
    assert.ok(ignore.excluded(p), `${p} is not sent to the build`);
  // Every source of a COPY that is not from another stage is in the context.
  const sources = instructions()
    .filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
  assert.ok(sources.includes('src') && sources.includes('package-lock.json'));
  for (const s of sources) {
    assert.ok(existsSync(join(ROOT, s)), `COPY ${s}: in the repository`);
    const files = lstatSync(join(ROOT, s)).isDirectory() ? readdirSync(join(ROOT, s), { recursive: true, encoding: 'utf8' }).map((f) => `${s}/${f}`) : [s];
    for (const f of files) assert.ok(!ignore.excluded(f), `COPY ${s}: ${f} is sent to the build`);
  }
  // The context's size, walking the working tree as the builder does (a symbolic link is sent as one).
  let bytes = 0;
  const walk = (rel: string) => {
    for (const name of readdirSync(join(ROOT, rel))) {
      const p = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(ROOT, p));
      if (st.isDirectory()) {
        if (!ignore.excluded(p) || ignore.mayKeepUnder(p)) walk(p);
      } else if (!ignore.excluded(p)) bytes += st.size;
    }
  };
  walk('');
  assert.ok(bytes < 8 * 1024 * 1024, `build context ${(bytes / 1048576).toFixed(1)} MB: under 8 MB`);
});

interface LockPackage {
  version?: string;
  dev?: boolean;
  optional?: boolean;
}

/** package-lock.json's installed packages by path (node_modules/…). */
function lockPackages(): Record<string, LockPackage> {
  return (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockPackage> }).packages;
}

const DEMO_PACKAGE = /^(@electric-sql\/pglite.*|aedes.*)$/;

test('the runtime dependency tree (what `npm prune --omit=dev` keeps for the image) has no demo package; they are devDependencies, so `npm ci && npm run demo` still has them', () => {
  const packages = lockPackages();
  const name = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
  const runtime = Object.entries(packages).filter(([path, p]) => path.startsWith('node_modules/') && !p.dev);
  assert.deepEqual(
    runtime.map(([path]) => path).filter((path) => DEMO_PACKAGE.test(name(path))),
    [],
  );
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  for (const demo of ['@electric-sql/pglite', '@electric-sql/pglite-socket', 'aedes']) {
    assert.ok(pkg.devDependencies?.[demo], `${demo}: a devDependency`);
    assert.equal(pkg.dependencies?.[demo] ?? pkg.optionalDependencies?.[demo], undefined, `${demo}: not installed by a production install`);
    assert.equal(packages[`node_modules/${demo}`]?.dev, true, `${demo}: in package-lock.json as a development package`);
  }
});

/**
 * The image's /app, rebuilt from the runtime stage's COPY lines: files from the repository, dist/
 * from the build (`npm ci` ran `prepare`), and node_modules as `npm prune --omit=dev` leaves it —
 * the lock's runtime packages, each a link to the installed one. A module that weir imports from a
 * development package fails to load here as it would in the image.
 */
function imageApp(): string {
  assert.ok(existsSync(join(ROOT, 'dist/main.js')), 'dist/ is built (npm ci runs `prepare`; or npm run build)');
  const app = tempDir('image-app');
  for (const { args } of runtimeStage().filter((i) => i.op === 'COPY')) {
    const [from, to] = args.split(/\s+/).slice(-2) as [string, string];
    const target = join(app, to.replace(/^\.\//, ''));
    if (from === '/app/node_modules') {
      for (const [path, p] of Object.entries(lockPackages())) {
        if (p.dev || !/^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) || !existsSync(join(ROOT, path))) continue;
        const link = join(app, path);
        mkdirSync(dirname(link), { recursive: true });
        symlinkSync(join(ROOT, path), link);
      }
    } else if (from.startsWith('/app/')) {
      cpSync(join(ROOT, from.slice('/app/'.length)), target, { recursive: true });
    } else {
      cpSync(join(ROOT, from), to.endsWith('/') ? join(target, from) : target, { recursive: true });
    }
  }
  return app;
}

/** The HEALTHCHECK's command (exec form), with its options. */
function healthcheck(): { cmd: string[]; timeoutS: number } {
  const hc = runtimeStage()
    .filter((i) => i.op === 'HEALTHCHECK')
    .at(-1)!.args;
  const cmd = JSON.parse(hc.slice(hc.indexOf('CMD ') + 4)) as string[];
  return { cmd, timeoutS: Number(/--timeout=(\d+)s/.exec(hc)?.[1]) };
}

/** Runs the HEALTHCHECK's command as Docker would in the container (cwd /app, its environment), `node` being this one. */
function probe(app: string, env: NodeJS.ProcessEnv, extra: string[] = []): Promise<{ code: number; out: string }> {
  const { cmd, timeoutS } = healthcheck();
  assert.equal(cmd[0], 'node');
  return new Promise((resolve) => {
    execFile(process.execPath, [...cmd.slice(1), ...extra], { cwd: app, env, timeout: timeoutS * 1000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}`.trim() }),
    );
  });
}

const weirs: WeirProcess[] = [];
after(async () => {
  for (const w of weirs) await w.kill();
});

/**
 * weir in the image's /app: the shipped weir.yaml with its endpoints from the environment as in the
 * container (a broker and database that are not there: /healthz answers regardless), the shipped
 * rules, the image's environment, node with the ENTRYPOINT's flags. `http` replaces its http block.
 */
async function weirInImage(app: string, http: string, healthz: (port: number) => Promise<boolean>): Promise<{ weir: WeirProcess; env: NodeJS.ProcessEnv }> {
  const shipped = readFileSync(join(ROOT, 'weir.yaml'), 'utf8');
  const config = shipped.replace(/^http:\n {2}port: .*$/m, http).replace(/^migrate_on_start: true$/m, 'migrate_on_start: false');
  assert.notEqual(config, shipped);
  assert.match(config, /^migrate_on_start: false$/m);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...envOf(runtimeStage()),
    WEIR_DATA_DIR: tempDir('image-data'),
    WEIR_MQTT_URL: 'mqtt://127.0.0.1:1',
    WEIR_PG_URL: 'postgres://weir@127.0.0.1:1/weir',
    WEIR_CLIENT_ID: `weir-image-${weirs.length}`,
    WEIR_LOG_LEVEL: 'warn',
  };
  const entry = JSON.parse(
    runtimeStage()
      .filter((i) => i.op === 'ENTRYPOINT')
      .at(-1)!.args,
  ) as string[];
  const weir = await startWeir({ config, rules: {} }, { dir: app, env, entry: join(app, entry.at(-1)!), nodeArgs: entry.slice(1, -1), healthz });
  weirs.push(weir);
  return { weir, env };
}

async function stopped(weir: WeirProcess): Promise<void> {
  assert.equal(await weir.stop(), 0);
  weirs.splice(weirs.indexOf(weir), 1);
}

test("the image's /app runs weir without any development package, and its HEALTHCHECK answers over HTTP (on http.host 0.0.0.0) and not once weir is gone", {
  timeout: 120_000,
}, async () => {
  const app = imageApp();
  assert.ok(!existsSync(join(app, 'node_modules/aedes')) && existsSync(join(app, 'node_modules/pg')), 'node_modules as in the image');
  const { weir, env } = await weirInImage(
    app,
    'http:\n  port: ${WEIR_HTTP_PORT:-{{HTTP_PORT}}}',
    async (port) => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok,
  );
  const up = await probe(app, env);
  assert.deepEqual(up, { code: 0, out: `healthy: http://127.0.0.1:${weir.httpPort}/healthz: 200` });
  await stopped(weir);
  const down = await probe(app, env);
  assert.equal(down.code, 1, down.out);
  assert.match(down.out, /^unhealthy: http:\/\/127\.0\.0\.1:\d+\/healthz: connect ECONNREFUSED/);
  // weir demo in the image: its packages are not there, and it says how to get them.
  const demo = await new Promise<{ code: number; err: string }>((resolve) =>
    execFile(process.execPath, [join(app, 'bin/weir.js'), 'demo', '--http-port', '0'], { cwd: app, env, timeout: 30_000 }, (err, _out, stderr) =>
      resolve({ code: err ? Number(err.code) : 0, err: stderr }),
    ),
  );
  assert.equal(demo.code, 1, demo.err);
  assert.match(demo.err, /weir demo needs @electric-sql\/pglite, @electric-sql\/pglite-socket, aedes .*`npm install --no-save @electric-sql\/pglite@\^/);
});

test('the HEALTHCHECK answers for a weir serving HTTPS (http.tls), and with client_ca_file by its TLS handshake or a client certificate', {
  timeout: 120_000,
}, async () => {
  const certs = certificates();
  const app = imageApp();
  copyFileSync(certs.certfile, join(app, 'server.crt'));
  copyFileSync(certs.keyfile, join(app, 'server.key'));
  copyFileSync(certs.cafile, join(app, 'clients-ca.crt'));
  const tls = 'http:\n  host: 127.0.0.1\n  port: {{HTTP_PORT}}\n  tls:\n    cert_file: server.crt\n    key_file: server.key\n';
  {
    const { weir, env } = await weirInImage(app, tls, (port) => httpsHealthz(port));
    const up = await probe(app, env);
    assert.deepEqual(up, { code: 0, out: `healthy: https://127.0.0.1:${weir.httpPort}/healthz: 200` });
    await stopped(weir);
    assert.equal((await probe(app, env)).code, 1);
  }
  {
    const { weir, env } = await weirInImage(app, `${tls}    client_ca_file: clients-ca.crt\n`, (port) =>
      httpsHealthz(port, { cert: readFileSync(certs.clientCertfile), key: readFileSync(certs.clientKeyfile) }),
    );
    const handshake = await probe(app, env);
    assert.equal(handshake.code, 0, handshake.out);
    assert.match(handshake.out, /^healthy: https:\/\/127\.0\.0\.1:\d+\/healthz: TLS handshake completed/);
    const withCert = await probe(app, env, ['--cert', certs.clientCertfile, '--key', certs.clientKeyfile]);
    assert.deepEqual(withCert, { code: 0, out: `healthy: https://127.0.0.1:${weir.httpPort}/healthz: 200` });
    // A client certificate of another CA: the handshake fails, and so does the probe.
    const other = certificates();
    const refused = await probe(app, env, ['--cert', other.clientCertfile, '--key', other.clientKeyfile]);
    assert.equal(refused.code, 1, refused.out);
    await stopped(weir);
    assert.equal((await probe(app, env)).code, 1);
  }
});

/** GET /healthz over HTTPS (weir's certificate not verified), optionally with a client certificate: whether it answered 200. */
function httpsHealthz(port: number, client: { cert?: Buffer; key?: Buffer } = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpsGetRaw({ host: '127.0.0.1', port, path: '/healthz', agent: false, rejectUnauthorized: false, timeout: 5_000, ...client }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(false));
  });
}

test("docker-compose.yml's weir replicas run the image's HEALTHCHECK on the config their command names", () => {
  const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, { build?: unknown; command?: string[]; healthcheck?: { test: string[] } }>;
  };
  const replicas = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
  assert.ok(replicas.length >= 2);
  for (const [name, s] of replicas) {
    const config = s.command![s.command!.indexOf('--config') + 1]!;
    assert.deepEqual(s.healthcheck?.test, ['CMD', ...healthcheck().cmd, '--config', config], `${name}: the image's HEALTHCHECK with --config ${config}`);
  }
});

test('weir demo without its packages (a production install) names them and the command that installs them', () => {
  const err = Object.assign(new Error("Cannot find package 'aedes' imported from /app/dist/embedded/broker.js"), { code: 'ERR_MODULE_NOT_FOUND' });
  const e = demoPackagesMissing(err);
  assert.equal(e?.code, 'demo.packages_missing');
  assert.match(e.message, /\(aedes is missing\)/);
  assert.equal(
    demoPackagesMissing(Object.assign(new Error("Cannot find package 'pg' imported from x"), { code: 'ERR_MODULE_NOT_FOUND' })),
    undefined,
    'another package: not this error',
  );
});

test("weir health reads only weir.yaml's http section, as weir run would: interpolated and defaulted; a problem elsewhere is not the probe's", () => {
  const dir = tempDir('health-config');
  const file = join(dir, 'weir.yaml');
  writeFileSync(
    file,
    'broker:\n  url: ${NOT_SET_FOR_THE_PROBE}\nsinks:\n  db: { type: postgres, url: "${ALSO_NOT_SET}" }\nhttp:\n  port: ${WEIR_HTTP_PORT:-9464}\n',
  );
  assert.deepEqual(httpSection(file, {}), { host: '0.0.0.0', port: 9464 });
  assert.deepEqual(httpSection(file, { WEIR_HTTP_PORT: '9500' }), { host: '0.0.0.0', port: 9500 });
  writeFileSync(file, 'broker:\n  url: mqtt://127.0.0.1:1\n');
  assert.deepEqual(httpSection(file, {}), { host: '0.0.0.0', port: 9464 }, 'no http section: the defaults weir run listens on');
  writeFileSync(file, 'http:\n  port: ${PORT_UNSET}\n  tls: { cert_file: a.crt, key_file: a.key }\n');
  assert.match(String(httpSection(file, {})), /weir\.yaml:2:9: environment variable PORT_UNSET is not set/);
  assert.match(String(httpSection(join(dir, 'missing.yaml'), {})), /^cannot read .*missing\.yaml: ENOENT/);
});
