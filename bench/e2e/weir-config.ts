// weir under measurement: edits to a fixture's config, and the Node options it runs with (its
// files for a message-sink benchmark: messageSinkFiles in test/e2e/fixtures.ts).
import { shippedNodeFlags } from '../../test/harness/weir.js';

/**
 * `text` with `from` replaced by `to`; throws when `from` is not there, so a benchmark's config
 * edit cannot silently stop applying when the fixture it edits changes.
 */
export function replaceOnce(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`bench config edit: ${JSON.stringify(from)} not found in the fixture`);
  return text.replace(from, to);
}

/**
 * Node options for the weir under measurement: the V8 flags weir ships with (bin/weir.js's first
 * line; BENCH_SHIPPED_FLAGS=0 leaves them out, to measure Node's defaults); BENCH_CPU_PROF=<dir>
 * writes a V8 CPU profile of weir there when it exits (open it in Chrome DevTools, or summarise it
 * with bench/profile.ts); BENCH_NODE_ARGS adds any other (space-separated; V8 takes the last of a
 * flag given twice), to try V8 flags.
 */
export function weirNodeArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return [
    ...(process.env.BENCH_SHIPPED_FLAGS === '0' ? [] : shippedNodeFlags()),
    ...(dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  ];
}
