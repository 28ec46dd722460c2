// A preload for the weir under measurement that counts the bytes it allocates, and promotes, per
// message (BENCH_NODE_ARGS="--import $PWD/bench/alloc-probe.mjs" ALLOC_PROBE_OUT=<file> npm run
// bench -- standalone). Why it matters: how often young-generation scavenges come is set by the
// bytes weir allocates per message, garbage included; what survives two of them is promoted and
// fills the old space until a mark-compact (docs/benchmarks.md, memory section).
//
// V8's GCProfiler reports the heap before and after each collection, so the bytes allocated
// between two collections are `used before this one - used after the previous one`; the bytes a
// scavenge promoted are the old space's growth across it. The profiler is restarted every 500 ms
// so each interval is known apart: the load is every interval after the first quiet second that
// follows start-up (the benchmark lets weir sit idle after subscribing), divided by the messages
// the benchmark sends (STANDALONE_WARMUP + STANDALONE_ROUNDS × STANDALONE_MESSAGES, its defaults).
// At exit one JSON line is appended to ALLOC_PROBE_OUT. Plain JS, so it loads into compiled weir.
import { appendFileSync } from 'node:fs';
import v8 from 'node:v8';

const out = process.env.ALLOC_PROBE_OUT;
if (out) {
  const QUIET_BYTES_PER_S = 2 * 2 ** 20;
  const INTERVAL_MS = 500;
  const used = () => v8.getHeapStatistics().used_heap_size;
  const oldSpace = (stats) => stats.heapSpaceStatistics.find((s) => s.spaceName === 'old_space')?.spaceUsedSize ?? 0;
  const intervals = [];
  let profiler;
  let startUsed = 0;
  const begin = () => {
    profiler = new v8.GCProfiler();
    profiler.start();
    startUsed = used();
  };
  const end = () => {
    const data = profiler.stop();
    const nowUsed = used();
    let allocated = 0;
    let promoted = 0;
    let scavenges = 0;
    let markCompacts = 0;
    let gcUs = 0;
    let last = startUsed;
    for (const g of data?.statistics ?? []) {
      allocated += Math.max(0, g.beforeGC.heapStatistics.usedHeapSize - last);
      last = g.afterGC.heapStatistics.usedHeapSize;
      gcUs += g.cost;
      if (g.gcType === 'Scavenge' || g.gcType === 'MinorMarkCompact') {
        scavenges++;
        promoted += Math.max(0, oldSpace(g.afterGC) - oldSpace(g.beforeGC));
      } else if (g.gcType === 'MarkSweepCompact') markCompacts++;
    }
    allocated += Math.max(0, nowUsed - last);
    intervals.push({ allocated, promoted, scavenges, markCompacts, gcUs });
  };
  begin();
  const timer = setInterval(() => {
    end();
    begin();
  }, INTERVAL_MS);
  timer.unref();
  process.on('exit', () => {
    end();
    // Skip start-up: everything up to the end of the first quiet second.
    const quiet = (i) => i.allocated < (QUIET_BYTES_PER_S * INTERVAL_MS) / 1000;
    let from = intervals.findIndex((i, k) => k > 0 && quiet(i) && quiet(intervals[k - 1]));
    if (from < 0) from = intervals.length;
    const load = intervals.slice(from + 1);
    const sum = (f) => load.reduce((a, i) => a + i[f], 0);
    const env = (name, d) => Number(process.env[name] ?? d);
    const messages = env('STANDALONE_WARMUP', 100_000) + env('STANDALONE_ROUNDS', 3) * env('STANDALONE_MESSAGES', 400_000);
    const per = (n) => Math.round(n / messages);
    appendFileSync(
      out,
      `${JSON.stringify({
        pid: process.pid,
        argv: process.argv.slice(2).join(' '),
        execArgv: process.execArgv.filter((a) => !a.includes('probe')).join(' '),
        messages,
        allocated_bytes_per_msg: per(sum('allocated')),
        promoted_bytes_per_msg: per(sum('promoted')),
        scavenges: sum('scavenges'),
        mark_compacts: sum('markCompacts'),
        gc_us_per_msg: Math.round((sum('gcUs') / messages) * 100) / 100,
        load_seconds: (load.length * INTERVAL_MS) / 1000,
      })}\n`,
    );
  });
}
