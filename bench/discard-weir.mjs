// weir with a bench-only sink that discards after encoding, for bench/standalone.ts's case (a):
//
//   node bench/discard-weir.mjs <weir.yaml>
//
// It loads weir.yaml and the rules as `weir run` does and runs weir's own Runtime from dist/ (the
// compiled code production runs), with every `postgres` sink replaced by BENCH_DISCARD: the rule's
// action is bound by the real PostgreSQL sink, so each output is encoded into its row exactly as
// in production, and then the batch is dropped instead of inserted. The type exists only in this
// process: weir itself has no sink that loses data. Dead letters are dropped too; weir's metrics
// count them (the benchmark checks there are none). SIGTERM stops it as `weir run` stops.
// Plain JS, not TypeScript: run through tsx, weir's process would carry tsx and esbuild's loader
// (75 MB more RSS at idle, measured), which is not weir's.
import { loadConfig } from '../dist/config/load.js';
import { Runtime } from '../dist/core/app/runtime.js';
import { createLogger } from '../dist/log.js';
import { BENCH_DISCARD } from './discard-sink.mjs';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/discard-weir.mjs <weir.yaml>\n');
  process.exit(2);
}
const loaded = loadConfig(file);
const sinks = new Map([...loaded.sinks].map(([name, sc]) => [name, sc.sinkType.type === 'postgres' ? { ...sc, sinkType: BENCH_DISCARD } : sc]));
const log = createLogger(process.env.WEIR_LOG_LEVEL ?? loaded.logLevel);
const runtime = new Runtime({ ...loaded, sinks }, log);
await runtime.start();
process.once('SIGTERM', () => {
  void runtime.stop({ graceMs: 5_000 }).then(() => process.exit(0));
});
