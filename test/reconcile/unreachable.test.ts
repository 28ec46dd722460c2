// weir reconcile tells a count it could not read (exit 3, the URL named) from a real difference (exit 1).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { freePort, tempDir } from '../harness/process.js';
import { runCli, writeWeirFiles } from '../harness/weir.js';

test('an unreachable --metrics URL: exit 3, naming the URL and why', async () => {
  const config = 'broker:\n  url: mqtt://127.0.0.1:1\nsinks:\n  db:\n    type: postgres\n    url: postgres://weir@127.0.0.1:1/weir\n';
  const file = join(writeWeirFiles({ config, rules: {} }, 0, tempDir('reconcile')), 'weir.yaml');
  const url = `http://127.0.0.1:${await freePort()}/metrics`;
  const r = await runCli(['reconcile', '-c', file, '-m', url]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, new RegExp(`error: reading --metrics ${url.replace(/[.]/g, '\\.')}: connect ECONNREFUSED`));
  assert.doesNotMatch(r.stderr, /\n +at /);
});

test('weir reconcile --help documents exit 3', async () => {
  const r = await runCli(['reconcile', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /3 when nothing could be compared/);
});
