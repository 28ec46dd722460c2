// Where the Docker image writes its dead letters and which node flags it runs weir with, checked
// without a Docker engine (none runs where weir is developed): the Dockerfile is read as text, and
// the configs the image and the compose replicas run go through weir's own loader with the
// environment the container would have.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { test } from 'node:test';
import { loadConfig, type WeirConfig } from '../src/config/load.js';
import { besideConfig, deadLetterPlace } from '../src/core/dead-letter-place.js';
import { ROOT, shippedNodeFlags } from './harness/weir.js';

interface Instruction {
  op: string;
  args: string;
}

/** The runtime stage (after the last FROM): its instructions, continuation lines joined, comments dropped. */
function runtimeStage(): Instruction[] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const all = text
    .split('\n')
    .map((l) => /^\s*([A-Z]+)\s+(.*)$/.exec(l))
    .filter((m) => m !== null)
    .map((m) => ({ op: m[1]!, args: m[2]!.trim() }));
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
function youngGenerationMb(argv: string[]): number {
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
    return Number(execFileSync(argv[0]!, [...argv.slice(1), probe], { encoding: 'utf8' }).trim());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("bin/weir.js's shebang and the image's ENTRYPOINT run node with the same V8 flags, which this node accepts and which cap the young generation", () => {
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
  // As the kernel runs the shebang: /usr/bin/env with the rest of the line as one argument.
  const shebang = readFileSync(join(ROOT, 'bin/weir.js'), 'utf8').split('\n', 1)[0]!;
  const shipped = youngGenerationMb(['/usr/bin/env', shebang.slice('#!/usr/bin/env '.length)]);
  const plain = youngGenerationMb([process.execPath]);
  const cap = Number(flags.find((f) => f.startsWith('--max-semi-space-size='))!.split('=')[1]);
  assert.ok(shipped <= 2 * cap + 1, `young generation ${shipped} MB with the shipped flags: at most two ${cap} MB semi-spaces`);
  assert.ok(plain > shipped, `and smaller than Node's default (${plain} MB)`);
});
