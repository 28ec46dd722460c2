// The load publisher's command line: --help prints the usage (-h is the host, as in emqtt-bench),
// an unknown option is a usage error, not a stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../harness/weir.js';

function publisher(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'test/harness/load/publisher.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

test('--help prints the usage and exits 0', () => {
  const r = publisher('--help');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^usage: node --import tsx test\/harness\/load\/publisher\.ts/);
  assert.match(r.stdout, /-h, --host URL/);
});

test('an unknown option: the reason and the usage, exit 2', () => {
  const r = publisher('--nope');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /Unknown option '--nope'/);
  assert.match(r.stderr, /usage:/);
  assert.doesNotMatch(r.stderr, /\n +at /);
});
