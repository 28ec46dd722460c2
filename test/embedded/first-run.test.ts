// The README's first command, run as a user runs it: `npm run demo` in a fresh process group, rows
// stored within 60 s, the console at the address it prints, then Ctrl-C (SIGINT to the group) and a
// clean exit. Needs no service: the demo brings its own broker and database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawnDemo } from './demo-process.js';

test('npm run demo: rows stored within 60 s, Ctrl-C stops it cleanly', { timeout: 120_000 }, async () => {
  const started = Date.now();
  const demo = spawnDemo('npm', ['run', 'demo', '--', '--http-port', '0', '--devices', '20']);
  const { child, exited } = demo;
  let out = '';
  let err = '';
  const read = () => {
    out = demo.out();
    err = demo.err();
  };
  try {
    let stored = 0;
    let metricsUrl: string | undefined;
    while (Date.now() - started < 60_000) {
      read();
      metricsUrl ??= /metrics: (\S+)/.exec(out)?.[1];
      stored = Math.max(0, ...[...out.matchAll(/stored (\d+)/g)].map((m) => Number(m[1])));
      if (stored > 0 && metricsUrl) break;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(stored > 0, `no rows stored within 60 s\nstdout:\n${out}\nstderr:\n${err}`);
    process.stdout.write(`# first rows stored ${((Date.now() - started) / 1000).toFixed(1)} s after npm run demo\n`);
    // The /metrics it points at is live and counts what was stored.
    const metrics = await (await fetch(metricsUrl!)).text();
    const success = metrics
      .split('\n')
      .filter((l) => l.startsWith('weir_sink_success_total'))
      .reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    assert.ok(success > 0, `weir_sink_success_total is 0 at ${metricsUrl}`);
    // The console's address it prints is the page (built by npm ci's prepare, or npm run build).
    const consoleUrl = /console: (\S+)/.exec(out)?.[1];
    assert.equal(consoleUrl, metricsUrl!.replace(/metrics$/, ''), out);
    const page = await fetch(consoleUrl!);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script type="module" src="assets\/app\.js">/);
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
  }
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
  const { code, signal } = await exited;
  clearTimeout(timer);
  read();
  // npm mirrors a Ctrl-C it received by ending itself with SIGINT once its script has exited (a
  // shell shows 130); the demo's own clean exit is its stop summary and an empty process group.
  assert.ok(code === 0 || signal === 'SIGINT' || code === 130, `npm exited with ${code ?? signal}\nstderr:\n${err}`);
  assert.doesNotMatch(err, /error|failed/i);
  assert.throws(() => process.kill(-child.pid!, 0), { code: 'ESRCH' }, 'a process of the demo is still running');
  const summary = /stopped: (\d+) samples published, (\d+) rows/.exec(out);
  assert.ok(summary, `no stop summary\n${out}`);
  // Every sample the devices published before the stop was stored (acked after commit).
  assert.equal(Number(summary[2]), Number(summary[1]), out);
});
