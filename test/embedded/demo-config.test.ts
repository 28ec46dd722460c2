// The demo's printed config is a weir.yaml like any other: with the demo running, `weir check`,
// `weir dlq list` and `weir reconcile` run on it from anywhere (its rules_dir is absolute, not
// relative to the temporary directory it is written in). And a busy --http-port is named, with
// how to choose another, instead of a bare EADDRINUSE.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { test } from 'node:test';
import { runCli } from '../harness/weir.js';
import { spawnDemo } from './demo-process.js';

/** The demo from source with `args`; stopped by SIGINT to its process group when `use` is done. */
async function withDemo(
  args: string[],
  use: (demo: ReturnType<typeof spawnDemo>) => Promise<void>,
): Promise<{ code: number | null; out: string; err: string }> {
  const demo = spawnDemo(process.execPath, ['--import', 'tsx', 'src/cli/demo.ts', ...args]);
  try {
    await use(demo);
  } finally {
    if (demo.child.exitCode === null) process.kill(-demo.child.pid!, 'SIGINT');
  }
  const timer = setTimeout(() => process.kill(-demo.child.pid!, 'SIGKILL'), 30_000);
  const { code } = await demo.exited;
  clearTimeout(timer);
  return { code, out: demo.out(), err: demo.err() };
}

test('weir check, dlq list and reconcile pass on the config the demo prints, run from another directory', { timeout: 180_000 }, async () => {
  const end = await withDemo(['--http-port', '0', '--devices', '5'], async (demo) => {
    const show = () => `\nstdout:\n${demo.out()}\nstderr:\n${demo.err()}`;
    for (const until = Date.now() + 90_000; !/stored [1-9]/.test(demo.out()); await new Promise((r) => setTimeout(r, 250))) {
      assert.ok(Date.now() < until, `no rows stored within 90 s${show()}`);
      assert.equal(demo.child.exitCode, null, `the demo exited${show()}`);
    }
    const file = /^config: (\S+) \(from /m.exec(demo.out())?.[1];
    assert.ok(file, `the demo prints its config${show()}`);
    // From another working directory, as a user in another terminal would.
    const [check, dlq, reconcile] = await Promise.all([
      runCli(['check', '-c', file], {}, tmpdir()),
      runCli(['dlq', 'list', '-c', file], {}, tmpdir()),
      runCli(['reconcile', '-c', file], {}, tmpdir()),
    ]);
    assert.equal(check.code, 0, `weir check -c ${file}: ${check.stdout}${check.stderr}`);
    assert.equal(dlq.code, 0, `weir dlq list -c ${file}: ${dlq.stdout}${dlq.stderr}`);
    assert.match(dlq.stdout, /^no dead letters match in /);
    assert.equal(reconcile.code, 0, `weir reconcile -c ${file}: ${reconcile.stdout}${reconcile.stderr}`);
    assert.match(reconcile.stdout, /reconciled: every difference is 0\n/);
  });
  assert.equal(end.code, 0, end.err);
});

test('a busy --http-port: the demo names the port and how to choose another, exit 1', { timeout: 180_000 }, async () => {
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = (busy.address() as { port: number }).port;
  try {
    const end = await withDemo(['--http-port', String(port), '--devices', '1'], async (demo) => {
      await demo.exited;
    });
    assert.equal(end.code, 1, `${end.out}${end.err}`);
    assert.equal(
      end.err,
      `error: port ${port} (the demo's /metrics, /healthz, /readyz) is in use by another process: choose another with --http-port N (0 picks a free one)\n`,
    );
  } finally {
    busy.close();
  }
});
