#!/usr/bin/env node
// The test command (`npm test`, called by .ci/run): starts each real service the selected test
// files use once for the whole run (Mosquitto, PostgreSQL, Kafka, Pulsar, HiveMQ, each by its harness in
// test/harness/), passes their addresses to the tests in WEIR_TEST_<NAME>, runs the files with
// node's test runner one at a time (2 cores: parallel files would measure each other), and stops
// the services. `npm test -- test/foo.test.ts test/core …` runs only those files (a directory: its
// *.test.ts files).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';

const root = new URL('..', import.meta.url).pathname;
const SERVICES = [
  { name: 'mosquitto', uses: 'sharedMosquitto(' },
  { name: 'postgres', uses: 'sharedPostgres(' },
  { name: 'kafka', uses: 'sharedKafka(' },
  { name: 'pulsar', uses: 'sharedPulsar(' },
  { name: 'hivemq', uses: 'sharedHivemq(' },
];

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}

/** A command-line argument's test files: the file, or every *.test.ts under a directory. */
function testsOf(arg) {
  const p = join(process.cwd(), arg);
  if (!existsSync(p)) {
    process.stderr.write(`npm test: ${arg}: no such file or directory\n`);
    process.exit(2);
  }
  return statSync(p).isDirectory() ? findTests(p) : [p];
}

const args = process.argv.slice(2);
const files = (args.length ? args.flatMap(testsOf) : findTests(join(root, 'test'))).map((f) => relative(root, f));
/**
 * A test file's text and that of the test helpers it imports (relative imports under test/, one
 * level deep): a suite whose per-sink adapters call sharedKafka() and the like needs those
 * services started too.
 */
function sourceOf(file) {
  const text = readFileSync(join(root, file), 'utf8');
  const helpers = [...text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)]
    .map((m) => join(dirname(join(root, file)), `${m[1]}.ts`))
    .filter((p) => p.startsWith(join(root, 'test')) && existsSync(p));
  return [text, ...helpers.map((p) => readFileSync(p, 'utf8'))].join('\n');
}
const sources = files.map(sourceOf).join('\n');
const needed = SERVICES.filter((s) => sources.includes(s.uses) && !process.env[`WEIR_TEST_${s.name.toUpperCase()}`]);

/** Starts a harness as a child; resolves with the JSON line it prints once the service is ready. */
function startHarness(name) {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test/harness', `${name}.ts`)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', (line) => {
      process.stdout.write(`# ${name} ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${line}\n`);
      resolve({ name, child, info: line.trim() });
    });
    child.once('exit', (code) => reject(new Error(`${name} harness exited with ${code} before it was ready`)));
  });
}

const children = [];
const stopAll = async () => {
  await Promise.all(
    children.map(
      (c) =>
        new Promise((resolve) => {
          if (c.exitCode !== null) return resolve();
          c.once('exit', resolve);
          c.kill('SIGTERM');
          setTimeout(() => c.kill('SIGKILL'), 30_000).unref();
        }),
    ),
  );
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
process.once('SIGTERM', () => void stopAll().then(() => process.exit(143)));

let code = 1;
try {
  const results = await Promise.allSettled(needed.map((s) => startHarness(s.name)));
  for (const r of results) {
    if (r.status === 'fulfilled') {
      children.push(r.value.child);
      process.env[`WEIR_TEST_${r.value.name.toUpperCase()}`] = r.value.info;
    }
  }
  const failed = results.filter((r) => r.status === 'rejected');
  if (failed.length) {
    for (const f of failed) process.stderr.write(`service failed to start: ${f.reason?.message ?? f.reason}\n`);
    throw new Error('a service the tests need did not start');
  }
  process.stdout.write(`# running ${files.length} test file(s)\n`);
  code = await new Promise((resolve) => {
    const t = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files], { cwd: root, stdio: 'inherit' });
    t.once('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0)));
  });
} catch (err) {
  process.stderr.write(`${err?.stack ?? err}\n`);
  code = 1;
} finally {
  await stopAll();
}
process.exit(code);
