// A preload for the weir under measurement (BENCH_NODE_ARGS="--import ./bench/memory-probe.mjs",
// with BENCH_MEMORY_PROBE=<dir>): samples process.memoryUsage() and V8's heap spaces every 100 ms
// and, when weir exits, writes <dir>/memory-<pid>.json — the peak of each figure, and the samples
// taken at the peak RSS and at the end. Plain JS, so it loads into compiled weir without tsx.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';

const dir = process.env.BENCH_MEMORY_PROBE;
if (dir) {
  const mb = (n) => Math.round((n / 2 ** 20) * 10) / 10;
  const sample = () => {
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: mb(s.space_size), used: mb(s.space_used_size) }]));
    return {
      t: Date.now(),
      rss: mb(m.rss),
      heapTotal: mb(m.heapTotal),
      heapUsed: mb(m.heapUsed),
      external: mb(m.external),
      arrayBuffers: mb(m.arrayBuffers),
      spaces,
    };
  };
  const peak = {};
  let atPeakRss;
  let first;
  let last;
  const timer = setInterval(() => {
    const s = sample();
    first ??= s;
    last = s;
    for (const k of ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers']) peak[k] = Math.max(peak[k] ?? 0, s[k]);
    for (const [name, sp] of Object.entries(s.spaces)) peak[`${name}.size`] = Math.max(peak[`${name}.size`] ?? 0, sp.size);
    if (!atPeakRss || s.rss >= atPeakRss.rss) atPeakRss = s;
  }, 100);
  timer.unref();
  process.on('exit', () => {
    writeFileSync(
      join(dir, `memory-${process.pid}.json`),
      `${JSON.stringify({ pid: process.pid, execArgv: process.execArgv, heap_statistics: v8.getHeapStatistics(), peak, atPeakRss, first, last }, null, 1)}\n`,
    );
  });
}
